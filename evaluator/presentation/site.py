"""The leaderboard site: static pages rendered from saved results documents alone.

`build_site(folders, out)` reads the results documents of report folders (`mathbode score --out`)
and writes a site that works from `file://` and any static host, with nothing fetched at view
time: every page's data is embedded in it, and its one JavaScript library, plotly.js, is copied
from the `plotly` package into `assets/`. Pages: the leaderboard (grouped by conditions, ranked
within a group, ties shown), one per submission, one per family, and one drill-down per
submission with the answers of each of its mid-band, chirp and step sweeps; each results
document and CSV is downloadable.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import plotly
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape
from plotly.offline import get_plotlyjs

from mathbode.core.atomic import atomic_folder, check_replaceable
from mathbode.core.errors import UsageError
from mathbode.core.version import __version__
from mathbode.schema.layout import layout

from ..ranking import conditions_label, groups, unranked
from ..results import Results, from_document
from .comparison import describe
from .files import (
    CHIRP_FILE,
    FAMILY_COLUMNS,
    LEADERBOARD_FILE,
    RESULTS_FILE,
    SCORES_FILE,
    STEP_FILE,
    SUMMARY_FILE,
    SWEEPS_FILE,
    write_tables,
)
from .report import (
    BRACKETS,
    answers_text,
    compliance_note,
    conditions_notes,
    coverage_notes,
    diagnostics_lines,
    interval_notes,
    interval_text,
    leaderboard,
    na_notes,
    provenance_lines,
    repeatability_text,
    saved_documents,
)

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
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "submission"
    slug, n = base, 1
    while slug.lower() in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug.lower())
    return slug


def _num(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


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
        found = ((r.extra.get("intervals") or {}).get("overall") or {}).get("mb_core")
        return (found[0], found[1]) if found else (core, core)

    limits = [bounds(r) for r in members]
    out = [1 + sum(1 for low, _ in limits if low > high) for _, high in limits]
    return [(rank, out.count(rank) > 1) for rank in out]


def script_json(value: Any) -> str:
    """JSON to embed in a <script type="application/json"> element: every `<` escaped (JSON allows
    \\u003c), so no text in it ("</script>", "<!--") can end the element."""
    return json.dumps(value, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


def _plot(pid: str, caption: str, alt: str, data: list[dict[str, Any]], layout: dict[str, Any]) -> dict[str, Any]:
    base = {
        "margin": {"t": 10, "r": 10, "l": 60, "b": 50},
        # Above the plot, where it cannot cover the axis title, however many entries wrap on a phone.
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"},
        "hovermode": "closest",
    }
    spec = {"data": data, "layout": {**base, **layout}}
    text = script_json(spec)
    return {"id": pid, "caption": caption, "alt": alt, "json": text}


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


def bode_plots(curves: list[tuple[str, Results, str]], pid: str) -> list[dict[str, Any]]:
    """Gain (log axis) and phase error against frequency, a curve per (name, results, family),
    with the 95 % intervals as error bars when computed; hovering a point shows its values."""
    gain, phase, frequencies = [], [], set()
    for name, r, family in curves:
        rows = r.summary[r.summary["family"] == family]
        x = rows["frequency_cycles"].astype(float).tolist()
        frequencies.update(x)
        g = rows["gain"].astype(float)
        shown = [v if v is not None and v >= GAIN_FLOOR else None for v in _finite(g)]
        p = [v if s is not None else None for v, s in zip(_finite(rows["phase_err_deg"]), shown, strict=True)]
        hover = "%{fullData.name}<br>%{x:g} cycles: %{y:.4f}<extra></extra>"
        trace = {"x": x, "name": name, "type": "scatter", "mode": "lines+markers", "hovertemplate": hover}
        gain.append({**trace, "y": shown, "error_y": _bars(rows, "gain", "gain_low", "gain_high")})
        phase.append(
            {**trace, "y": p, "error_y": _bars(rows, "phase_err_deg", "phase_err_low_deg", "phase_err_high_deg")}
        )
    ticks = sorted(frequencies)
    xaxis = {
        "type": "log",
        "tickvals": ticks,
        "ticktext": [f"{f:g}" for f in ticks],
        "title": {"text": "cycles per 64 steps"},
    }
    names = ", ".join(dict.fromkeys(name for name, _, _ in curves))
    return [
        _plot(
            f"{pid}-gain",
            "Gain against frequency (log axis; 1 = tracks the drive fully), with 95 % intervals over sweeps when "
            "computed. The numbers are in the tables below.",
            f"Bode gain plot of {names}: gain against frequency on log axes",
            [{k: v for k, v in t.items() if v is not None} for t in gain],
            {
                "xaxis": xaxis,
                "yaxis": {"type": "log", "title": {"text": "gain (model / truth swing)"}},
                "shapes": [_ideal(1.0)],
            },
        ),
        _plot(
            f"{pid}-phase",
            "Phase error against frequency (degrees; below 0 = lag), with 95 % intervals over sweeps when computed.",
            f"Bode phase plot of {names}: phase error in degrees against frequency",
            [{k: v for k, v in t.items() if v is not None} for t in phase],
            {"xaxis": xaxis, "yaxis": {"title": {"text": "phase error (deg)"}}, "shapes": [_ideal(0.0)]},
        ),
    ]


def _transient_plots(r: Results, pid: str) -> list[dict[str, Any]]:
    plots = []
    if r.step_curves:
        data = [
            {
                "x": list(range(-4, len(curve) - 4)),
                "y": _finite(curve),
                "name": family,
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
                    "name": str(family),
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
                    "yaxis": {"title": {"text": "gain"}},
                },
            )
        )
    return plots


def _family_table(r: Results, root: str) -> dict[str, Any]:
    return {
        "id": "families",
        "title": "Per family",
        "header": ["family", *(name for _, name, _ in FAMILY_COLUMNS)],
        "rows": [
            [
                _cell(fam, href=f"{root}families/{fam}.html"),
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


def _downloads(slug: str, r: Results) -> list[dict[str, Any]]:
    files = [RESULTS_FILE, SCORES_FILE, SWEEPS_FILE, SUMMARY_FILE]
    files += [CHIRP_FILE] if len(r.chirp) else []
    files += [STEP_FILE] if len(r.step) else []
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
            all_families=self.families,
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
            {"name": "exact rows", "numeric": True, "optional": False},
            {"name": "compliance", "numeric": True, "optional": False},
            {"name": "families", "numeric": True, "optional": False},
        ]
        tested = {(t["first"], t["second"]): t for e in self.entries for t in e.tests}
        shown_groups = []
        for label, members in groups(results):
            rows = []
            for r, (rank, tied) in zip(members, ranks(members), strict=True):
                nc = r.extra.get("non_compliant") or {}
                compliance = nc["compliant"] / nc["lines"] if nc.get("lines") else math.nan
                accuracy = (r.extra.get("accuracy") or {}).get("rate", math.nan)
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
        )

    def submission(self, e: _Entry) -> None:
        r = e.results
        nc = r.extra.get("non_compliant") or {}
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
                notes.append(f"Brackets: {BRACKETS}.")
        figures = bode_plots([(f, r, f) for f in r.families], "bode") if len(r.summary) else []
        figures += _transient_plots(r, "transient")
        tables = [_family_table(r, "../"), _frequency_table(r)] if r.families else []
        kinds = nc.get("kinds") or {}
        cond = r.extra.get("conditions") or {}
        sections: list[dict[str, Any]] = [
            {
                "id": "compliance",
                "title": "Compliance",
                "entries": [said or f"All {nc.get('lines', 0):,} answers in scope were compliant."]
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
            f"families/{family}.html",
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
            site.sweeps(e, lay.time_steps, mid_band)
            site.data(e)
            # Its pages written, a submission's answers and document are not needed again.
            e.results.traces, e.document, e.text = [], {}, b""
        for family in site.families:
            site.family(family)
        (tmp / "data").mkdir(exist_ok=True)
        leaderboard([e.results for e in entries]).to_csv(tmp / "data" / LEADERBOARD_FILE)
    return out
