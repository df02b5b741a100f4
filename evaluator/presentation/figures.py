"""The report's other figures: the paper's diagnostic set, the chirp curves and the step responses.

Each figure is a grid with a column per family and a curve (or bar) per submission; its size and
margins are set in inches, so one family gets as readable a figure as five.
"""

from __future__ import annotations

import gc
import math
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator, NullLocator
from matplotlib.transforms import Bbox

from ..curves import MIN_WINDOW_CYCLES, family_curves, window_cycles
from ..results import Results
from .files import (
    CHIRP_FIGURE,
    COMPLIANCE,
    DEFAULT_FIGURES,
    FAMILY_COLUMNS,
    FIT_QUALITY,
    MIDBAND,
    STEP_FIGURE,
    FigureOptions,
    report_figures,
)

#: The paper's diagnostic figures: (column of frequency_summary.csv, axis label, ideal value).
PAPER_ROWS = (
    ("r2", "R2 of the sine fit", 1.0),
    ("res_acf1", "residual ACF(1)", 0.0),
    ("h2_over_h1", "H2 / H1", 0.0),
    ("res_rms_norm", "residual RMS / truth amplitude", 0.0),
)


def legend_columns(labels: list[str], width: float, fontsize: float = 8) -> int:
    """How many legend entries fit side by side across `width` inches (each as wide as the longest)."""
    entry = 0.6 + max((len(label) for label in labels), default=1) * 0.0085 * fontsize
    return max(1, min(len(labels), int((width - 0.4) // entry)))


def legend_rows(labels: list[str], width: float, fontsize: float = 8) -> int:
    return math.ceil(len(labels) / legend_columns(labels, width, fontsize)) if labels else 0


#: At most this many families side by side; more wrap onto further bands of panels, so no figure
#: grows past about 1,700 px at the default resolution (a paired release's 30 families in one row
#: drew 8,208 px wide). Six: a paired release's original and its five variants, a band each.
MAX_COLUMNS = 6
#: Between two bands of panels, in inches: one band's x tick labels and axis label, the next one's titles.
BAND_GAP = 0.85


def _grid(
    rows: int,
    cols: int,
    title: str,
    labels: list[str],
    *,
    linked: bool = False,
    column_width: float = 2.9,
    row_height: float = 2.1,
    left: float = 0.85,
    wspace: float = 0.3,
    hspace: float = 0.15,
) -> tuple[Figure, np.ndarray]:
    """A figure whose margins are fixed in inches, so labels fit with one column or with five, and
    the legend (`labels`) below the panels in as many rows as it needs. `axes[row][col]` is family
    `col`'s panel `row`: families beyond MAX_COLUMNS wrap onto another band of `rows` panels, each
    band labelled as the first (`_finish`).

    The panels are independent: the figure gives each one the frequency axis (`_frequency_axis`)
    and a row one y range (`same_y`, `_at_least`). Axes that matplotlib shares look across every
    sibling each time a limit is read: n^2 for n panels, 0.7 s of a 30-family report's figures.
    `linked`: shared all the same (x across every panel, y along each row), for the multi-tone
    figures, whose line axis comes from their data and whose rows take one panel's limits."""
    across = min(max(1, cols), MAX_COLUMNS)
    bands = math.ceil(max(1, cols) / across)
    width = max(6.0, left + 0.15 + column_width * across)
    below = 0.6 + 0.2 * legend_rows(labels, width)
    top, band_height = 0.65, row_height * rows
    height = top + below + bands * band_height + (bands - 1) * BAND_GAP
    fig = Figure(figsize=(width, height))
    # The panels' sizes as subplots_adjust would make them for one band (wspace and hspace are
    # fractions of a panel), placed band by band.
    w = (width - left - 0.2) / (across + wspace * (across - 1))
    h = band_height / (rows + hspace * (rows - 1))
    axes = np.empty((rows, max(1, cols)), dtype=object)
    # Row by row, as subplots makes them (fig.axes lists a row's panels together).
    for row in range(rows):
        for col in range(max(1, cols)):
            band, c = divmod(col, across)
            x0 = left + c * w * (1 + wspace)
            y0 = height - top - band * (band_height + BAND_GAP) - row * h * (1 + hspace) - h
            ax = fig.add_axes(
                (x0 / width, y0 / height, w / width, h / height),
                sharex=axes[0][0] if linked and (col or row) else None,
                sharey=axes[row][0] if linked and col else None,
            )
            if row < rows - 1:
                ax.tick_params(labelbottom=False)  # the band's bottom panel carries the x labels
            axes[row][col] = ax
    title_at(fig, title)
    return fig, axes


def title_at(fig: Figure, title: str) -> None:
    """The figure's title a fixed 0.12 in from its top (suptitle's default is a share of the height,
    which on a tall figure of many bands sank into the first panels' titles), wrapped to the width."""
    fig.suptitle(title, fontsize=10, y=1 - 0.12 / fig.get_figheight(), va="top", wrap=True)


def band_starts(axes: np.ndarray) -> list[int]:
    """The columns of `axes` (from `_grid`) that begin a band: where the y axis labels go."""
    return list(range(0, axes.shape[1], MAX_COLUMNS))


def _frequency_axis(ax: Axes, frequencies: list[float]) -> None:
    ax.set_xscale("log", base=2)
    if frequencies:  # fixed limits: an all-n/a panel still shows the frequency axis
        ax.set_xlim(frequencies[0] / 1.4, frequencies[-1] * 1.4)
    # Ticks only at the grid's frequencies: log-axis minor ticks are most of the drawing time.
    ax.xaxis.set_major_locator(FixedLocator(frequencies))
    ax.xaxis.set_major_formatter(FixedFormatter([f"{f:g}" for f in frequencies]))
    ax.xaxis.set_minor_locator(NullLocator())


def same_y(axes: np.ndarray) -> None:
    """Each row of panels one y range, the range matplotlib's autoscale makes of the whole row's
    data (what a row of shared axes shows), set on each panel once."""
    for row in axes:
        leader = row[0]
        for ax in row[1:]:
            if np.isfinite(ax.dataLim.intervaly).all():  # a panel with nothing drawn has no limits
                leader.update_datalim(ax.dataLim.get_points(), updatex=False)
        leader.autoscale_view(scalex=False)
        limits = leader.get_ylim()
        for ax in row[1:]:
            ax.set_ylim(limits)


def _finish(
    fig: Figure,
    axes: np.ndarray,
    families: list[str],
    ylabels: list[str],
    xlabel: str,
    extra: Sequence[Line2D] = (),
) -> None:
    """Ticks, titles, axis labels and the legend (and `extra` entries after the submissions'). Last,
    once every limit is set: each row's y ticks are fixed from its limits (`fixed_y_ticks`)."""
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7, labelleft=True)
        ax.yaxis.set_major_locator(MaxNLocator(5))  # few ticks: making them is most of the drawing time
    fixed = fixed_y_ticks(axes[0])
    for col, family in enumerate(families):
        panel_title(axes[0][col], family, pinned=fixed)
        axes[-1][col].set_xlabel(xlabel, fontsize=8)
    for row, label in enumerate(ylabels):
        for col in band_starts(axes):
            axes[row][col].set_ylabel(label, fontsize=8)
    for row in axes[1:]:
        fixed_y_ticks(row)
    for ax in axes.flat:
        pin_unlabelled(ax)
    handles, labels = axes[0][0].get_legend_handles_labels()
    handles, labels = [*handles, *extra], [*labels, *(str(h.get_label()) for h in extra)]
    if labels:
        ncol = legend_columns(labels, fig.get_figwidth())
        fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, fontsize=8)


def fixed_y_ticks(panels: Sequence[Axes]) -> bool:
    """Fix the y ticks of panels that show one y range, worked out once from the first panel's
    locator and formatter: matplotlib works them out for each panel at each draw, and makes a tick
    (two lines, a grid line, two texts) for every place its locator gives, in view or not. Only the
    ticks in view are kept, labelled as matplotlib labels them. Left as they are when the labels
    need an offset or a multiplier ("1e-5+1"), which fixed labels cannot show. True when the
    labels are fixed (a log axis's are, by `plots._gain_axis`), so no offset text can show."""
    axis = panels[0].yaxis
    if axis.get_scale() != "linear":
        return isinstance(axis.get_major_formatter(), FixedFormatter)
    places = [float(place) for place in axis.get_major_locator()()]
    formatter = axis.get_major_formatter()
    labels = formatter.format_ticks(places)
    if formatter.get_offset():
        return False
    low, high = sorted(axis.get_view_interval())
    slack = (high - low) * 1e-10  # matplotlib's own allowance for a tick at an end of the axis
    shown = [i for i, place in enumerate(places) if low - slack <= place <= high + slack]
    for ax in panels:
        ax.yaxis.set_major_locator(FixedLocator([places[i] for i in shown]))
        ax.yaxis.set_major_formatter(FixedFormatter([labels[i] for i in shown]))
    return True


def panel_title(ax: Axes, text: str, pinned: bool) -> None:
    """A panel's title; `pinned` (no offset text can sit above the panel): at its place, which
    matplotlib would otherwise work out at each draw by measuring the panel's y tick labels."""
    ax.set_title(text, fontsize=9, y=1.0 if pinned else None)


def pin_unlabelled(ax: Axes) -> None:
    """An axis without a label gets its label's place fixed: matplotlib measures every tick label
    to place even an empty one (most panels of a grid, each draw)."""
    for axis in (ax.xaxis, ax.yaxis):
        if not axis.get_label_text():
            axis.set_label_coords(0.5, 0.5)


def _families(results: list[Results]) -> list[str]:
    return list(dict.fromkeys(f for r in results for f in r.families))


#: How a paired release's variants are drawn in their original's panel: thin, faint, in the
#: submission's colour, behind its original (variants_bode.png tells them apart by kind).
VARIANT_STYLE = {"linewidth": 0.7, "alpha": 0.45, "zorder": 1}
#: The legend's entry for them (a grey line: they take each submission's colour).
VARIANTS_LABEL = "thin: the family's variants (variants_bode.png names them)"


def paired_columns(results: list[Results]) -> tuple[list[str], dict[str, list[str]]]:
    """The families a figure gives a column, and each one's variants drawn in its panels: a paired
    release's variants (GAP) are read beside their original, so 30 families make 5 columns, not
    30 (the panels are most of a figure's cost, and a variant's panel repeats its original's axes)."""
    variants: dict[str, list[str]] = {}
    for r in results:
        for original, kinds in r.extra.get("variants", {}).items():
            names = variants.setdefault(original, [])
            names += [e["family"] for e in kinds.values() if e["family"] not in names]
    members = {v for names in variants.values() for v in names}
    return [f for f in _families(results) if f not in members], variants


def variants_legend(variants: dict[str, list[str]]) -> list[Line2D]:
    """The legend handle that says what the thin lines are (none when no family has variants)."""
    if not any(variants.values()):
        return []
    style = VARIANT_STYLE
    return [Line2D([], [], color="grey", linewidth=style["linewidth"], alpha=style["alpha"], label=VARIANTS_LABEL)]


def paper_figures(results: list[Results]) -> Figure:
    """R2, residual ACF(1), H2/H1 and residual RMS against frequency (the paper's diagnostic set)."""
    families, variants = paired_columns(results)
    frequencies = sorted({float(f) for r in results for f in r.summary["frequency_cycles"]})
    title = "Fit quality and nonlinearity against frequency"
    labels = [r.label for r in results] + [str(h.get_label()) for h in variants_legend(variants)]
    fig, axes = _grid(len(PAPER_ROWS), max(1, len(families)), title, labels)
    for col, family in enumerate(families):
        for row, (metric, _, ideal) in enumerate(PAPER_ROWS):
            ax = axes[row][col]
            shown = False
            for r in results:
                data = r.summary[r.summary["family"] == family]
                (line,) = ax.plot(data["frequency_cycles"], data[metric], marker="o", markersize=3, label=r.label)
                shown = shown or bool(np.isfinite(data[metric].astype(float)).any())
                for variant in variants.get(family, []):
                    other = r.summary[r.summary["family"] == variant]
                    ax.plot(other["frequency_cycles"], other[metric], color=line.get_color(), **VARIANT_STYLE)
            ax.axhline(ideal, color="grey", linestyle="--", linewidth=0.8)
            _frequency_axis(ax, frequencies)
            if not shown:  # an empty panel must say why, not look like a failed drawing
                ax.text(
                    0.5,
                    0.5,
                    "n/a at every frequency",
                    transform=ax.transAxes,
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="dimgray",
                )
    same_y(axes)
    _finish(
        fig, axes, families, [label for _, label, _ in PAPER_ROWS], "cycles per 64 steps", variants_legend(variants)
    )
    return fig


def _at_least(row: Sequence[Axes], ideal: float, half_span: float, values: list[float]) -> None:
    """A row's limits from its values, but never narrower than ideal +- half_span: rounding noise on
    an exact curve (gain 1 +- 1e-5) must not fill the panel as if it were signal."""
    finite = [v for v in values if math.isfinite(v)]
    lo, hi = min([ideal - half_span, *finite]), max([ideal + half_span, *finite])
    pad = 0.06 * (hi - lo)
    for ax in row:
        ax.set_ylim(lo - pad, hi + pad)
        ax.ticklabel_format(axis="y", useOffset=False, style="plain")


def _condition_suffix(r: Results) -> str:
    """' (format constrained (gbnf))' for a run whose server constrained the answer format."""
    fmt = (r.extra.get("conditions") or {}).get("answer_format", "free")
    return "" if fmt == "free" else f" (format {fmt})"


#: The compliance figure's bars span at most this many inches a row; more families wrap onto another
#: row of bars (30 families of 3 submissions drew 5,130 px wide).
COMPLIANCE_ROW_INCHES = 16.0


def compliance_figure(results: list[Results]) -> Figure:
    """Compliance by family: one bar per submission, the compliant share of the rows it answered,
    labelled with it and with the rows not answered (a row not answered is not a non-compliant
    answer); a family a submission did not answer is marked "not answered" (not a bar of 0 %).
    Many families wrap onto several rows of bars."""
    families = _families(results)
    n = max(1, len(results))
    slot = 0.45 * n + 0.5  # inches a family's bars take
    per_row = max(1, min(len(families), int(COMPLIANCE_ROW_INCHES // slot)))
    chunks = [families[i : i + per_row] for i in range(0, len(families), per_row)] or [[]]
    width = max(6.0, 1.6 + slot * per_row)
    # A name wider than its slot is written upright (7 pt: about 0.06 in a character), with room below.
    longest = max((len(f) for f in families), default=0) * 0.06
    upright = longest > 0.95 * slot
    names_height = longest + 0.15 if upright else 0.25
    labels = [f"{r.label}{_condition_suffix(r)}" for r in results]
    rows = legend_rows(labels, width, 7)
    top, panel, bottom = 0.45, 2.6, names_height + 0.3 + 0.2 * rows
    height = top + len(chunks) * panel + (len(chunks) - 1) * (names_height + 0.2) + bottom
    fig = Figure(figsize=(width, height))
    bar = 0.8 / n
    for k, chunk in enumerate(chunks):
        y0 = height - top - k * (panel + names_height + 0.2) - panel
        ax = fig.add_axes((0.8 / width, y0 / height, 1 - 1.0 / width, panel / height))
        for i, r in enumerate(results):
            x = np.arange(len(chunk)) + (i - (n - 1) / 2) * bar
            counts = r.extra.get("answered_rows") or {}
            values, missing = [], []
            for f in chunk:
                c = counts.get(f)
                if f not in r.families:
                    values.append(math.nan)
                    missing.append(0)
                elif c and c["answered"]:
                    values.append(c["compliant"] / c["answered"])
                    missing.append(c["rows"] - c["answered"])
                else:
                    values.append(r.families[f]["compliance_mean"])
                    missing.append(0)
            bars = ax.bar(x, np.nan_to_num(values), width=bar * 0.92, label=labels[i] if k == 0 else None)
            for xi, value, gap, patch in zip(x, values, missing, bars, strict=True):
                text = "not answered" if math.isnan(value) else f"{100 * value:.1f} %"
                if gap and not math.isnan(value):
                    text += f"; {gap:,} not answered"
                top_of = 0.0 if math.isnan(value) else value
                ax.text(
                    xi, top_of + 0.02, text, rotation=90, ha="center", va="bottom", fontsize=6,
                    color=patch.get_facecolor(),
                )  # fmt: skip
        ax.set_xticks(np.arange(len(chunk)), chunk, fontsize=7, rotation=90 if upright else 0)
        # The same slots in every row, so a family's bars are as wide in a short last row.
        ax.set_xlim(-0.5, per_row - 0.5)
        ax.set_ylim(0, 1.42)  # room above a full bar for its label
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "25 %", "50 %", "75 %", "100 %"])
        ax.set_ylabel("compliant share of answered rows", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    fig.legend(loc="lower center", ncol=legend_columns(labels, width, 7), frameon=False, fontsize=7)
    title_at(fig, "Compliance by family (bars labelled with their share)")
    return fig


def midband_table(results: list[Results]) -> Figure:
    """The mid-band summary table: per submission and family, the numbers MB-Core and MB-Plus are made of."""
    header = ["submission", "family", *(name for _, name, _ in FAMILY_COLUMNS)]
    cells = [
        [
            r.label,
            fam,
            *("n/a" if s.get(k) is None or s[k] != s[k] else f"{s[k]:.{min(d, 3)}f}" for k, _, d in FAMILY_COLUMNS),
        ]
        for r in results
        for fam, s in r.families.items()
    ] or [["-"] * len(header)]
    # Each column as wide as its longest text (about 0.065 in per character at 7 pt), so no text
    # leaves its cell.
    widths = [0.25 + 0.065 * max(len(row[c]) for row in [header, *cells]) for c in range(len(header))]
    width, height = sum(widths) + 0.4, 0.9 + 0.24 * (len(cells) + 1)
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0.2 / width, 0.15 / height, 1 - 0.4 / width, 1 - 0.75 / height))
    ax.axis("off")
    table = ax.table(
        cellText=cells,
        colLabels=header,
        colWidths=[w / sum(widths) for w in widths],
        loc="upper center",
        cellLoc="center",
        bbox=Bbox.from_bounds(0, 0, 1, 1),
    )
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    fig.suptitle("Mid-band summary (frequencies 4 and 8; phase in degrees)", fontsize=10)
    return fig


def chirp_figure(results: list[Results]) -> Figure:
    """Chirp gain and phase error against instantaneous frequency, with the sinusoid points over them."""
    families = [f for f in _families_with(results, "chirp")]
    frequencies = [1.0, 2.0, 4.0, 8.0, 16.0]
    title = "Chirp against the sinusoids (dots); dotted: windows under a cycle"
    fig, axes = _grid(2, max(1, len(families)), title, [f"{r.label} (chirp)" for r in results])
    curves = [family_curves(r.chirp) for r in results]  # one groupby per submission
    drawn: dict[int, list[list[float]]] = {}
    for col, family in enumerate(families):
        values: list[list[float]] = [[], []]
        for r, by_family in zip(results, curves, strict=True):
            curve = by_family.get(family)
            if not curve:
                continue
            # Windows holding under a cycle cannot tell a swing from a level: dotted, not read.
            held = [window_cycles(p["frequency_cycles"]) >= MIN_WINDOW_CYCLES for p in curve]
            freq = [p["frequency_cycles"] for p in curve]
            gain, phase = [p["gain"] for p in curve], [p["phase_err_deg"] for p in curve]
            solid = [i for i, ok in enumerate(held) if ok]
            weak = [i for i, ok in enumerate(held) if not ok] + solid[:1]
            (line,) = axes[0][col].plot([freq[i] for i in solid], [gain[i] for i in solid], label=f"{r.label} (chirp)")
            color = line.get_color()
            axes[1][col].plot([freq[i] for i in solid], [phase[i] for i in solid], color=color)
            axes[0][col].plot([freq[i] for i in weak], [gain[i] for i in weak], ":", color=color, linewidth=0.8)
            axes[1][col].plot([freq[i] for i in weak], [phase[i] for i in weak], ":", color=color, linewidth=0.8)
            values[0] += [gain[i] for i in solid]
            values[1] += [phase[i] for i in solid]
            points = r.summary[r.summary["family"] == family]
            if len(points):
                axes[0][col].plot(points["frequency_cycles"], points["gain"], "o", color=color, markersize=4)
                axes[1][col].plot(points["frequency_cycles"], points["phase_err_deg"], "o", color=color, markersize=4)
                values[0] += [float(v) for v in points["gain"]]
                values[1] += [float(v) for v in points["phase_err_deg"]]
        for row, ideal in enumerate((1.0, 0.0)):
            axes[row][col].axhline(ideal, color="grey", linestyle="--", linewidth=0.8)
            _frequency_axis(axes[row][col], frequencies)
        drawn[col] = values
    _at_least(axes[0], 1.0, 0.1, [v for gains, _ in drawn.values() for v in gains])
    _at_least(axes[1], 0.0, 10.0, [v for _, phases in drawn.values() for v in phases])
    _finish(fig, axes, families, ["gain", "phase error (deg)"], "cycles per 64 steps")
    return fig


def step_figure(results: list[Results], switch: int, steps: int) -> Figure:
    """The step responses r_t (model answers over the truth's jump) after the switch, mean over sweeps."""
    families = _families_with(results, "step")
    fig, axes = _grid(
        1, max(1, len(families)), "Step responses (1 = the truth's new level)", [r.label for r in results]
    )
    for col, family in enumerate(families):
        ax = axes[0][col]
        for r in results:
            curve = r.step_curves.get(family)
            if curve:
                ax.plot(range(-4, len(curve) - 4), curve, marker=".", markersize=3, label=r.label)
        ax.plot([-4, 0, 0, steps - switch], [0, 0, 1, 1], color="grey", linestyle="--", linewidth=0.8)
    same_y(axes)
    _finish(fig, axes, families, ["normalised answer r"], "steps after the switch")
    return fig


def _families_with(results: list[Results], kind: str) -> list[str]:
    table = {"chirp": lambda r: r.chirp, "step": lambda r: r.step}[kind]
    return list(dict.fromkeys(f for r in results if len(table(r)) for f in table(r)["family"]))


def save(fig: Figure, out: Path, stem: str, options: FigureOptions) -> Path:
    """Write a figure as `<stem>.<format>`; no creation date or software in it, so the bytes repeat."""
    path = out / options.file(stem)
    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[options.format]
    # Fonts as journals take them: TrueType (42) embedded in PDF and PostScript, not Type 3 (IEEE's
    # and ACM's checkers refuse Type 3); SVG text kept as text, searchable and editable, not paths.
    # A fixed salt for the SVG's element ids (random by default), so an SVG's bytes repeat too.
    with rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none", "svg.hashsalt": "mathbode"}):
        fig.savefig(path, dpi=options.dpi, format=options.format, metadata=metadata)
    return path


def drawn(make: Callable[[], Figure], out: Path, stem: str, options: FigureOptions) -> Path:
    """`save(make(), ...)` with the garbage collector held off while the figure is made and written.

    A figure is tens of thousands of objects in reference cycles (an artist and its axes, a tick
    and its axis). Making one set off the collector's full collections, each walking every object
    the process holds, the scorer's too (0.9 s of a 30-family report's figures). Its objects are
    all young: once it is written, one pass over the young generation frees them (unless the
    collector was off already: the plot worker ends with its figures)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return save(make(), out, stem, options)
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


def draw_figures(
    results: list[Results],
    out: Path,
    switch: int,
    steps: int,
    only: tuple[str, ...] | None = None,
    options: FigureOptions = DEFAULT_FIGURES,
) -> list[Path]:
    """Every figure besides the Bode plot that has something to show (`only`: just these stems)."""
    makers: dict[str, Callable[[], Figure]] = {
        FIT_QUALITY: lambda: paper_figures(results),
        COMPLIANCE: lambda: compliance_figure(results),
        MIDBAND: lambda: midband_table(results),
        CHIRP_FIGURE: lambda: chirp_figure(results),
        STEP_FIGURE: lambda: step_figure(results, switch, steps),
    }
    return [
        drawn(makers[stem], out, stem, options)
        for stem, _ in report_figures(results)
        if stem in makers and (only is None or stem in only)
    ]
