"""The multi-tone figures: the BLA as system identification draws it, and the two-tone spectrum.

From `multitone` of each results document alone (docs/multitone.md). The BLA figure has a column
per family: its gain in linear units and its phase, each with its 95 % interval (a curve per
submission), then for each submission its levels in dB as Pintelon and Schoukens draw them: the
noise and the total variance of the BLA (noise plus stochastic distortion) as bands at the excited
lines, the distortion the model adds at the even and the odd detection lines in two colours, the
measured noise at the detection lines and the truncation floor the exact answers cannot go below.
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..results import Results
from .figures import _at_least, _finish, _grid, drawn, legend_columns
from .files import DEFAULT_FIGURES, MULTITONE_FIGURE, TWO_TONE_FIGURE, FigureOptions

#: Each submission's colour in the gain and phase rows; the kinds of level keep colours of their
#: own (EVEN, ODD, the bands), so a level is never read as another submission's curve.
SUBMISSION_COLOURS = ("C0", "C2", "C3", "C5", "C6", "C7", "C8")
EVEN, ODD = "C1", "C4"
NOISE_BAND, TOTAL_BAND = "0.55", "C9"
#: The BLA's axes are never narrower than the ideal +- these: an exact gain of 1 +- 1e-6 and a phase
#: of 1e-4 degrees are the six-decimal answers' rounding, not signal.
GAIN_HALF_SPAN = 0.05
PHASE_HALF_SPAN = 5.0
#: The levels' axis reaches this far below the lowest truncation floor: a level further down is
#: rounding beyond what six-decimal answers can show (the report says "below the floor").
BELOW_FLOOR_SHOWN_DB = 25.0
#: A label is cut to this many characters in a row's axis label (the panel's height holds about 40).
LABEL_CHARACTERS = 34


def _readings(results: list[Results]) -> list[dict[str, dict[str, Any]]]:
    # The figures read a family's reading as plain data; the table reads are typed (report.py).
    return [cast(dict[str, dict[str, Any]], r.extra.get("multitone", {}).get("families") or {}) for r in results]


def _value(x: Any) -> float:
    """A level as a float; n/a (None, or NaN read back from the document) as NaN, which draws nothing."""
    return math.nan if x is None else float(x)


def _total_db(noise_db: float, stochastic_db: float) -> float:
    """The BLA's total variance in dB: the noise's power plus the stochastic distortion's (the scorer
    splits the spread across experiments into the two); NaN when neither was measured."""
    powers = [10 ** (v / 10) for v in (noise_db, stochastic_db) if math.isfinite(v)]
    return 10 * math.log10(sum(powers)) if powers and sum(powers) > 0 else math.nan


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + "\u2026"


def _levels(ax: Axes, m: dict[str, Any], drawn: set[str], bottom: float) -> list[float]:
    """One submission's levels in one family's panel; the kinds drawn are added to `drawn`."""
    intervals = m["bla_intervals"]
    k = np.array([iv["cycles"] for iv in intervals], dtype=float)
    noise = np.array([_value(iv["noise_db"]) for iv in intervals])
    total = np.array([_total_db(n, _value(iv["stochastic_db"])) for n, iv in zip(noise, intervals, strict=True)])
    shown: list[float] = []
    for name, values, colour, alpha in (("total", total, TOTAL_BAND, 0.35), ("noise", noise, NOISE_BAND, 0.5)):
        if np.isfinite(values).any():
            ax.fill_between(k, bottom, values, color=colour, alpha=alpha, linewidth=0, step=None)
            drawn.add(name)
            shown += [v for v in values if math.isfinite(v)]
    for kind, marker, colour in (("even", "s", EVEN), ("odd", "^", ODD)):
        detect = [line for line in m["lines"] if line["kind"] == kind]
        values = np.array([_value(line["added_db"]) for line in detect])
        if np.isfinite(values).any():
            x = [line["cycles"] for line in detect]
            ax.plot(x, values, marker, color=colour, markersize=4, linestyle="none")
            drawn.add(kind)
            shown += [v for v in values if math.isfinite(v)]
    # The noise the distortion is judged against (docs/multitone.md), beside the floor.
    level = _value((m.get("noise") or {}).get("level_db"))
    if math.isfinite(level):
        ax.axhline(level, color="black", linestyle=":", linewidth=1.0)
        drawn.add("measured")
        shown.append(level)
    floor = _value(m["floor_db"])
    if math.isfinite(floor):
        ax.axhline(floor, color="grey", linestyle="--", linewidth=0.8)
        drawn.add("floor")
    return shown


#: The legend's keys for the kinds of level, in order: (key, label, how it is drawn: a band, a
#: marker or a line, its marker or line style, colour, opacity).
_KINDS = (
    ("total", "total BLA variance (noise + stochastic)", "band", "", TOTAL_BAND, 0.35),
    ("noise", "noise (spread across periods)", "band", "", NOISE_BAND, 0.5),
    ("even", "even added distortion", "marker", "s", EVEN, 1.0),
    ("odd", "odd added distortion", "marker", "^", ODD, 1.0),
    ("measured", "measured noise (detection lines)", "line", ":", "black", 1.0),
    ("floor", "truncation floor", "line", "--", "grey", 1.0),
)


def bla_figure(results: list[Results]) -> Figure:
    """Per family: the BLA's gain and phase with their intervals, then each submission's levels."""
    readings = _readings(results)
    families = list(dict.fromkeys(f for reading in readings for f in reading))
    having = [i for i, reading in enumerate(readings) if reading]
    title = (
        "Multi-tone: best linear approximation (BLA) with 95 % intervals, and the levels at each line "
        "(dB re the exact answers' level)"
    )
    labels = [results[i].label for i in having]
    # The legend's room is set before drawing, when the kinds drawn are not yet known: room for all.
    fig, axes = _grid(2 + len(having), max(1, len(families)), title, labels + [kind[1] for kind in _KINDS], linked=True)
    drawn: set[str] = set()
    gains: list[float] = []
    phases: list[float] = []
    floors = [_value(reading[f]["floor_db"]) for reading in readings for f in reading]
    finite_floors = [f for f in floors if math.isfinite(f)]
    bottom = (min(finite_floors) if finite_floors else -120.0) - BELOW_FLOOR_SHOWN_DB
    levels: list[float] = []
    for col, family in enumerate(families):
        gain_ax, phase_ax = axes[0][col], axes[1][col]
        for n, i in enumerate(having):
            m = readings[i].get(family)
            if not m:
                continue
            colour = SUBMISSION_COLOURS[n % len(SUBMISSION_COLOURS)]
            excited = [line for line in m["lines"] if line["kind"] == "excited"]
            intervals = m["bla_intervals"]
            # Side by side when several submissions share a line, so no interval hides another.
            k = np.array([line["cycles"] for line in excited], dtype=float) + (n - (len(having) - 1) / 2) * 0.25
            gain = np.array([_value(line["gain"]) for line in excited])
            low = np.array([_value(iv["gain_low"]) for iv in intervals])
            high = np.array([_value(iv["gain_high"]) for iv in intervals])
            bars = np.nan_to_num(np.array([gain - low, high - gain]))
            gain_ax.errorbar(
                k, gain, yerr=bars, fmt="o-", color=colour, markersize=3.5, capsize=2, linewidth=1
            )  # fmt: skip
            phase = np.array([_value(line["phase_deg"]) for line in excited])
            p_low = np.array([_value(iv["phase_low_deg"]) for iv in intervals])
            p_high = np.array([_value(iv["phase_high_deg"]) for iv in intervals])
            phase_bars = np.nan_to_num(np.array([phase - p_low, p_high - phase]))
            phase_ax.errorbar(k, phase, yerr=phase_bars, fmt="o-", color=colour, markersize=3.5, capsize=2, linewidth=1)
            gains += [*gain, *low, *high]
            phases += [*phase, *p_low, *p_high]
            levels += _levels(axes[2 + n][col], m, drawn, bottom - 50)
        gain_ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
        phase_ax.axhline(0.0, color="grey", linestyle="--", linewidth=0.8)
        for n in range(len(having)):
            axes[2 + n][col].axhline(0.0, color="grey", linewidth=0.5)
    # Each row shares its y axis: the first panel's limits are the row's.
    _at_least(axes[0][:1], 1.0, GAIN_HALF_SPAN, gains)
    _at_least(axes[1][:1], 0.0, PHASE_HALF_SPAN, phases)
    for n in range(len(having)):
        top = max([0.0, *(v for v in levels if math.isfinite(v))]) + 5
        axes[2 + n][0].set_ylim(bottom, top)
    ylabels = ["BLA gain", "BLA phase (deg)"] + [f"{_short(results[i].label)}\nlevel (dB)" for i in having]
    _finish(fig, axes, families, ylabels, "line (cycles per 64 steps)")
    # The submissions, then the kinds of level, each only where it is drawn somewhere.
    handles: list[Artist] = [
        Line2D([], [], marker="o", markersize=3.5, color=SUBMISSION_COLOURS[n % len(SUBMISSION_COLOURS)])
        for n in range(len(having))
    ]
    names = list(labels)
    for key, label, drawn_as, style, colour, alpha in _KINDS:
        if key not in drawn:
            continue
        if drawn_as == "band":
            handles.append(Patch(color=colour, alpha=alpha, linewidth=0))
        elif drawn_as == "marker":
            handles.append(Line2D([], [], marker=style, markersize=5, linestyle="none", color=colour))
        else:
            # The two lines' styles spelled out: matplotlib's types take only its named styles.
            handles.append(Line2D([], [], linestyle=":" if style == ":" else "--", color=colour, linewidth=1.0))
        names.append(label)
    width = fig.get_figwidth()
    fig.legend(handles, names, loc="lower center", ncol=legend_columns(names, width), frameon=False, fontsize=8)
    return fig


def two_tone_figure(results: list[Results]) -> Figure:
    """Per family: the answers' level at each tone and product (filled) over the exact answers' own (hollow)."""
    readings = _readings(results)
    families = list(dict.fromkeys(f for reading in readings for f in reading if reading[f].get("two_tone")))
    title = "Two-tone spectrum (dB re the exact answers' tones): filled the answers, hollow the exact answers"
    fig, axes = _grid(1, max(1, len(families)), title, [r.label for r in results], linked=True)
    # The panels share their y axis: one range over every family's levels and labels, set once
    # (set per panel, the last family's range was every panel's, cutting another's labels off).
    lows: list[float] = []
    highs: list[float] = []
    names: list[tuple[Any, dict[int, tuple[float, str]]]] = []
    for col, family in enumerate(families):
        ax = axes[0][col]
        n = len(results)
        for i, (r, reading) in enumerate(zip(results, readings, strict=True)):
            products = (reading.get(family) or {}).get("two_tone") or []
            if not products:
                continue
            # Side by side when several submissions share a line, so no stem hides another.
            k = np.array([p["cycles"] for p in products], dtype=float) + (i - (n - 1) / 2) * 0.18
            level = np.array([_value(p["level_db"]) for p in products])
            bottom = -1000.0  # under any axis: the stem reaches the panel's foot
            ax.vlines(k, bottom, level, color=f"C{i}", linewidth=1.2)
            ax.plot(k, level, "o", color=f"C{i}", markersize=4, label=r.label)
            ax.plot(
                k, [_value(p["truth_level_db"]) for p in products], "o", color="grey", fillstyle="none", markersize=5
            )
        top: dict[int, tuple[float, str]] = {}
        for reading in readings:
            for p in (reading.get(family) or {}).get("two_tone") or []:
                levels = [v for v in (_value(p["level_db"]), _value(p["truth_level_db"])) if math.isfinite(v)]
                high = max([*levels, top.get(p["cycles"], (-math.inf, ""))[0]])
                top[p["cycles"]] = (high, p["product"])
        finite = [high for high, _ in top.values() if math.isfinite(high)]
        if finite:
            low = min(
                _value(p[key])
                for reading in readings
                for p in (reading.get(family) or {}).get("two_tone") or []
                for key in ("level_db", "truth_level_db")
                if math.isfinite(_value(p[key]))
            )
            # A level more than 20 dB under the truncation floor is rounding, not a reading (the
            # console says "below the floor"): the axis stops 30 dB under the floor, not at -320 dB.
            floors = [_value((reading.get(family) or {}).get("floor_db")) for reading in readings]
            floor = min((f for f in floors if math.isfinite(f)), default=-math.inf)
            lows.append(max(low - 10, floor - 30))
            highs.append(max(finite) + 22)
        names.append((ax, top))
        ax.set_xticks(sorted(top))
        ax.tick_params(axis="x", labelsize=6)
    if lows:
        axes[0][0].set_ylim(min(lows), max(highs))
    # Each line named above its highest level, upright text so neighbours never overlap; a line
    # whose levels all lie under the axis (below the floor) is named at its foot.
    foot = min(lows) if lows else -math.inf
    for ax, top in names:
        for line, (high, name) in sorted(top.items()):
            if math.isfinite(high):
                ax.text(line, max(high, foot) + 2, name, rotation=90, ha="center", va="bottom", fontsize=6)
    _finish(fig, axes, families, ["level (dB)"], "line (cycles per 64 steps) and product")
    return fig


def draw_multitone_figures(
    results: list[Results], out: Path, only: tuple[str, ...] | None = None, options: FigureOptions = DEFAULT_FIGURES
) -> list[Path]:
    """The multi-tone figures, when a submission has a multi-tone reading (`only`: just these stems)."""
    if not any(_readings(results)):
        return []
    makers = {MULTITONE_FIGURE: bla_figure, TWO_TONE_FIGURE: two_tone_figure}
    return [
        drawn(partial(make, results), out, stem, options)
        for stem, make in makers.items()
        if only is None or stem in only
    ]
