"""What a phase error is made of: lag (common to a mirrored pair of sweeps) and per-prompt
inconsistency (opposite in the pair).

The 240-degree sweep of a (question, amplitude, frequency) visits the 120-degree sweep's values
mirrored in time. A memoryless map (a stateless model with deterministic decoding) answers the
mirrored sweep with the mirrored answers, so its phase errors in the pair are exactly opposite
(measured: same gain to 1e-13, phases summing to 7e-13), whatever its per-prompt errors; a lag
shifts both the same way. So per pair

    lag = (phi_120 + phi_240) / 2,    inconsistency = (phi_120 - phi_240) / 2,

the first a timing the model shows, the second what its per-prompt errors do to a fitted phase.
The paper's phase term, |mean phase| of a cell, averages the pair and so keeps only the lag: for a
stateless model it is about 0 in most families even when every sweep's phase is off by tens of
degrees (only `phase_spread_deg` showed that). Both parts are reported per family at the
mid-band; the paper's MB-Core is unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..table import Table
from .angles import angle_mean, wrap_degrees

#: The start phases whose sweeps mirror each other in time.
PAIR = (120.0, 240.0)


def phase_parts(sweeps: Table, mid_band: tuple[float, ...]) -> dict[str, dict[str, Any]]:
    """Per family: `lag_deg` (circular mean of the pairs' common part), `inconsistency_deg` (mean
    |opposite part|) and `pairs`, over the mirrored pairs at the mid-band frequencies whose
    both phases are measured; families without such pairs are left out."""
    if not len(sweeps) or "phase_deg" not in sweeps:
        return {}
    index: dict[tuple[Any, ...], float] = {}
    keys = zip(
        sweeps["family"],
        sweeps["question_id"],
        sweeps["amplitude_scale"],
        sweeps["frequency_cycles"],
        sweeps["phase_deg"],
        sweeps["phase_err_deg"],
        strict=True,
    )
    for family, q, amplitude, f, start, phase in keys:
        if float(f) in mid_band and float(start) in PAIR and math.isfinite(phase):
            index[(str(family), int(q), float(amplitude), float(f), float(start))] = float(phase)
    common: dict[str, list[float]] = {}
    opposite: dict[str, list[float]] = {}
    for (family, q, amplitude, f, start), phase in index.items():
        partner = index.get((family, q, amplitude, f, PAIR[1]))
        if start != PAIR[0] or partner is None:
            continue
        # The half-difference the short way round the circle, so +179 and -179 are 2 apart, not 358.
        half = float(wrap_degrees(np.array([phase - partner]))[0]) / 2
        common.setdefault(family, []).append(partner + half)
        opposite.setdefault(family, []).append(abs(half))
    return {
        family: {
            "lag_deg": float(wrap_degrees(angle_mean(np.array(common[family])).reshape(1))[0]),
            "inconsistency_deg": float(np.mean(opposite[family])),
            "pairs": len(opposite[family]),
        }
        for family in common
    }
