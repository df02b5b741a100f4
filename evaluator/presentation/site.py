"""The leaderboard site: static pages rendered from saved results documents alone.

`build_site(folders, out)` reads the results documents of report folders (`mathbode score --out`)
and writes a site that works from `file://` and any static host, with nothing fetched at view
time: every page's data is embedded in it, and its one JavaScript library, plotly.js, is copied
from the `plotly` package into `assets/`. Pages: the leaderboard (grouped by conditions, ranked
within a group, ties shown), one per submission (with its multi-tone BLA and two-tone plots when it
has a multi-tone reading), one per family, and one drill-down per
submission with the answers of each of its mid-band, chirp and step sweeps; each results
document and CSV is downloadable.
"""

from __future__ import annotations

import cmath
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final, Mapping, Sequence

import plotly
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape
from plotly.offline import get_plotlyjs

from mathbode.core.atomic import atomic_folder, check_replaceable
from mathbode.core.errors import UsageError
from mathbode.core.names import check_inside, file_name
from mathbode.core.version import __version__
from mathbode.schema.layout import layout

from ..ranking import conditions_label, groups, unranked
from ..results import Results, from_document
from .comparison import describe
from .files import (
    FAMILY_COLUMNS,
    LEADERBOARD_FILE,
    RESULTS_FILE,
    SCORES_FILE,
    table_files,
    write_tables,
)
from .report import (
    STATELESS_MULTITONE,
    answers_text,
    brackets,
    compliance_note,
    conditions_notes,
    coverage_notes,
    detected_text,
    diagnostics_lines,
    evidence_lines,
    family_noise_text,
    interval_notes,
    interval_text,
    leaderboard,
    memory_text,
    multitone_table,
    na_notes,
    pooled_headline,
    provenance_lines,
    repeatability_text,
    saved_documents,
    variants_table,
)
from .text import value_text as _num

#: Gains below this are not drawn on the log axis (as in the report's Bode plot).
GAIN_FLOOR = 1e-3
PLOTLY_FILE = "plotly.min.js"


@dataclass
class _Entry:
    """One submission on the site: its results, its page's name and the folder it came from."""

    results: Results
    slug: str
    document: dict[str, Any]
    tests: list[dict[str, Any]]
    #: The results document's text as saved (the download: the same bytes).
    text: bytes


def _slug(text: str, taken: set[str]) -> str:
    """A submission's page and download folder name: `core.names.file_name` of its label (safe,
    bounded, injective), and for a label shown twice (two report folders each scored one of that
    name) the same made from the label and its place, so neither page is lost."""
    slug, n = file_name(text), 1
    while slug in taken:
        n += 1
        slug = file_name(f"{text}\x00{n}")
    taken.add(slug)
    return slug


def _value(x: Any) -> Any:
    """A cell's sort value (None: sorts as missing)."""
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def _number_td(text: str, value: Any) -> str:
    shown = _value(value)
    return (
        f'<td data-value="{shown}" class="num">{escape(text)}</td>' if shown is not None else f"<td>{escape(text)}</td>"
    )


def _cell(text: str, value: Any = None, href: str | None = None, numeric: bool = False) -> dict[str, Any]:
    return {"text": text, "value": _value(value), "href": href, "numeric": numeric}


def ranks(members: list[Results]) -> list[tuple[int, bool]]:
    """(rank, tied) per submission of a ranked group: 1 + the number whose MB-Core interval lies
    wholly above this one's (no intervals: whose MB-Core is higher); tied when another shares it."""

    def bounds(r: Results) -> tuple[float, float]:
        core = r.overall.get("mb_core", math.nan)
        core = core if core == core else -math.inf
        found = (r.extra.get("intervals", {}).get("overall") or {}).get("mb_core")
        return (found[0], found[1]) if found else (core, core)

    limits = [bounds(r) for r in members]
    out = [1 + sum(1 for low, _ in limits if low > high) for _, high in limits]
    return [(rank, out.count(rank) > 1) for rank in out]


