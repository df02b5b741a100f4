"""Per-sweep measurements: first-harmonic fit, gain, phase error, harmonics and residual diagnostics.

Pure numpy: arrays in, numbers out. The formulas follow the paper's reference implementation;
each one is stated where it is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .calibration import CALIBRATED_METRICS, calibrated_metrics

#: A sweep needs this many compliant answers for its fit to mean anything.
MIN_POINTS = 16

#: A truth amplitude at or below this (relative to the series' level) is zero: least squares
#: on a constant series returns rounding noise of about 1e-16, not exactly 0.
ZERO_AMPLITUDE = 1e-12

#: Per-sweep metric names, in report column order.
SWEEP_METRICS = (
    "gain",
    "phase_err_deg",
    "r2",
    "h1",
    "h2",
    "h3",
    "h2_over_h1",
    "res_rms_norm",
    "res_acf1",
    "compliance",
    "amp_truth",
    "amp_model",
    "phase_truth_deg",
    "phase_model_deg",
    "n_finite",
    *CALIBRATED_METRICS,
)


@dataclass(frozen=True)
class HarmonicFit:
    """y ~ c + a sin(wt) + b cos(wt), by least squares."""

    c: float
    a: float
    b: float
    r2: float

    @property
    def amplitude(self) -> float:
        return math.hypot(self.a, self.b)

    @property
    def phase(self) -> float:
        """atan2(b, a): y ~ c + A sin(wt + phase)."""
        return math.atan2(self.b, self.a)

    def predict(self, omega: float, t: np.ndarray) -> np.ndarray:
        return self.c + self.a * np.sin(omega * t) + self.b * np.cos(omega * t)


@lru_cache(maxsize=2048)
def _least_squares(omega: float, t_bytes: bytes, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """(design, pseudo-inverse) for [1,] sin(wt), cos(wt) at the time steps in `t_bytes`.

    Sweeps share their time steps (all 64, or the same few gaps), so the pseudo-inverse is
    computed once per (frequency, steps) and each fit is a matrix-vector product. The cutoff is
    lstsq's (max(M, N) * eps), so rank-deficient designs get the same minimum-norm solution.
    """
    t = np.frombuffer(t_bytes, dtype=float)
    columns = [np.sin(omega * t), np.cos(omega * t)]
    design = np.column_stack(([np.ones_like(t)] if intercept else []) + columns)
    pinv = np.linalg.pinv(design, rcond=max(design.shape) * np.finfo(float).eps)
    return design, pinv


def _solve(omega: float, t: np.ndarray, y: np.ndarray, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    design, pinv = _least_squares(float(omega), np.ascontiguousarray(t, dtype=float).tobytes(), intercept)
    return design, pinv @ y


def fit_first_harmonic(t: np.ndarray, y: np.ndarray, omega: float) -> HarmonicFit:
    design, coef = _solve(omega, t, y, intercept=True)
    residual = y - design @ coef
    ss_res = float(residual @ residual)
    centred = y - y.mean()
    ss_tot = float(centred @ centred) or 1.0  # a constant series: SStot = 0 counts as 1
    return HarmonicFit(float(coef[0]), float(coef[1]), float(coef[2]), 1.0 - ss_res / ss_tot)


def harmonic_amplitude(t: np.ndarray, y: np.ndarray, omega: float) -> float:
    """|H| from least squares on sin(wt), cos(wt) alone (no intercept)."""
    _, coef = _solve(omega, t, y, intercept=False)
    return float(math.hypot(coef[0], coef[1]))


def wrap_pi(x: float) -> float:
    """Wrap an angle to [-pi, pi)."""
    return (x + math.pi) % (2 * math.pi) - math.pi


def lag1_autocorrelation(r: np.ndarray) -> float:
    """corrcoef(r[:-1], r[1:]); NaN when either side has no spread."""
    if r.size < 3:
        return math.nan
    x, y = r[:-1], r[1:]
    x, y = x - x.mean(), y - y.mean()
    denom = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y) / denom if denom > 0 else math.nan


def sweep_metrics(truth: np.ndarray, model: np.ndarray, frequency_cycles: float, time_steps: int) -> dict[str, float]:
    """All per-sweep metrics for one sinusoid sweep.

    `truth` and `model` are indexed by time step 0..T-1; `model` holds NaN where the answer was
    missing or non-compliant. Only the finite model values enter the fits, in time order.
    """
    t_all = np.arange(time_steps, dtype=float)
    omega = 2 * math.pi * frequency_cycles / time_steps
    finite = np.isfinite(model)
    n = int(finite.sum())
    out = dict.fromkeys(SWEEP_METRICS, math.nan)
    out["compliance"] = n / time_steps
    out["n_finite"] = float(n)
    truth_fit = fit_first_harmonic(t_all, truth, omega)
    out["amp_truth"] = truth_fit.amplitude
    out["phase_truth_deg"] = math.degrees(truth_fit.phase)
    if n < MIN_POINTS:
        return out
    t, y = t_all[finite], model[finite]
    fit = fit_first_harmonic(t, y, omega)
    out["amp_model"] = fit.amplitude
    out["phase_model_deg"] = math.degrees(fit.phase)
    out["r2"] = fit.r2
    flat_truth = truth_fit.amplitude <= ZERO_AMPLITUDE * max(1.0, abs(truth_fit.c))
    if not flat_truth:
        out["gain"] = fit.amplitude / truth_fit.amplitude
        out["phase_err_deg"] = math.degrees(wrap_pi(fit.phase - truth_fit.phase))
    h = [harmonic_amplitude(t, y, k * omega) for k in (1, 2, 3)]
    out["h1"], out["h2"], out["h3"] = h
    out["h2_over_h1"] = h[1] / h[0] if h[0] > 0 else math.nan
    residual = (y - y.mean()) - fit.amplitude * np.sin(omega * t + fit.phase)
    if not flat_truth:
        out["res_rms_norm"] = math.sqrt(float(np.mean(residual**2))) / truth_fit.amplitude
    out["res_acf1"] = lag1_autocorrelation(residual)
    if not flat_truth:
        truth_residual = truth[finite] - truth_fit.predict(omega, t)
        model_residual = y - fit.predict(omega, t)
        phase_err = wrap_pi(fit.phase - truth_fit.phase)
        out.update(calibrated_metrics(truth_residual, truth_fit.amplitude, y, model_residual, fit.amplitude, phase_err))
    return out
