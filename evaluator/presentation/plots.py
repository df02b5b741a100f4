"""Bode plots: mean gain and mean phase error against frequency, one panel per family, one curve per submission."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np

# A bare Figure renders through Agg (or the SVG and PDF backends) without pyplot: no display, no
# global figure state, and a lighter import.
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter, NullLocator

from mathbode.schema.layout import layout

from ..results import Results
from ..table import Table
from .figures import (
    VARIANT_STYLE,
    _frequency_axis,
    _grid,
    band_starts,
    draw_figures,
    drawn,
    fixed_y_ticks,
    legend_columns,
    paired_columns,
    panel_title,
    pin_unlabelled,
    variants_legend,
)
from .files import (
    BODE,
    COMPLIANCE,
    DEFAULT_FIGURES,
    MIDBAND,
    STEP_FIGURE,
    VARIANTS_BODE,
    VARIANTS_FIGURE,
    FigureOptions,
    figure_stems,
)
from .multitone_figures import draw_multitone_figures
from .variant_figures import draw_variant_figures

#: Gains below this are not drawn (a log axis has no 0) but named in the panel: answers that barely move.
GAIN_FLOOR = 1e-3


def _no_answers(results: list[Results], family: str) -> bool:
    return all(not (r.summary[r.summary["family"] == family]["compliance"] > 0).any() for r in results)


def _dodge(frequencies: np.ndarray, i: int, n: int) -> np.ndarray:
    """Each submission's points a little apart on the log axis, so their error bars do not hide each other."""
    return frequencies * 2 ** (0.06 * (i - (n - 1) / 2))


def _bars(data: Table, value: str, low: str, high: str) -> np.ndarray | None:
    """[below, above] error-bar lengths from the interval columns (None without intervals)."""
    if low not in data:
        return None
    y = data[value].astype(float)
    below = np.clip(y - data[low].astype(float), 0, None)
    above = np.clip(data[high].astype(float) - y, 0, None)
    return np.nan_to_num(np.array([below, above]))


def _say(ax: Axes, text: str, y: float = 0.5) -> None:
    box = {"facecolor": "white", "edgecolor": "none", "alpha": 0.85}
    ax.text(0.5, y, text, transform=ax.transAxes, ha="center", va="center", fontsize=7, color="dimgray", bbox=box)


def bode_figure(results: list[Results]) -> Figure:
    """Gain (top row, log axis) and phase error (bottom row) per family, a curve per submission,
    each panel at its own scale, with the 95 % intervals (t, over sweeps) as error bars when computed."""
    # A paired release's variants are drawn thin in their original's panel (`paired_columns`).
    families, variants = paired_columns(results)
    frequencies = sorted({float(f) for r in results for f in r.summary["frequency_cycles"]})
    labels = [r.label for r in results] + [str(h.get_label()) for h in variants_legend(variants)]
    intervals = any("gain_low" in r.summary for r in results)
    title = "MathBode: Bode plot of reasoning" + (" (bars: 95 % t intervals over sweeps)" if intervals else "")
    # Each panel at its own scale; many families wrap onto bands of panels.
    fig, axes = _grid(
        2, len(families), title, labels, column_width=3.0, row_height=2.3, left=0.95, wspace=0.4,
        hspace=0.12,
    )  # fmt: skip
    width = fig.get_figwidth()
    starts = band_starts(axes)
    for col, family in enumerate(families):
        gain_ax, phase_ax = axes[0][col], axes[1][col]
        gains: list[float] = []
        phases: list[float] = []
        zero_gain: list[str] = []
        for i, r in enumerate(results):
            data = r.summary[r.summary["family"] == family]
            x = _dodge(data["frequency_cycles"].astype(float), i, len(results))
            g = data["gain"].astype(float)
            shown = np.where(g >= GAIN_FLOOR, g, np.nan)  # a log axis has no 0: such gains are named instead
            if (g < GAIN_FLOOR).any():
                zero_gain.append(r.label)
            bars = _bars(data, "gain", "gain_low", "gain_high")
            if bars is not None:  # a bar may not reach below the floor on a log axis
                bars[0] = np.minimum(bars[0], np.nan_to_num(shown - GAIN_FLOOR / 2))
            drawn = gain_ax.errorbar(
                x, shown, yerr=bars, marker="o", markersize=3, capsize=2, linewidth=1, label=r.label
            )
            # A phase of answers that barely move is noise (+117 degrees was drawn at a gain of 4e-6).
            p = np.where(g >= GAIN_FLOOR, data["phase_err_deg"].astype(float), np.nan)
            colour = drawn.lines[0].get_color()
            for variant in variants.get(family, []):
                other = r.summary[r.summary["family"] == variant]
                vx, vg = _dodge(other["frequency_cycles"].astype(float), i, len(results)), other["gain"].astype(float)
                vp = np.where(vg >= GAIN_FLOOR, other["phase_err_deg"].astype(float), np.nan)
                vg = np.where(vg >= GAIN_FLOOR, vg, np.nan)
                gain_ax.plot(vx, vg, color=colour, **VARIANT_STYLE)
                phase_ax.plot(vx, vp, color=colour, **VARIANT_STYLE)
                gains += [v for v in vg if math.isfinite(v)]
                phases += [v for v in vp if math.isfinite(v)]
            phase_bars = _bars(data, "phase_err_deg", "phase_err_low_deg", "phase_err_high_deg")
            phase_ax.errorbar(x, p, yerr=phase_bars, marker="o", markersize=3, capsize=2, linewidth=1)
            gains += [v for v in shown if math.isfinite(v)]
            phases += [v for v in p if math.isfinite(v)]
            if phase_bars is not None:
                phases += [v for v in np.concatenate([p - phase_bars[0], p + phase_bars[1]]) if math.isfinite(v)]
            if bars is not None:
                gains += [v for v in (shown - bars[0]) if math.isfinite(v) and v > 0]
                gains += [v for v in (shown + bars[1]) if math.isfinite(v)]
        _gain_axis(gain_ax, gains)
        _phase_axis(phase_ax, phases)
        if not gains and not phases:
            why = "no compliant answers" if _no_answers(results, family) else "too few compliant\nanswers per sweep"
            _say(gain_ax, why)
        elif not phases:
            _say(phase_ax, "no phase: the answers\ndo not move", 0.75)
        if zero_gain and (gains or phases):
            _say(gain_ax, f"gain below {GAIN_FLOOR:g} (off the axis):\n" + ", ".join(zero_gain), 0.12)
        for ax in (gain_ax, phase_ax):
            _frequency_axis(ax, frequencies)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=7)
        fixed_y_ticks([phase_ax])
        panel_title(gain_ax, family, pinned=fixed_y_ticks([gain_ax]))
        phase_ax.set_xlabel("cycles per 64 steps", fontsize=8)
        if col in starts:
            gain_ax.set_ylabel("gain (model / truth swing)", fontsize=8)
            phase_ax.set_ylabel("phase error (deg; < 0 = lag)", fontsize=8)
        pin_unlabelled(gain_ax)
        pin_unlabelled(phase_ax)
    handles, labels = axes[0][0].get_legend_handles_labels()
    extra = variants_legend(variants)
    handles, labels = [*handles, *extra], [*labels, *(str(h.get_label()) for h in extra)]
    fig.legend(handles, labels, loc="lower center", ncol=legend_columns(labels, width), frameon=False, fontsize=8)
    return fig


