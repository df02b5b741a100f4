"""A chirp table's readings shared by both rooms: the analysis window and each family's curve.

The scorer (`scorer.transients`) measures a chirp through a sliding window of CHIRP_WINDOW
steps; the presentation (`presentation.figures`) draws each family's chirp curve from the chirp
table of a results document. Both need the window's size in drive cycles and the per-family
mean curve, so they live here, beside the results document, and neither room imports the other.
"""

from __future__ import annotations

import numpy as np

from .table import Table, compensated_means

#: Steps per chirp window (see `scorer.transients`).
CHIRP_WINDOW = 16
#: Cycles of the drive a window must hold for its reading to mean anything. Under one cycle a
#: level and a swing are hard to tell apart (the three columns of the fit are far from
#: orthogonal), so anything the template does not capture moves the gain: at the 1- and 2-cycle
#: points (0.35 and 0.5 of a cycle) a first-order low-pass read 0.57 for 0.854 and a 4-step delay
#: -60 degrees for -31. Such points are reported as n/a with the reason.
MIN_WINDOW_CYCLES = 1.0


def window_cycles(frequency_cycles: float | np.ndarray, time_steps: int = 64) -> float | np.ndarray:
    """Cycles of the drive a CHIRP_WINDOW-step window centred at this instantaneous frequency holds."""
    return frequency_cycles * CHIRP_WINDOW / time_steps


CURVE_COLUMNS = ("frequency_cycles", "gain", "phase_err_deg", "compliance")


def family_curves(chirp: Table) -> dict[str, list[dict[str, float]]]:
    """Each family's chirp curve: per window centre (ascending), the mean over its chirp sweeps."""
    curves: dict[str, list[dict[str, float]]] = {}
    cells = sorted(chirp.groups(["family", "centre_step"]), key=lambda cell: (str(cell[0][0]), cell[0][1]))
    for (family, centre), where in cells:
        means = compensated_means(chirp.numbers(CURVE_COLUMNS)[where])  # summed as pandas' grouped mean sums
        point = {"centre_step": float(centre), **dict(zip(CURVE_COLUMNS, map(float, means), strict=True))}
        curves.setdefault(str(family), []).append(point)
    return curves
