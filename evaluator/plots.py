"""Bode plots: mean gain and mean phase error against frequency, one panel per family, one curve per submission."""

from __future__ import annotations

import math
from pathlib import Path

# A bare Figure renders to PNG through Agg without pyplot: no display, no global figure state,
# and a lighter import.
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from mathbode.schema.layout import layout

from .files import COMPLIANCE_PLOT, MIDBAND_PLOT, PLOT_FILE, STEP_PLOT, figure_files
from .scoring import Scored

# (metric, axis label, ideal value, least half-span shown around the ideal so that numerical
# noise on a near-perfect curve is not magnified into a dramatic-looking line)
_ROWS = (
    ("gain", "gain (model / truth amplitude)", 1.0, 0.1),
    ("phase_err_deg", "phase error (deg; < 0 = lag)", 0.0, 10.0),
)


def _no_answers(results: list[Scored], family: str) -> bool:
    return all(not (r.summary[r.summary["family"] == family]["compliance"] > 0).any() for r in results)


def bode_figure(results: list[Scored]) -> Figure:
    """Gain (top row) and phase error (bottom row) per family, a curve per submission."""
    families = [f for f in dict.fromkeys(f for r in results for f in r.families)]
    frequencies = sorted({float(f) for r in results for f in r.summary["frequency_cycles"]})
    cols = max(1, len(families))
    width, height = max(5.5, 1.0 + 2.9 * cols), 5.6
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(2, cols, squeeze=False, sharex=True, sharey="row")
    for col, family in enumerate(families):
        for row, (metric, ylabel, ideal, _) in enumerate(_ROWS):
            ax = axes[row][col]
            drawn = False
            for r in results:
                data = r.summary[r.summary["family"] == family]
                ax.plot(data["frequency_cycles"], data[metric], marker="o", markersize=3, label=r.label)
                drawn = drawn or bool(data[metric].notna().any())
            if not drawn:
                # Say it in the panel rather than leave an empty frame that looks broken.
                why = "no compliant answers" if _no_answers(results, family) else "too few compliant\nanswers per sweep"
                ax.text(
                    0.5,
                    0.72,
                    why,
                    transform=ax.transAxes,
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="dimgray",
                    bbox={"facecolor": "white", "edgecolor": "none"},
                )
            ax.axhline(ideal, color="grey", linestyle="--", linewidth=0.8)
            ax.ticklabel_format(axis="y", useOffset=False)
            ax.set_xscale("log", base=2)
            if frequencies:  # fixed limits: an all-n/a panel still shows the frequency axis
                ax.set_xlim(frequencies[0] / 1.4, frequencies[-1] * 1.4)
            # Ticks only at the grid's frequencies: log-axis minor ticks are most of the drawing time.
            ax.xaxis.set_major_locator(FixedLocator(frequencies))
            ax.xaxis.set_major_formatter(FixedFormatter([f"{f:g}" for f in frequencies]))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.grid(True, alpha=0.3)
            if row == 0:
                ax.set_title(family, fontsize=9)
            else:
                ax.set_xlabel("cycles per 64 steps", fontsize=8)
            if col == 0:
                ax.set_ylabel(ylabel, fontsize=8)
            ax.tick_params(labelsize=7, labelleft=True)
    # The panels of a row share their y axis: its limits come from every family's values at once
    # (setting them panel by panel let the last panel's range hide the others' points).
    for row, (metric, _, ideal, half_span) in enumerate(_ROWS):
        values = [v for r in results for v in r.summary[metric] if math.isfinite(v)]
        lo, hi = min([ideal - half_span, *values]), max([ideal + half_span, *values])
        pad = 0.05 * (hi - lo)
        axes[row][0].set_ylim(lo - pad, hi + pad)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), frameon=False, fontsize=8)
    fig.suptitle("MathBode: Bode plot of reasoning", fontsize=10)
    # Fixed margins, in inches (one family reads as well as five); tight_layout costs about half a
    # second per figure.
    fig.subplots_adjust(left=0.85 / width, right=1 - 0.15 / width, top=0.9, bottom=0.16, wspace=0.35, hspace=0.12)
    return fig


#: Every figure file a report may have.
PLOT_FILE_NAMES = tuple(name for name, _ in figure_files(sinusoid=True, chirp=True, step=True))
#: The figures drawn by the background worker; the caller draws the rest meanwhile (2 cores).
WORKER_SHARE = (PLOT_FILE, STEP_PLOT, COMPLIANCE_PLOT, MIDBAND_PLOT)


def bode_plot(results: list[Scored], out: Path, only: tuple[str, ...] | None = None) -> Path:
    """Write `bode.png` and the report's other figures into `out` (`only`: just these files)."""
    from .figures import draw_figures

    path = out / PLOT_FILE
    if any(len(r.summary) for r in results) and (only is None or PLOT_FILE in only):
        bode_figure(results).savefig(path, dpi=90, metadata={"Software": None})
    lay = layout()
    draw_figures(results, out, lay.step_switch, lay.time_steps, only)
    return path
