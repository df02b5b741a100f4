"""The paired release's figures (GAP, docs/variants.md).

- `variants`: like GAP's figure 3, each model's MB-Core on the original and on each of its
  variants (original, DL, DLC, DLM, GS, kernel along the axis), one line a model, a panel per
  original family;
- `variants_bode`: the Bode curves (gain and phase error against frequency) of each original and
  its variants on the same axes, two rows of panels a submission. The Bode plot and the fit
  quality draw the variants thin in their original's panel (`figures.paired_columns`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..results import Results
from .figures import _at_least, _finish, _frequency_axis, _grid, drawn
from .files import VARIANTS_BODE, VARIANTS_FIGURE, FigureOptions, report_figures

#: The order variants are drawn in, the original first.
ORDER = ("original", "DL", "DLC", "DLM", "GS", "kernel")


def _originals(results: list[Results]) -> list[str]:
    return list(dict.fromkeys(o for r in results for o in r.extra.get("variants", {})))


def _points(r: Results, original: str) -> dict[str, float]:
    """Kind -> the family's MB-Core (original: its own)."""
    found = r.extra.get("variants", {}).get(original, {})
    out = {"original": float(r.families.get(original, {}).get("mb_core", np.nan))}
    for kind, entry in found.items():
        out[kind] = float(r.families.get(entry["family"], {}).get("mb_core", np.nan))
    return out


def variants_figure(results: list[Results]) -> Figure:
    originals = _originals(results)
    labels = [r.label for r in results]
    fig, axes = _grid(1, len(originals), "MB-Core on each original and its variants (GAP)", labels)
    for col, original in enumerate(originals):
        ax = axes[0][col]
        for r in results:
            points = _points(r, original)
            kinds = [k for k in ORDER if k in points]
            ax.plot(range(len(kinds)), [points[k] for k in kinds], marker="o", label=r.label)
            ax.set_xticks(range(len(kinds)), kinds, fontsize=7)
        ax.set_ylim(-0.02, 1.02)
    _finish(fig, axes, originals, ["MB-Core"], "variant")
    return fig


def variants_bode_figure(results: list[Results]) -> Figure:
    """Each submission's two rows (gain, phase error) of panels, a column per original, each
    original's variants on its axes (a colour per kind, the kernel variant dashed)."""
    originals = _originals(results)
    frequencies = sorted({float(f) for r in results for f in r.summary["frequency_cycles"]})
    title = "Bode curves of each original and its variants" + (f": {results[0].label}" if len(results) == 1 else "")
    fig, axes = _grid(2 * len(results), len(originals), title, list(ORDER))
    ylabels: list[str] = []
    for n, r in enumerate(results):
        found = r.extra.get("variants", {})
        gain_row, phase_row = axes[2 * n], axes[2 * n + 1]
        gains: list[float] = []
        phases: list[float] = []
        for col, original in enumerate(originals):
            families = {"original": original, **{k: e["family"] for k, e in found.get(original, {}).items()}}
            for kind in ORDER:
                if kind not in families:
                    continue
                data = r.summary[r.summary["family"] == families[kind]]
                x = data["frequency_cycles"].astype(float)
                style = {"linestyle": "--" if kind == "kernel" else "-", "marker": "o", "markersize": 3, "label": kind}
                gain_row[col].plot(x, data["gain"].astype(float), **style)
                phase_row[col].plot(x, data["phase_err_deg"].astype(float), **style)
                gains += data["gain"].astype(float).tolist()
                phases += data["phase_err_deg"].astype(float).tolist()
            for ax in (gain_row[col], phase_row[col]):
                _frequency_axis(ax, frequencies)
        # As the Bode plot's axes: the exact answers' gain 1 +- 1e-5 and phase 1e-13 degrees are
        # rounding, not signal (they filled the panels, under a "1e-5+1" offset). Each row one y range.
        _at_least(gain_row, 1.0, 0.1, gains)
        _at_least(phase_row, 0.0, 10.0, phases)
        named = "" if len(results) == 1 else f"{r.label}: "
        ylabels += [f"{named}gain", f"{named}phase error (deg)"]
    _finish(fig, axes, originals, ylabels, "cycles per 64 steps")
    return fig


def draw_variant_figures(
    results: list[Results], out: Path, only: tuple[str, ...] | None, options: FigureOptions
) -> list[Path]:
    """The paired release's figures these results get (`only`: just these stems)."""
    makers = {VARIANTS_FIGURE: variants_figure, VARIANTS_BODE: variants_bode_figure}
    return [
        drawn(partial(makers[stem], results), out, stem, options)
        for stem, _ in report_figures(results)
        if stem in makers and (only is None or stem in only)
    ]
