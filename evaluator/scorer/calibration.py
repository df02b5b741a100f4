"""Calibrated per-sweep measurements: the exact answer reads 1, a constant answer reads 0.

The paper's MB-Plus takes R2 and residual autocorrelation from a pure-sinusoid fit of the
model's answers, but the true answers of these families are not pure sinusoids (x = 24/a over a
sinusoidal a is not one, and p is rendered to three decimals), so the exact solver reads about
0.78. Here only the structure the truth does not have is measured:

- the truth's own deviation from its first-harmonic fit is d*_t = y*_t - fit*(t);
- the model's residual from its fit is r_t; the part the truth does not explain is
  e_t = r_t - G d*_t, with G the model's gain (a model that is the truth scaled by G leaves
  G d*_t in its residual, which is no fault of the model);
- fit quality is r2_cal = 1 - sum(e^2) / sum((y - mean y)^2), and the residual structure is
  acf1_cal = sum(e_t e_t+1) / sum((y - mean y)^2): the lag-1 autocovariance of e relative to the
  spread of the answers. The paper's lag-1 *correlation* is scale-free: a residual of 1e-5 costs
  as much as one of the answers' own size, so the score would drop by a fixed step the moment a
  residual exceeds the format's resolution, and more noise could then score higher. Relative
  to the answers' spread, the penalty grows with the residual, from 0 for the exact answer.

Everything below the answer format's resolution q = 1e-6 (six decimals) is that format's own
truncation, and counts as exact: truncating each answer moves the fitted sine and cosine
coefficients by at most q * sum_t |pinv[k, t]| (about 1.27 q at 64 steps), so the amplitude
and the arc A* |phase error| move by under 2 q; rms(e) stays under 2 q likewise. Hence the floor
2 q. And an answer whose fitted amplitude is within the floor of zero does not move: it has no
phase, so its phase error is the maximum, 180 degrees, and its gain 0 (the paper reads the
phase of a zero-amplitude fit as 0 degrees, which is why answering 0 everywhere earns MB-Core
0.30 there).
"""

from __future__ import annotations

import math

import numpy as np

#: One unit in the last decimal of the answer format (six decimals).
RESOLUTION = 1e-6
#: Differences below this are the format's truncation, not the model's (see the module text).
FLOOR = 2 * RESOLUTION
#: Per-sweep calibrated metric names, in report column order.
CALIBRATED_METRICS = ("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal")


_sum = np.add.reduce


def mean(x: np.ndarray) -> float:
    """`x.mean()` of a non-empty 1-d float array, the same float: numpy's pairwise sum divided by
    the count, without `mean`'s Python wrapper (3 us of a 4 us call; a sweep takes eight)."""
    return float(_sum(x)) / x.size


def calibrated_metrics(
    truth_residual: np.ndarray,
    amp_truth: float,
    model: np.ndarray,
    model_residual: np.ndarray,
    amp_model: float,
    phase_err_rad: float,
) -> dict[str, float]:
    """Calibrated gain, phase error, fit quality and residual ACF(1) of one sweep.

    `truth_residual` (d*) and `model_residual` (r) are taken at the model's compliant time
    steps, in time order; `model` holds the answers there; `phase_err_rad` is wrapped.
    """
    out = dict.fromkeys(CALIBRATED_METRICS, math.nan)
    if amp_model <= FLOOR:  # an answer that does not move carries no phase
        out["gain_cal"], out["phase_err_cal_deg"] = 0.0, 180.0
    elif math.isfinite(phase_err_rad):
        out["gain_cal"] = 1.0 if abs(amp_model - amp_truth) <= FLOOR else amp_model / amp_truth
        out["phase_err_cal_deg"] = 0.0 if amp_truth * abs(phase_err_rad) <= FLOOR else math.degrees(phase_err_rad)
    gain = amp_model / amp_truth if amp_truth > 0 else 0.0
    unexplained = model_residual - gain * truth_residual
    if math.sqrt(mean(unexplained**2)) <= FLOOR:
        out["r2_cal"], out["acf1_cal"] = 1.0, 0.0
        return out
    centred = model - mean(model)
    spread = float(centred @ centred)
    if spread <= 0:
        out["r2_cal"], out["acf1_cal"] = 0.0, 1.0
        return out
    out["r2_cal"] = 1.0 - float(unexplained @ unexplained) / spread
    out["acf1_cal"] = float(unexplained[:-1] @ unexplained[1:]) / spread
    return out