def script_json(value: Any) -> str:
    """JSON to embed in a <script type="application/json"> element: every `<` escaped (JSON allows
    \\u003c), so no text in it ("</script>", "<!--") can end the element."""
    return json.dumps(value, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


def plain(text: str) -> str:
    """`text` as plotly shows it literally: plotly reads a subset of HTML in trace names (`<a href>`,
    `<b>`, `<br>`) and decodes entities, so `&`, `<` and `>` are written as entities."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plot(
    pid: str,
    caption: str,
    alt: str,
    data: list[dict[str, Any]],
    layout: dict[str, Any],
    toggle: dict[str, Any] | None = None,
) -> dict[str, Any]:
    base = {
        "margin": {"t": 10, "r": 10, "l": 60, "b": 50},
        # Above the plot, where it cannot cover the axis title, however many entries wrap on a phone.
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"},
        "hovermode": "closest",
    }
    # Every axis: plain tick labels (plotly's default SI prefixes read a phase of 4e-13 degrees as
    # "400f"), and room for its tick labels made before its title is placed (automargin), so a
    # title never sits on wide labels such as "0.9998".
    axes = {k: {"exponentformat": "none", "automargin": True, **v} for k, v in layout.items() if k[1:5] == "axis"}
    spec = {"data": data, "layout": {**base, **layout, **axes}}
    text = script_json(spec)
    return {"id": pid, "caption": caption, "alt": alt, "json": text, "toggle": toggle}


def _finite(values: Any) -> list[float | None]:
    return [float(v) if v is not None and math.isfinite(float(v)) else None for v in values]


def _bars(rows: Any, value: str, low: str, high: str) -> dict[str, Any] | None:
    if low not in rows:
        return None
    y, lo, hi = (rows[c].astype(float) for c in (value, low, high))
    above = [max(0.0, h - v) if math.isfinite(h - v) else 0.0 for v, h in zip(y, hi, strict=True)]
    below = [max(0.0, v - low_) if math.isfinite(v - low_) else 0.0 for v, low_ in zip(y, lo, strict=True)]
    return {"type": "data", "symmetric": False, "array": above, "arrayminus": below, "visible": True}


def _ideal(y: float) -> dict[str, Any]:
    """The ideal value (gain 1, phase error 0) as a dashed line across the plot."""
    line = {"color": "grey", "dash": "dash", "width": 1}
    return {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": y, "y1": y, "line": line}


Traces = list[dict[str, Any]]


def _drawn(traces: Traces) -> list[float]:
    """Every value the traces draw: each point and each end of its error bar."""
    values: list[float] = []
    for t in traces:
        ys = t.get("y") or []
        bars = t.get("error_y") or {}
        above = bars.get("array") or [0.0] * len(ys)
        below = bars.get("arrayminus") or above
        for y, a, b in zip(ys, above, below, strict=True):
            if y is not None and math.isfinite(y):
                values += [y, y + (a or 0.0), y - (b or 0.0)]
    return values


def _span(traces: Traces, ideal: float, half_span: float) -> list[float]:
    """A linear axis' range from what the traces draw, never narrower than ideal +- half_span (as the
    report's figures): the exact answers' phase of 1e-13 degrees is rounding, not a curve to fill the
    plot with."""
    values = _drawn(traces)
    lo, hi = min([ideal - half_span, *values]), max([ideal + half_span, *values])
    pad = 0.08 * (hi - lo)
    return [lo - pad, hi + pad]


def _log_span(traces: Traces) -> list[float]:
    """A log gain axis' range (log10 units) as the report's Bode figure draws it: at least 0.8 to
    1.25, with a margin of 1.3 times either way."""
    values = [v for v in _drawn(traces) if v > 0]
    lo, hi = min([0.8, *values]) / 1.3, max([1.25, *values]) * 1.3
    return [math.log10(lo), math.log10(hi)]


#: plotly.js's default colours, set on each curve so a fitted overlay wears its measured curve's.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: The overlays a Bode plot can show (the toggle's values) and their names.
OVERLAYS = {"delay": "fitted delay", "low-pass": "fitted low-pass"}
_OVERLAY_POINTS = 60


def _fitted(d: Mapping[str, Any], kind: str, low: float, high: float) -> tuple[list[float], list[complex]]:
    """The fitted model's response on a log grid over the measured frequencies."""
    x = [low * (high / low) ** (i / (_OVERLAY_POINTS - 1)) for i in range(_OVERLAY_POINTS)]
    if kind == "delay":
        return x, [cmath.exp(-2j * math.pi * f * d["delay_steps"] / layout().time_steps) for f in x]
    a = d["low_pass_a"]
    return x, [a / (1 - (1 - a) * cmath.exp(-2j * math.pi * f / layout().time_steps)) for f in x]


def _with_gaps(x: list[float], phases: list[float]) -> tuple[list[float | None], list[float | None]]:
    """Phases in [-180, 180), broken (a null point) where the curve wraps, so no line crosses the plot."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for i, (f, p) in enumerate(zip(x, phases, strict=True)):
        if i and abs(p - phases[i - 1]) > 180:
            xs.append(None)
            ys.append(None)
        xs.append(f)
        ys.append(round(p, 4))
    return xs, ys


def _overlay_traces(name: str, d: Mapping[str, Any], color: str, frequencies: list[float]) -> tuple[Traces, Traces]:
    """Gain and phase traces of the family's fitted delay and low-pass, hidden until toggled on."""
    gain: Traces = []
    phase: Traces = []
    if "delay_steps" not in d or len(frequencies) < 2:
        return gain, phase
    low, high = min(frequencies), max(frequencies)
    for kind, label in OVERLAYS.items():
        x, h = _fitted(d, kind, low, high)
        degrees = [(math.degrees(cmath.phase(v)) + 180) % 360 - 180 for v in h]
        phase_x, phase_y = _with_gaps(x, degrees)
        said = (
            f"{d['delay_steps']:.2f} steps"
            if kind == "delay"
            else f"a = {d['low_pass_a']:.3f}, time constant {d['time_constant_steps']:.2f} steps"
        )
        trace = {
            "name": plain(f"{name}: {label} ({said})"),
            "type": "scatter",
            "mode": "lines",
            "line": {"color": color, "dash": "dash" if kind == "delay" else "dot", "width": 1.5},
            "visible": False,
            "meta": kind,
            "hovertemplate": "%{fullData.name}<br>%{x:.2f} cycles: %{y:.4f}<extra></extra>",
        }
        gain.append({**trace, "x": x, "y": [round(abs(v), 6) for v in h]})
        phase.append({**trace, "x": phase_x, "y": phase_y})
    return gain, phase


def bode_plots(curves: list[tuple[str, Results, str]], pid: str) -> list[dict[str, Any]]:
    """Gain (log axis) and phase error against frequency, a curve per (name, results, family),
    with the 95 % intervals as error bars when computed; hovering a point shows its values. A
    sequential curve's fitted delay and low-pass can be overlaid (hidden until toggled on)."""
    gain, phase, frequencies = [], [], set()
    fitted_gain, fitted_phase = [], []
    for i, (name, r, family) in enumerate(curves):
        rows = r.summary[r.summary["family"] == family]
        x = rows["frequency_cycles"].astype(float).tolist()
        frequencies.update(x)
        g = rows["gain"].astype(float)
        shown = [v if v is not None and v >= GAIN_FLOOR else None for v in _finite(g)]
        p = [v if s is not None else None for v, s in zip(_finite(rows["phase_err_deg"]), shown, strict=True)]
        hover = "%{fullData.name}<br>%{x:g} cycles: %{y:.4f}<extra></extra>"
        color = PALETTE[i % len(PALETTE)]
        trace = {
            "x": x,
            "name": plain(name),
            "type": "scatter",
            "mode": "lines+markers",
            "hovertemplate": hover,
            "line": {"color": color},
            "marker": {"color": color},
        }
        gain.append({**trace, "y": shown, "error_y": _bars(rows, "gain", "gain_low", "gain_high")})
        phase.append(
            {**trace, "y": p, "error_y": _bars(rows, "phase_err_deg", "phase_err_low_deg", "phase_err_high_deg")}
        )
        found: Mapping[str, Any] = r.extra.get("dynamics", {}).get(family) or {}
        more_gain, more_phase = _overlay_traces(name, found, color, x)
        fitted_gain += more_gain
        fitted_phase += more_phase
    ticks = sorted(frequencies)
    xaxis = {
        "type": "log",
        "tickvals": ticks,
        "ticktext": [f"{f:g}" for f in ticks],
        "title": {"text": "cycles per 64 steps"},
    }
    names = ", ".join(dict.fromkeys(name for name, _, _ in curves))
    gain_traces = [{k: v for k, v in t.items() if v is not None} for t in gain] + fitted_gain
    phase_traces = [{k: v for k, v in t.items() if v is not None} for t in phase] + fitted_phase
    toggle = (
        {
            "targets": f"{pid}-gain {pid}-phase",
            "name": f"{pid}-overlay",
            "options": [{"value": "", "text": "measured only"}]
            + [{"value": kind, "text": text} for kind, text in OVERLAYS.items()],
        }
        if fitted_gain
        else None
    )
    return [
        _plot(
            f"{pid}-gain",
            "Gain against frequency (log axis; 1 = tracks the drive fully), with 95 % intervals over sweeps when "
            "computed. The numbers are in the tables below."
            + (" Dashed: the fitted delay; dotted: the fitted low-pass (shown with the toggle)." if toggle else ""),
            f"Bode gain plot of {names}: gain against frequency on log axes",
            gain_traces,
            {
                "xaxis": xaxis,
                "yaxis": {
                    "type": "log",
                    "range": _log_span(gain_traces),
                    "title": {"text": "gain (model / truth swing)"},
                },
                "shapes": [_ideal(1.0)],
            },
            toggle,
        ),
        _plot(
            f"{pid}-phase",
            "Phase error against frequency (degrees; below 0 = lag), with 95 % intervals over sweeps when computed."
            + (" Dashed: the fitted delay; dotted: the fitted low-pass." if toggle else ""),
            f"Bode phase plot of {names}: phase error in degrees against frequency",
            phase_traces,
            {
                "xaxis": xaxis,
                "yaxis": {"range": _span(phase_traces, 0.0, 10.0), "title": {"text": "phase error (deg)"}},
                "shapes": [_ideal(0.0)],
            },
        ),
    ]


def _transient_plots(r: Results, pid: str) -> list[dict[str, Any]]:
    plots = []
    if r.step_curves:
        data = [
            {
                "x": list(range(-4, len(curve) - 4)),
                "y": _finite(curve),
                "name": plain(family),
                "type": "scatter",
                "mode": "lines+markers",
                "hovertemplate": "%{fullData.name}<br>step %{x}: %{y:.4f}<extra></extra>",
            }
            for family, curve in r.step_curves.items()
        ]
        plots.append(
            _plot(
                f"{pid}-step",
                "Step responses: the answers over the truth's jump (1 = the truth's new level), mean over sweeps, "
                "from 4 steps before the switch.",
                "Step response plot: normalised answer against steps after the switch, a curve per family",
                data,
                {
                    "xaxis": {"title": {"text": "steps after the switch"}},
                    "yaxis": {"title": {"text": "normalised answer"}},
                },
            )
        )
    if len(r.chirp):
        data = []
        for family in dict.fromkeys(r.chirp["family"].tolist()):
            rows = r.chirp[r.chirp["family"] == family]
            order = sorted(range(len(rows)), key=lambda i: rows["frequency_cycles"][i])
            data.append(
                {
                    "x": [float(rows["frequency_cycles"][i]) for i in order],
                    "y": _finite([rows["gain"][i] for i in order]),
                    "name": plain(str(family)),
                    "type": "scatter",
                    "mode": "markers",
                    "hovertemplate": "%{fullData.name}<br>%{x:.2f} cycles: gain %{y:.4f}<extra></extra>",
                }
            )
        plots.append(
            _plot(
                f"{pid}-chirp",
                "Chirp gain read in 16-step windows against the instantaneous frequency (every window of every chirp "
                "sweep).",
                "Chirp plot: gain against instantaneous frequency, points per family",
                data,
                {
                    "xaxis": {"type": "log", "title": {"text": "cycles per 64 steps"}},
                    "yaxis": {"range": _span(data, 1.0, 0.1), "title": {"text": "gain"}},
                },
            )
        )
    return plots


def _level(x: Any) -> float | None:
    """A multi-tone level or reading for a trace: None (drawn as nothing) for n/a, read back as NaN."""
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def _interval_bars(values: list[float | None], lows: list[float | None], highs: list[float | None]) -> dict[str, Any]:
    """Asymmetric error bars from an interval's ends; an end that is n/a draws no bar on its side."""
    above = [h - v if v is not None and h is not None else 0.0 for v, h in zip(values, highs, strict=True)]
    below = [v - low if v is not None and low is not None else 0.0 for v, low in zip(values, lows, strict=True)]
    return {"type": "data", "symmetric": False, "array": above, "arrayminus": below, "visible": True}


#: The multi-tone levels drawn at their lines under the BLA gain: (key, name, marker symbol), as the
#: report's figure tells them apart (multitone_figures.py).
_MT_LEVELS = (
    ("noise_db", "noise (spread across periods)", "x-thin-open"),
    ("stochastic_db", "stochastic distortion (spread across realizations)", "cross-thin-open"),
)
_MT_ADDED = (("even", "even added distortion", "square-open"), ("odd", "odd added distortion", "triangle-up-open"))
_MT_HOVER = "%{fullData.name}<br>line %{x}: %{y:.2f} dB<extra></extra>"


def _silent(m: Mapping[str, Any], key: str) -> bool:
    """The noise of a model that answered every period alike: exactly zero, so nothing to draw in dB."""
    return key == "noise_db" and m.get("periods_identical") is True


#: The BLA plot's three stacked axes (plotly domains): the gain, the phase, the levels in dB.
_BLA_DOMAINS = {"yaxis": [0.72, 1.0], "yaxis2": [0.43, 0.64], "yaxis3": [0.0, 0.35]}
#: The levels' axis reaches this far below the truncation floor (the report's figure does the same).
_BELOW_FLOOR_SHOWN_DB = 25.0


def _bla_plot(family: str, m: Mapping[str, Any], pid: str) -> dict[str, Any]:
    """One family's BLA as system identification draws it, on three axes: the gain (linear) and the
    phase at the excited lines, each with its 95 % interval (never narrower than 1 +- 0.05 and +-5
    degrees), then the levels in dB re the exact answers' mean level at the excited lines: noise and
    stochastic distortion there, the distortion the model adds at the even and odd detection lines,
    the noise measured at those lines and the truncation floor."""
    excited = [line for line in m["lines"] if line["kind"] == "excited"]
    intervals = m["bla_intervals"]
    x = [line["cycles"] for line in excited]
    gain = [_level(line["gain"]) for line in excited]
    gain_low = [_level(iv["gain_low"]) for iv in intervals]
    gain_high = [_level(iv["gain_high"]) for iv in intervals]
    phase = [_level(line["phase_deg"]) for line in excited]
    phase_low = [_level(iv["phase_low_deg"]) for iv in intervals]
    phase_high = [_level(iv["phase_high_deg"]) for iv in intervals]
    gain_trace = {
        "x": x,
        "y": gain,
        "name": plain("BLA gain"),
        "meta": "gain",
        "type": "scatter",
        "mode": "lines+markers",
        "line": {"color": PALETTE[0]},
        "error_y": _interval_bars(gain, gain_low, gain_high),
        "hovertemplate": "%{fullData.name}<br>line %{x}: %{y:.6f}<extra></extra>",
    }
    phase_trace = {
        "x": x,
        "y": phase,
        "name": plain("BLA phase (deg)"),
        "meta": "phase",
        "type": "scatter",
        "mode": "lines+markers",
        "yaxis": "y2",
        "line": {"color": PALETTE[0]},
        "showlegend": False,
        "error_y": _interval_bars(phase, phase_low, phase_high),
        "hovertemplate": "%{fullData.name}<br>line %{x}: %{y:.4f} deg<extra></extra>",
    }
    levels: Traces = []
    for i, (key, name, symbol) in enumerate(_MT_LEVELS):
        levels.append(
            {
                "x": [iv["cycles"] for iv in intervals],
                "y": [_level(iv[key]) for iv in intervals],
                "name": plain(f"{name}: none, every period answered alike" if _silent(m, key) else name),
                "meta": key,
                "type": "scatter",
                "mode": "markers",
                "marker": {"symbol": symbol, "size": 9, "color": PALETTE[1 + i]},
                "hovertemplate": _MT_HOVER,
            }
        )
    for i, (kind, name, symbol) in enumerate(_MT_ADDED):
        detect = [line for line in m["lines"] if line["kind"] == kind]
        levels.append(
            {
                "x": [line["cycles"] for line in detect],
                "y": [_level(line["added_db"]) for line in detect],
                "name": plain(name),
                "meta": f"{kind}_added_db",
                "type": "scatter",
                "mode": "markers",
                "marker": {"symbol": symbol, "size": 8, "color": PALETTE[3 + i]},
                "hovertemplate": _MT_HOVER,
            }
        )
    every = [line["cycles"] for line in m["lines"]]
    floor = _level(m["floor_db"])
    noise = _level((m.get("noise") or {}).get("level_db"))
    # Traces, not shapes: named in the legend and hoverable like the levels they bound.
    for value, meta, name, dash in (
        (noise, "noise_level_db", "measured noise (detection lines)", "dot"),
        (floor, "floor_db", "truncation floor (exact answers)", "dash"),
    ):
        if value is not None and every:
            levels.append(
                {
                    "x": [min(every), max(every)],
                    "y": [value, value],
                    "name": plain(name),
                    "meta": meta,
                    "type": "scatter",
                    "mode": "lines",
                    "line": {"color": "black" if dash == "dot" else "grey", "dash": dash, "width": 1},
                    "hovertemplate": "%{fullData.name}: %{y:.1f} dB<extra></extra>",
                }
            )
    for trace in levels:
        trace["yaxis"] = "y3"
    shown = [v for v in _drawn(levels) if floor is None or v >= floor - _BELOW_FLOOR_SHOWN_DB]
    bottom = (floor if floor is not None else min([0.0, *shown])) - _BELOW_FLOOR_SHOWN_DB
    ticks = sorted(set(every))
    xaxis = {"tickvals": ticks, "ticktext": [str(k) for k in ticks], "matches": "x3", "showticklabels": False}
    return _plot(
        pid,
        f"{family}: {m['verdict']}. Best linear approximation from the odd random-phase multisine (top: gain, "
        "middle: phase in degrees, each with 95 % intervals; bottom: the levels at each line in dB re the exact "
        f"answers' mean level at the excited lines, down to {_BELOW_FLOOR_SHOWN_DB:g} dB below the truncation "
        "floor). The numbers are in report.md and the results document.",
        f"Multi-tone plot of {family}: BLA gain and phase by line, and the distortion levels in dB",
        [gain_trace, {**phase_trace, "xaxis": "x2"}, *({**t, "xaxis": "x3"} for t in levels)],
        {
            "height": 620,
            "xaxis": {**xaxis, "anchor": "y"},
            "xaxis2": {**xaxis, "anchor": "y2"},
            "xaxis3": {
                "anchor": "y3",
                "tickvals": ticks,
                "ticktext": [str(k) for k in ticks],
                "title": {"text": "line (cycles per 64 steps)"},
            },
            "yaxis": {
                "domain": _BLA_DOMAINS["yaxis"],
                "range": _span([gain_trace], 1.0, 0.05),
                "title": {"text": "BLA gain"},
            },
            "yaxis2": {
                "domain": _BLA_DOMAINS["yaxis2"],
                "range": _span([phase_trace], 0.0, 5.0),
                "title": {"text": "phase (deg)"},
            },
            "yaxis3": {
                "domain": _BLA_DOMAINS["yaxis3"],
                "range": [bottom, max([0.0, *shown]) + 5],
                "title": {"text": "level (dB)"},
            },
            "shapes": [{**_ideal(1.0), "yref": "y"}, {**_ideal(0.0), "yref": "y2"}],
        },
    )


#: The two-tone spectrum's levels: (key, name, marker symbol).
_TWO_TONE_LEVELS = (
    ("level_db", "answers", "circle"),
    ("truth_level_db", "exact answers", "circle-open"),
    ("error_level_db", "error (answers - exact answers)", "x-thin-open"),
    ("added_db", "added by the model", "diamond-open"),
)


def _two_tone_plot(family: str, products: Sequence[Mapping[str, Any]], pid: str, floor: float | None) -> dict[str, Any]:
    """One family's two-tone spectrum: at each tone and product, the answers' level, the exact
    answers' own, the error's and what the model adds, in dB re the exact answers' tones, down to
    25 dB below the family's truncation `floor` (a level further down is rounding, not a product)."""
    x = [p["cycles"] for p in products]
    names = [plain(p["product"]) for p in products]
    data = [
        {
            "x": x,
            "y": [_level(p[key]) for p in products],
            "text": names,
            "name": plain(name),
            "meta": key,
            "type": "scatter",
            "mode": "markers",
            "marker": {"symbol": symbol, "size": 9, "color": PALETTE[i]},
            "hovertemplate": "%{fullData.name}<br>%{text} (line %{x}): %{y:.2f} dB<extra></extra>",
        }
        for i, (key, name, symbol) in enumerate(_TWO_TONE_LEVELS)
    ]
    order = sorted(range(len(products)), key=lambda i: x[i])
    shown = [v for v in _drawn(data) if floor is None or v >= floor - _BELOW_FLOOR_SHOWN_DB]
    bottom = (floor if floor is not None else min([0.0, *shown])) - _BELOW_FLOOR_SHOWN_DB
    return _plot(
        pid,
        f"{family}: two-tone spectrum. Each tone and harmonic or intermodulation product at its own line, in dB re "
        "the exact answers' tones: the answers, the exact answers' own content, the error, and what the model adds "
        "beyond the exact answers' content passed through its BLA; down to 25 dB below the truncation floor.",
        f"Two-tone spectrum of {family}: levels in dB at each tone and product",
        data,
        {
            "xaxis": {
                "tickvals": [x[i] for i in order],
                "ticktext": [f"{names[i]} ({x[i]})" for i in order],
                "tickangle": -90,
                "automargin": True,
                "title": {"text": "product (line, cycles per 64 steps)"},
            },
            "yaxis": {"range": [bottom, max([0.0, *shown]) + 5], "title": {"text": "level (dB)"}},
            "margin": {"t": 10, "r": 10, "l": 60, "b": 110},
        },
    )


def multitone_plots(r: Results, pid: str) -> list[dict[str, Any]]:
    """Per family of the submission's multi-tone reading (`multitone` of its results document,
    docs/multitone.md): the BLA plot and, when there were two-tone rows, the two-tone spectrum.
    None when the submission has no multi-tone reading."""
    families = r.extra.get("multitone", {}).get("families") or {}
    plots = []
    for n, (family, m) in enumerate(families.items()):
        plots.append(_bla_plot(family, m, f"{pid}-{n}-bla"))
        if m.get("two_tone"):
            plots.append(_two_tone_plot(family, m["two_tone"], f"{pid}-{n}-two-tone", _level(m["floor_db"])))
    return plots


def _multitone_table(r: Results) -> dict[str, Any] | None:
    """Each family's multi-tone verdict and levels (report.md's multi-tone table)."""
    families = r.extra.get("multitone", {}).get("families") or {}
    if not families:
        return None
    keys: Final = ("distortion_db", "even_added_db", "odd_added_db", "floor_db")
    return {
        "id": "multitone",
        "title": "Multi-tone measurement",
        "header": [
            "family",
            "verdict",
            "distortion (dB)",
            "even added (dB)",
            "odd added (dB)",
            "floor (dB)",
            "noise",
            "beyond the noise",
            "memory",
        ],
        "rows": [
            [
                _cell(family),
                _cell(m["verdict"]),
                *(_cell(_num(_level(m[k]), 1), _level(m[k]), numeric=True) for k in keys),
                _cell(family_noise_text(m)),
                _cell(detected_text(m)),
                _cell(memory_text(m["memory"])),
            ]
            for family, m in families.items()
        ],
    }


def _variants_table(r: Results) -> dict[str, Any] | None:
    """GAP's paired comparison: report.md's variants table, its evidence said in units, its headline
    per variant kind pooled over the families above it (an adjusted McNemar p below 0.05 marked '*')."""
    found = r.extra.get("variants", {})
    entries = [v for by_kind in found.values() for v in by_kind.values()]
    if not entries:
        return None
    header, rows, _ = variants_table(found, bold=False)
    diffs = [v["mb_core_diff"] for by_kind in found.values() for v in by_kind.values()]
    return {
        "id": "variants",
        "title": "Variants (GAP): each variant minus its original on the same rows",
        "note": " ".join([f"{pooled_headline(r)}." if r.extra.get("variants_pooled") else "", *evidence_lines(entries)])
        .strip()
        .replace("`", "")
        .replace("bold marks", "* marks"),
        "header": header,
        "rows": [
            [_cell(text, diff, numeric=True) if j == 3 else _cell(text) for j, text in enumerate(row)]
            for row, diff in zip(rows, diffs, strict=True)
        ],
    }


def paired_plots(r: Results) -> list[dict[str, Any]]:
    """Each original's Bode curves beside its variants' (one pair of plots an original): what a
    renaming or a new setting does to the gain and phase, frequency by frequency."""
    found = r.extra.get("variants", {})
    out = []
    for n, (original, by_kind) in enumerate(found.items()):
        curves = [(original, r, original)] + [(f"{kind}: {v['family']}", r, v["family"]) for kind, v in by_kind.items()]
        out += bode_plots([c for c in curves if c[2] in r.families], f"paired-{n}")
    return out


def _multitone_comparison(results: list[Results]) -> dict[str, Any] | None:
    """Multi-tone submissions side by side: one row a submission's family, report.md's verdict columns."""
    measured = [r for r in results if r.extra.get("multitone", {}).get("families")]
    if not measured:
        return None
    header: list[str] = []
    rows: list[list[str]] = []
    for r in measured:
        header, table = multitone_table(r.extra["multitone"]["families"])
        rows += [[r.label, *row] for row in table]
    return {"header": ["submission", *header], "rows": [[_cell(text) for text in row] for row in rows]}


def _family_table(r: Results, root: str) -> dict[str, Any]:
    return {
        "id": "families",
        "title": "Per family",
        "header": ["family", *(name for _, name, _ in FAMILY_COLUMNS)],
        "rows": [
            [
                _cell(fam, href=f"{root}families/{file_name(fam)}.html"),
                *(_cell(_num(s.get(k), d), s.get(k), numeric=True) for k, _, d in FAMILY_COLUMNS),
            ]
            for fam, s in r.families.items()
        ],
    }


def _frequency_table(r: Results) -> dict[str, Any]:
    columns = [
        ("frequency_cycles", "frequency", 0),
        ("gain", "gain", 4),
        ("gain_low", "gain low", 4),
        ("gain_high", "gain high", 4),
        ("phase_err_deg", "phase error (deg)", 2),
        ("r2", "R2", 4),
        ("compliance", "compliance", 3),
        ("num_sweeps", "sweeps", 0),
    ]
    present = [c for c in columns if c[0] in r.summary]
    rows = []
    for row in r.summary.rows():
        cells = [_cell(str(row["family"]))]
        for key, _, digits in present:
            v = row[key]
            cells.append(_cell(f"{v:g}" if digits == 0 and v == v else _num(v, digits), v, numeric=True))
        rows.append(cells)
    return {
        "id": "frequencies",
        "title": "Per frequency (the Bode plot's points)",
        "header": ["family", *(name for _, name, _ in present)],
        "rows": rows,
    }


def _bracketed(value: float, interval: Sequence[float | None] | None, digits: int) -> str:
    if not interval:
        return _num(value, digits)
    high = "no bound" if interval[1] is None else _num(interval[1], digits)
    return f"{_num(value, digits)} [{_num(interval[0], digits)}, {high}]"


#: What the Dynamics table's columns mean (report.md's How to read says it at length).
DYNAMICS_NOTE = (
    "Dynamics: each family's Bode data fitted by a pure delay and by a first-order low-pass (a = 1: no memory; "
    "time constant -1 / ln(1 - a) steps); a residual is a fit's relative misfit (0: exact; a model names the "
    "system below 0.1). A delay is known modulo the period shown (mod P) and is shown between -P/2 and P/2. A lag "
    'is named only when the delay lies further from 0 than t(99.9 %) standard errors; "cannot tell" when the '
    "sweeps cannot show a lag at all. The Bode plots can overlay each fit."
)


def _dynamics_table(r: Results) -> dict[str, Any] | None:
    """What system each family's sequential answers show: the verdict, the delay and the time
    constant with their 95 % intervals, and each fit's residual (the report's Dynamics table)."""
    found = r.extra.get("dynamics")
    if not found:
        return None
    rows = []
    for family, d in found.items():
        if "delay_steps" not in d:
            rows.append([_cell(family), _cell(d["verdict"]), *[_cell("n/a") for _ in range(5)]])
            continue
        rows.append(
            [
                _cell(family),
                _cell(d["verdict"]),
                _cell(
                    f"{_bracketed(d['delay_steps'], d['delay_interval'], 2)} (mod {d['delay_period_steps']:g})",
                    d["delay_steps"],
                    numeric=True,
                ),
                _cell(
                    _bracketed(d["time_constant_steps"], d.get("time_constant_interval"), 2),
                    d["time_constant_steps"],
                    numeric=True,
                ),
                _cell(_bracketed(d["low_pass_a"], d["low_pass_a_interval"], 3), d["low_pass_a"], numeric=True),
                _cell(_num(d["delay_residual"], 3), d["delay_residual"], numeric=True),
                _cell(_num(d["low_pass_residual"], 3), d["low_pass_residual"], numeric=True),
            ]
        )
    return {
        "id": "dynamics",
        "title": "Dynamics (sequential protocol)",
        "header": [
            "family",
            "verdict",
            "delay (steps) [95 %]",
            "time constant (steps) [95 %]",
            "low-pass a [95 %]",
            "delay residual",
            "low-pass residual",
        ],
        "rows": rows,
    }


def _downloads(slug: str, r: Results) -> list[dict[str, Any]]:
    files = [RESULTS_FILE, SCORES_FILE, *table_files(r)]
    return [{"text": name, "href": f"../data/{slug}/{name}", "download": True} for name in files]


class _Site:
    def __init__(self, entries: list[_Entry], out: Path) -> None:
        self.entries, self.out = entries, out
        self.env = Environment(
            loader=PackageLoader("mathbode.evaluator.presentation", "site_assets"),
            autoescape=True,
            undefined=StrictUndefined,
            keep_trailing_newline=True,
        )
        self.families = list(dict.fromkeys(f for e in entries for f in e.results.families))
        self.by_results = {id(e.results): e for e in entries}

    def page(self, name: str, template: str, root: str, title: str, plots: bool = False, **values: Any) -> None:
        text = self.env.get_template(template).render(
            root=root,
            title=title,
            plots=plots,
            all_families=[(f, file_name(f)) for f in self.families],
            version=__version__,
            plotly_version=plotly.__version__,
            **values,
        )
        path = self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def slug_of(self, r: Results) -> str:
        return self.by_results[id(r)].slug

    def index(self) -> None:
        results = [e.results for e in self.entries]
        wide = any("intervals" in r.extra for r in results)
        columns = [
            {"name": "rank", "numeric": True, "optional": False},
            {"name": "submission", "numeric": False, "optional": False},
            {"name": "model", "numeric": False, "optional": True},
            {"name": "preset", "numeric": False, "optional": True},
            {"name": "MB-Core" + (" [95 %]" if wide else ""), "numeric": True, "optional": False},
            {"name": "MB-Plus", "numeric": True, "optional": False},
            {"name": "cal. MB-Plus" + (" [95 %]" if wide else ""), "numeric": True, "optional": False},
            {"name": "exact prompts", "numeric": True, "optional": False},
            {"name": "compliance", "numeric": True, "optional": False},
            {"name": "families", "numeric": True, "optional": False},
        ]
        tested = {(t["first"], t["second"]): t for e in self.entries for t in e.tests}
        shown_groups = []
        for label, members in groups(results):
            rows = []
            for r, (rank, tied) in zip(members, ranks(members), strict=True):
                nc = r.extra.get("non_compliant", {})
                compliance = nc["compliant"] / nc["lines"] if nc.get("lines") else math.nan
                # Exact answers counted in distinct prompts (a document from before units: rows).
                said = r.extra.get("accuracy", {})
                accuracy = said.get("unit_rate", said.get("rate", math.nan))
                rows.append(
                    [
                        _cell(f"{rank}{'=' if tied else ''}", rank, numeric=True),
                        _cell(r.label, r.label, href=f"submissions/{self.slug_of(r)}.html"),
                        _cell(r.model or "not given"),
                        _cell(r.preset),
                        _cell(interval_text(r, "mb_core"), r.overall.get("mb_core"), numeric=True),
                        _cell(_num(r.overall.get("mb_plus")), r.overall.get("mb_plus"), numeric=True),
                        _cell(
                            interval_text(r, "mb_plus_calibrated"), r.overall.get("mb_plus_calibrated"), numeric=True
                        ),
                        _cell(_num(accuracy), accuracy, numeric=True),
                        _cell(_num(compliance), compliance, numeric=True),
                        _cell(str(r.overall["num_families"]), r.overall["num_families"], numeric=True),
                    ]
                )
            tests = [
                line
                for upper, lower in zip(members, members[1:], strict=False)
                if (upper.label, lower.label) in tested
                for line in describe(tested[(upper.label, lower.label)])
            ]
            presets = dict.fromkeys(r.preset for r in members)
            note = (
                f"These submissions cover different rows ({', '.join(presets)}): their scores are not directly "
                "comparable."
                if len(presets) > 1
                else None
            )
            shown_groups.append({"label": label, "rows": rows, "tests": tests, "note": note})
        gone = [
            {
                "label": r.label,
                "href": f"submissions/{self.slug_of(r)}.html",
                "preset": r.preset,
                "conditions": conditions_label(r),
            }
            for r in unranked(results)
        ]
        self.page(
            "index.html",
            "index.html",
            "",
            "MathBode leaderboard",
            count=len(results),
            groups=shown_groups,
            unranked=gone,
            columns=columns,
            multitone=_multitone_comparison(results),
        )

    def submission(self, e: _Entry) -> None:
        r = e.results
        nc = r.extra.get("non_compliant", {})
        said = compliance_note(r)
        alerts = [said] if said and nc.get("compliant") == 0 else []
        notes = ([said] if said and not alerts else []) + [
            *coverage_notes([r]),
            *conditions_notes(r),
            *na_notes(r),
            *interval_notes(r),
            f"Answers: {answers_text(r)}.",
        ]
        if repeat := repeatability_text(r):
            notes.append(repeat[0].upper() + repeat[1:] + ".")
        headline = None
        if r.extra.get("num_sweeps"):
            headline = (
                f"MB-Core {interval_text(r, 'mb_core')}, MB-Plus {interval_text(r, 'mb_plus')}; calibrated MB-Core "
                f"{interval_text(r, 'mb_core_calibrated')}, MB-Plus {interval_text(r, 'mb_plus_calibrated')}."
            )
            if "intervals" in r.extra:
                notes.append(f"Brackets: {brackets(r)}.")
        figures = bode_plots([(f, r, f) for f in r.families], "bode") if len(r.summary) else []
        figures += _transient_plots(r, "transient")
        figures += multitone_plots(r, "multitone")
        tables = [_family_table(r, "../"), _frequency_table(r)] if r.families else []
        said_dynamics = _dynamics_table(r)
        if said_dynamics:
            tables.append(said_dynamics)
            notes.append(DYNAMICS_NOTE)
            notes += [f"{family}: {flag}." for family, d in r.extra["dynamics"].items() for flag in d.get("flags", [])]
        said_variants = _variants_table(r)
        if said_variants:
            tables.append(said_variants)
        said_multitone = _multitone_table(r)
        if said_multitone:
            tables.append(said_multitone)
            if r.extra.get("multitone", {}).get("protocol", "stateless") == "stateless":
                notes.append(STATELESS_MULTITONE.replace("`", ""))
        kinds = nc.get("kinds") or {}
        cond = r.extra.get("conditions") or {}
        sections: list[dict[str, Any]] = [
            {
                "id": "compliance",
                "title": "Compliance",
                "entries": [
                    said
                    or (
                        f"All {nc['lines']:,} answers in scope were compliant."
                        if nc.get("lines")
                        else "No answers in scope: compliance is counted on sinusoid rows, and this file has none."
                    )
                ]
                + [f"{kind}: {n:,}" for kind, n in kinds.items()],
                "pre": None,
            },
            {
                "id": "conditions",
                "title": "Conditions",
                "entries": [f"{k.replace('_', ' ')}: {v}" for k, v in cond.items()],
                "pre": None,
            },
            {
                "id": "provenance",
                "title": "Provenance",
                "entries": [line.removeprefix("- ").replace("`", "") for line in provenance_lines(r)]
                + [f"Scored at {r.provenance.get('scored_at')}."],
                "pre": None,
            },
        ]
        lines = diagnostics_lines(r)
        if lines:
            sections.insert(1, {"id": "chirp-step", "title": "Chirp and step", "entries": [], "pre": "\n".join(lines)})
        if r.traces:
            sections.append(
                {
                    "id": "drill-down",
                    "title": "Drill-down",
                    "entries": [
                        {
                            "text": f"The answers of each of the {len(r.traces):,} mid-band, chirp and step sweeps "
                            "against the truth",
                            "href": f"../sweeps/{e.slug}.html",
                            "download": False,
                        }
                    ],
                    "pre": None,
                }
            )
        if r.extra.get("variants"):
            sections.insert(
                0,
                {
                    "id": "paired",
                    "title": "Read in pairs (GAP)",
                    "entries": [
                        {
                            "text": "Each original beside its variants: the paired table with the McNemar counts, "
                            "and their Bode curves on the same axes",
                            "href": f"../paired/{e.slug}.html",
                            "download": False,
                        }
                    ],
                    "pre": None,
                },
            )
        sections.append({"id": "files", "title": "Downloads", "entries": _downloads(e.slug, r), "pre": None})
        self.page(
            f"submissions/{e.slug}.html",
            "submission.html",
            "../",
            r.label,
            plots=bool(figures),
            headline=headline,
            alerts=alerts,
            examples=nc.get("examples") or [],
            notes=notes,
            figures=figures,
            tables=tables,
            sections=sections,
        )

    def paired(self, e: _Entry) -> None:
        """A paired release's own page: GAP's headline per variant kind, the paired table, and each
        original's Bode curves beside its variants'."""
        r = e.results
        table = _variants_table(r)
        if table is None:
            return
        figures = paired_plots(r)
        self.page(
            f"paired/{e.slug}.html",
            "submission.html",
            "../",
            f"{r.label}: read in pairs (GAP)",
            plots=bool(figures),
            headline=pooled_headline(r),
            alerts=[],
            examples=[],
            notes=[
                f"The overall on the leaderboard is over the {r.overall['num_families']} original "
                f"{'family' if r.overall['num_families'] == 1 else 'families'}; each "
                "variant is read here against its original, on the same rows (docs/variants.md).",
            ],
            figures=figures,
            tables=[table],
            sections=[
                {
                    "id": "back",
                    "title": "The submission",
                    "entries": [{"text": r.label, "href": f"../submissions/{e.slug}.html", "download": False}],
                    "pre": None,
                }
            ],
        )

    def sweeps(self, e: _Entry, steps: int, mid_band: str) -> None:
        r = e.results
        header = ["sweep", "family", "question", "signal", "frequency", "start phase", "amplitude", "answered"]
        # The rows as HTML here, not in the template: a FULL submission has 330 of them, and a
        # template's loop over their cells is most of the site's build time.
        rows = []
        for t in r.traces:
            s = t["sweep"]
            answered = sum(1 for v in t["answer"] if v == v)
            cells = [
                f'<td><a href="#{escape(t["id"])}">{escape(t["id"])}</a></td>',
                f"<td>{escape(s['family'])}</td>",
                _number_td(str(s["question_id"]), s["question_id"]),
                f"<td>{escape(s['signal_type'])}</td>",
                _number_td(
                    "" if s["frequency_cycles"] is None else f"{s['frequency_cycles']:g}", s["frequency_cycles"]
                ),
                _number_td("" if s["phase_deg"] is None else f"{s['phase_deg']:g}", s["phase_deg"]),
                _number_td(f"{s['amplitude_scale']:g}", s["amplitude_scale"]),
                _number_td(f"{answered} of {len(t['answer'])}", answered),
            ]
            rows.append(f'<tr id="{escape(t["id"])}">{"".join(cells)}</tr>')
        # The truth to 7 decimals, one more than the answers carry: enough to see any answer's error.
        traces = [
            {
                "id": t["id"],
                "truth": [round(v, 7) for v in t["truth"]],
                "answer": [v if v == v else None for v in t["answer"]],
            }
            for t in r.traces
        ]
        self.page(
            f"sweeps/{e.slug}.html",
            "sweeps.html",
            "../",
            f"{r.label}: sweeps",
            plots=True,
            back=f"../submissions/{e.slug}.html",
            label=r.label,
            steps=steps,
            mid_band=mid_band,
            traces_json=script_json(traces),
            header=header,
            rows_html=Markup("\n".join(rows)),
        )

    def family(self, family: str) -> None:
        having = [e for e in self.entries if family in e.results.families]
        sinusoid = [e for e in having if len(e.results.summary)]
        figures = bode_plots([(e.results.label, e.results, family) for e in sinusoid], "family") if sinusoid else []
        table = {
            "id": "submissions",
            "title": f"{family}: every submission",
            "header": ["submission", "conditions", *(name for _, name, _ in FAMILY_COLUMNS)],
            "rows": [
                [
                    _cell(e.results.label, href=f"../submissions/{e.slug}.html"),
                    _cell(conditions_label(e.results)),
                    *(
                        _cell(_num(e.results.families[family].get(k), d), e.results.families[family].get(k))
                        for k, _, d in FAMILY_COLUMNS
                    ),
                ]
                for e in having
            ],
        }
        self.page(
            f"families/{file_name(family)}.html",
            "submission.html",
            "../",
            f"Family {family}",
            plots=bool(figures),
            headline="Each submission's scores in this family. Submissions scored under different conditions are "
            "shown side by side here but never ranked together.",
            alerts=[],
            examples=[],
            notes=[],
            figures=figures,
            tables=[table],
            sections=[],
        )

    def data(self, e: _Entry) -> None:
        folder = self.out / "data" / e.slug
        folder.mkdir(parents=True, exist_ok=True)
        r = e.results
        (folder / RESULTS_FILE).write_bytes(e.text)
        (folder / SCORES_FILE).write_text(json.dumps(e.document["scores"], indent=2, allow_nan=False) + "\n")
        write_tables(r, folder)


def build_site(folders: list[Path], out: Path) -> Path:
    """Write the site for the report folders' results into `out` (replaced atomically)."""
    check_replaceable(out, "site", "-o")
    entries: list[_Entry] = []
    taken: set[str] = set()
    for folder in folders:
        documents, tests = saved_documents(folder)
        for document, text in documents:
            r, _ = from_document(document)
            entries.append(_Entry(r, _slug(r.label, taken), document, tests, text.encode("utf-8")))
    if not entries:
        raise UsageError("no results to show.")
    labels = [e.results.label for e in entries]
    if len(set(labels)) < len(labels):
        # Two folders may each hold a submission of one label: the site tells them apart by page name.
        for e in entries:
            if labels.count(e.results.label) > 1:
                e.results.label = f"{e.results.label} ({e.slug})" if e.slug != e.results.label else e.results.label
    families = dict.fromkeys(f for e in entries for f in e.results.families)
    planned = [f"{where}/{e.slug}.html" for e in entries for where in ("submissions", "sweeps")]
    planned += [f"data/{e.slug}/{RESULTS_FILE}" for e in entries] + [f"families/{file_name(f)}.html" for f in families]
    check_inside(planned, out, "-o")  # every page a name makes, proved inside the site before anything is written
    lay = layout()
    with atomic_folder(out, "site", "-o") as tmp:
        site = _Site(entries, tmp)
        assets = tmp / "assets"
        assets.mkdir()
        (assets / PLOTLY_FILE).write_text(get_plotlyjs(), encoding="utf-8")
        for name in ("site.css", "site.js"):
            (assets / name).write_bytes(resources.files(__package__).joinpath("site_assets", name).read_bytes())
        site.index()
        bands = [e.results.provenance.get("config", {}).get("mid_band") or [] for e in entries]
        mid_band = " and ".join(f"{f:g}" for f in bands[0])
        for e in entries:
            site.submission(e)
            site.paired(e)
            site.sweeps(e, lay.time_steps, mid_band)
            site.data(e)
            # Its pages written, a submission's answers and document are not needed again.
            e.results.traces, e.document, e.text = [], {}, b""
        for family in site.families:
            site.family(family)
        (tmp / "data").mkdir(exist_ok=True)
        leaderboard([e.results for e in entries]).to_csv(tmp / "data" / LEADERBOARD_FILE)
    return out
