"""The report's other figures: the paper's diagnostic set, the chirp curves and the step responses.

Each figure is a grid with a column per family and a curve (or bar) per submission; its size and
margins are set in inches, so one family gets as readable a figure as five.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator, NullLocator

from .diagnostics import family_curves
from .files import CHIRP_PLOT, COMPLIANCE_PLOT, DIAGNOSTICS_PLOT, MIDBAND_PLOT, STEP_PLOT
from .report import report_figures
from .scoring import Scored

#: The paper's diagnostic figures: (column of frequency_summary.csv, axis label, ideal value).
PAPER_ROWS = (
    ("r2", "R2 of the sine fit", 1.0),
    ("res_acf1", "residual ACF(1)", 0.0),
    ("h2_over_h1", "H2 / H1", 0.0),
    ("res_rms_norm", "residual RMS / truth amplitude", 0.0),
)


def _grid(rows: int, cols: int, title: str) -> tuple[Figure, np.ndarray]:
    """A figure whose margins are fixed in inches, so labels fit with one column or with five."""
    width, height = max(5.5, 1.0 + 2.9 * cols), 0.9 + 2.1 * rows
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey="row")
    fig.subplots_adjust(
        left=0.85 / width, right=1 - 0.15 / width, top=1 - 0.65 / height, bottom=0.75 / height, wspace=0.3, hspace=0.15
    )
    fig.suptitle(title, fontsize=10)
    return fig, axes


def _frequency_axis(ax: Axes, frequencies: list[float]) -> None:
    ax.set_xscale("log", base=2)
    if frequencies:
        ax.set_xlim(frequencies[0] / 1.4, frequencies[-1] * 1.4)
    ax.xaxis.set_major_locator(FixedLocator(frequencies))
    ax.xaxis.set_major_formatter(FixedFormatter([f"{f:g}" for f in frequencies]))
    ax.xaxis.set_minor_locator(NullLocator())


def _finish(fig: Figure, axes: np.ndarray, families: list[str], ylabels: list[str], xlabel: str) -> None:
    for col, family in enumerate(families):
        axes[0][col].set_title(family, fontsize=9)
        axes[-1][col].set_xlabel(xlabel, fontsize=8)
    for row, label in enumerate(ylabels):
        axes[row][0].set_ylabel(label, fontsize=8)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7, labelleft=True)
        ax.yaxis.set_major_locator(MaxNLocator(5))  # few ticks: making them is most of the drawing time
    handles, labels = axes[0][0].get_legend_handles_labels()
    if labels:
        fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), frameon=False, fontsize=8)


def _families(results: list[Scored]) -> list[str]:
    return list(dict.fromkeys(f for r in results for f in r.families))


def paper_figures(results: list[Scored]) -> Figure:
    """R2, residual ACF(1), H2/H1 and residual RMS against frequency (the paper's diagnostic set)."""
    families = _families(results)
    frequencies = sorted({float(f) for r in results for f in r.summary["frequency_cycles"]})
    fig, axes = _grid(len(PAPER_ROWS), max(1, len(families)), "Fit quality and nonlinearity against frequency")
    for col, family in enumerate(families):
        for row, (metric, _, ideal) in enumerate(PAPER_ROWS):
            ax = axes[row][col]
            for r in results:
                data = r.summary[r.summary["family"] == family]
                ax.plot(data["frequency_cycles"], data[metric], marker="o", markersize=3, label=r.label)
            ax.axhline(ideal, color="grey", linestyle="--", linewidth=0.8)
            _frequency_axis(ax, frequencies)
    _finish(fig, axes, families, [label for _, label, _ in PAPER_ROWS], "cycles per 64 steps")
    return fig


def compliance_figure(results: list[Scored]) -> Figure:
    """Compliance by family: one bar per submission."""
    families = _families(results)
    width = max(5.5, 1.5 + 1.2 * len(families))
    fig = Figure(figsize=(width, 3.4))
    ax = fig.subplots()
    bar = 0.8 / max(1, len(results))
    for i, r in enumerate(results):
        values = [r.families[f]["compliance_mean"] if f in r.families else math.nan for f in families]
        ax.bar(np.arange(len(families)) + i * bar, values, width=bar, label=r.label)
    ax.set_xticks(np.arange(len(families)) + bar * (len(results) - 1) / 2, families, fontsize=7, rotation=15)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("compliant answers (share)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    fig.suptitle("Compliance by family", fontsize=10)
    fig.subplots_adjust(left=0.85 / width, right=1 - 0.15 / width, top=0.86, bottom=0.22)
    return fig


def midband_table(results: list[Scored]) -> Figure:
    """The mid-band summary table: per submission and family, the numbers MB-Core and MB-Plus are made of."""
    header = [
        "submission",
        "family",
        "|G-1| mid",
        "|phase| mid",
        "R2 mid",
        "|ACF1| mid",
        "compliance",
        "MB-Core",
        "MB-Plus",
    ]
    keys = [
        "gain_abs_err_mid",
        "phase_abs_deg_mid",
        "r2_mean",
        "acf1_abs_mean",
        "compliance_mean",
        "mb_core",
        "mb_plus",
    ]
    cells = [
        [r.label, fam, *("n/a" if s[k] != s[k] else f"{s[k]:.3f}" for k in keys)]
        for r in results
        for fam, s in r.families.items()
    ] or [["-"] * len(header)]
    height = 0.9 + 0.25 * len(cells)
    fig = Figure(figsize=(9.5, height))
    ax = fig.subplots()
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=header, loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    fig.suptitle("Mid-band summary (frequencies 4 and 8)", fontsize=10)
    return fig


def chirp_figure(results: list[Scored]) -> Figure:
    """Chirp gain and phase error against instantaneous frequency, with the sinusoid points over them."""
    families = [f for f in _families_with(results, "chirp")]
    frequencies = [1.0, 2.0, 4.0, 8.0, 16.0]
    fig, axes = _grid(2, max(1, len(families)), "Swept sine (chirp) against the sinusoid points")
    curves = [family_curves(r.chirp) for r in results]  # one groupby per submission
    for col, family in enumerate(families):
        for r, by_family in zip(results, curves, strict=True):
            curve = by_family.get(family)
            if not curve:
                continue
            freq = [p["frequency_cycles"] for p in curve]
            (line,) = axes[0][col].plot(freq, [p["gain"] for p in curve], label=f"{r.label} (chirp)")
            axes[1][col].plot(freq, [p["phase_err_deg"] for p in curve], color=line.get_color())
            points = r.summary[r.summary["family"] == family]
            if len(points):
                axes[0][col].plot(points["frequency_cycles"], points["gain"], "o", color=line.get_color(), markersize=4)
                axes[1][col].plot(
                    points["frequency_cycles"], points["phase_err_deg"], "o", color=line.get_color(), markersize=4
                )
        for row, ideal in enumerate((1.0, 0.0)):
            axes[row][col].axhline(ideal, color="grey", linestyle="--", linewidth=0.8)
            _frequency_axis(axes[row][col], frequencies)
    _finish(fig, axes, families, ["gain", "phase error (deg)"], "cycles per 64 steps (dots: sinusoid sweeps)")
    return fig


def step_figure(results: list[Scored], switch: int, steps: int) -> Figure:
    """The step responses r_t (model answers over the truth's jump) after the switch, mean over sweeps."""
    families = _families_with(results, "step")
    fig, axes = _grid(1, max(1, len(families)), "Step responses (1 = the truth's new level)")
    for col, family in enumerate(families):
        ax = axes[0][col]
        for r in results:
            curve = r.step_curves.get(family)
            if curve:
                ax.plot(range(-4, len(curve) - 4), curve, marker=".", markersize=3, label=r.label)
        ax.plot([-4, 0, 0, steps - switch], [0, 0, 1, 1], color="grey", linestyle="--", linewidth=0.8)
    _finish(fig, axes, families, ["normalised answer r"], "steps after the switch")
    return fig


def _families_with(results: list[Scored], kind: str) -> list[str]:
    table = {"chirp": lambda r: r.chirp, "step": lambda r: r.step}[kind]
    return list(dict.fromkeys(f for r in results if len(table(r)) for f in table(r)["family"]))


def draw_figures(
    results: list[Scored], out: Path, switch: int, steps: int, only: tuple[str, ...] | None = None
) -> list[Path]:
    """Every figure besides the Bode plot that has something to show (`only`: just these files)."""
    makers: dict[str, Callable[[], Figure]] = {
        DIAGNOSTICS_PLOT: lambda: paper_figures(results),
        COMPLIANCE_PLOT: lambda: compliance_figure(results),
        MIDBAND_PLOT: lambda: midband_table(results),
        CHIRP_PLOT: lambda: chirp_figure(results),
        STEP_PLOT: lambda: step_figure(results, switch, steps),
    }
    written = []
    for name, _ in report_figures(results):
        if name in makers and (only is None or name in only):
            makers[name]().savefig(out / name, dpi=90, metadata={"Software": None})
            written.append(out / name)
    return written