def _gain_axis(ax: Axes, values: list[float]) -> None:
    """A log axis from the family's own values, always showing the ideal 1."""
    ax.set_yscale("log")
    lo, hi = min([0.8, *values]) / 1.3, max([1.25, *values]) * 1.3
    ax.set_ylim(lo, hi)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    ticks = _log_ticks(lo, hi)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FixedFormatter([f"{t:g}" for t in ticks]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_formatter(NullFormatter())


#: Tick mantissas for a log axis, sparsest first.
_MANTISSAS = (
    (1, 2, 5),
    (1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9),
    (1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 9),
)
#: Within a decade, neighbouring labels at most this factor apart: a gain of 1.05-1.8 between
#: labels 1 and 2 alone could not be read.
_MAX_LABEL_RATIO = 1.6


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Plain-number ticks for a log axis: 1, 2, 5 per decade on a wide axis (at most about 7
    labels, always with the ideal 1); on an axis within a decade, dense enough that no two
    neighbouring labels (nor a label and the axis' end) are more than _MAX_LABEL_RATIO apart."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    narrow = hi / lo <= 10
    ticks: list[float] = []
    for digits in _MANTISSAS:
        ticks = sorted({round(d * 10.0**e, 12) for e in decades for d in digits if lo <= d * 10.0**e <= hi})
        edges = [lo, *ticks, hi]
        widest = max(b / a for a, b in zip(edges, edges[1:], strict=False))
        if len(ticks) >= 3 and (not narrow or widest <= _MAX_LABEL_RATIO):
            break
    if narrow:
        return ticks
    stride = max(1, math.ceil(len(ticks) / 7))
    anchor = ticks.index(1.0) if 1.0 in ticks else 0
    return [t for i, t in enumerate(ticks) if (i - anchor) % stride == 0]


def _phase_axis(ax: Axes, values: list[float]) -> None:
    """The family's own range, at least +-10 degrees around the ideal 0 (noise on a near-perfect
    curve is not magnified into a dramatic-looking line)."""
    lo, hi = min([-10.0, *values]), max([10.0, *values])
    pad = 0.08 * (hi - lo)
    ax.set_ylim(lo - pad, hi + pad)
    ax.axhline(0.0, color="grey", linestyle="--", linewidth=0.8)
    ax.ticklabel_format(axis="y", useOffset=False)


#: Every figure a report may have, by stem.
FIGURE_STEMS = (
    *(stem for stem, _ in figure_stems(sinusoid=True, chirp=True, step=True, multitone=True)),
    VARIANTS_FIGURE,
    VARIANTS_BODE,
)
#: The figures drawn by the background worker; the caller draws the rest meanwhile (2 cores).
WORKER_SHARE = (BODE, STEP_FIGURE, COMPLIANCE, MIDBAND)


def bode_plot(
    results: list[Results], out: Path, only: tuple[str, ...] | None = None, options: FigureOptions = DEFAULT_FIGURES
) -> Path:
    """Write the Bode plot and the report's other figures into `out` (`only`: just these stems)."""
    if any(len(r.summary) for r in results) and (only is None or BODE in only):
        drawn(partial(bode_figure, results), out, BODE, options)
    lay = layout()
    draw_figures(results, out, lay.step_switch, lay.time_steps, only, options)
    draw_variant_figures(results, out, only, options)
    draw_multitone_figures(results, out, only, options)
    return out / options.file(BODE)
