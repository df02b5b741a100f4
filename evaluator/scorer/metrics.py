"""Per-sweep measurements: first-harmonic fit, gain, phase error, harmonics and residual diagnostics.

Pure numpy: arrays in, numbers out. The formulas follow the paper's reference implementation;
each one is stated where it is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .calibration import CALIBRATED_METRICS, FLOOR, calibrated_metrics, mean

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
    "h2_over_h1_truth",
    "res_rms_norm",
    "res_acf1",
    "compliance",
    "amp_truth",
    "amp_model",
    "phase_truth_deg",
    "phase_model_deg",
    "n_finite",
    "flat",
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
def _least_squares(omega: float, t_bytes: bytes, ks: tuple[int, ...] = (1,)) -> tuple[np.ndarray, np.ndarray]:
    """(design, pseudo-inverse) of [1, sin(k wt), cos(k wt) for k in ks] at the steps in `t_bytes`.

    Sweeps share their time steps (all 64, or the same few gaps), so the pseudo-inverse is
    computed once per (frequency, steps, harmonics) and each fit is a matrix-vector product. The
    cutoff is lstsq's (max(M, N) * eps), so rank-deficient designs get the same minimum-norm solution.
    """
    t = np.frombuffer(t_bytes, dtype=float)
    columns = [np.ones_like(t)]
    for k in ks:
        columns += [np.sin(k * omega * t), np.cos(k * omega * t)]
    design = np.column_stack(columns)
    return design, np.linalg.pinv(design, rcond=max(design.shape) * np.finfo(float).eps)


def _solve(omega: float, t: np.ndarray, y: np.ndarray, ks: tuple[int, ...] = (1,)) -> tuple[np.ndarray, np.ndarray]:
    design, pinv = _least_squares(float(omega), np.ascontiguousarray(t, dtype=float).tobytes(), ks)
    return design, pinv @ y


def fit_first_harmonic(t: np.ndarray, y: np.ndarray, omega: float) -> HarmonicFit:
    design, coef = _solve(omega, t, y)
    residual = y - design @ coef
    ss_res = float(residual @ residual)
    centred = y - mean(y)
    ss_tot = float(centred @ centred) or 1.0  # a constant series: SStot = 0 counts as 1
    return HarmonicFit(float(coef[0]), float(coef[1]), float(coef[2]), 1.0 - ss_res / ss_tot)


#: The harmonics reported (h1, h2, h3).
HARMONICS = (1, 2, 3)


def measurable_harmonics(frequency_cycles: float, time_steps: int) -> tuple[int, ...]:
    """The harmonics a T-step sweep can tell apart: harmonic k sits at k f cycles, seen folded into
    [0, T/2]. One that folds onto 0 (the mean), onto T/2 (where sin vanishes at every step and only
    part of an amplitude shows) or onto a lower harmonic cannot be measured: at 16 cycles per 64
    steps the 2nd harmonic is the Nyquist frequency and the 3rd aliases onto the 1st."""
    seen: list[float] = []
    out = []
    for k in HARMONICS:
        folded = (k * frequency_cycles) % time_steps
        folded = min(folded, time_steps - folded)
        if 0 < folded < time_steps / 2 and all(abs(folded - s) > 1e-9 for s in seen):
            out.append(k)
            seen.append(folded)
    return tuple(out)


def harmonic_amplitudes(
    t: np.ndarray, y: np.ndarray, omega: float, frequency_cycles: float, time_steps: int
) -> list[float]:
    """|H1|, |H2|, |H3| from one least-squares fit of a constant and every measurable harmonic
    together over the answered steps (NaN for a harmonic the sweep cannot measure).

    Fitted jointly because with missing answers the harmonics' sines and cosines are no longer
    orthogonal to the constant or to each other: fitted one at a time without a constant (the
    paper's code), the answers' mean leaks into every harmonic and a pure gain reads as distortion.
    """
    ks = measurable_harmonics(frequency_cycles, time_steps)
    _, coef = _solve(omega, t, y, ks)
    amplitude = {k: math.hypot(coef[1 + 2 * i], coef[2 + 2 * i]) for i, k in enumerate(ks)}
    return [amplitude.get(k, math.nan) for k in HARMONICS]


def wrap_pi(x: float) -> float:
    """Wrap an angle to [-pi, pi)."""
    return (x + math.pi) % (2 * math.pi) - math.pi


def lag1_autocorrelation(r: np.ndarray) -> float:
    """corrcoef(r[:-1], r[1:]); NaN when either side has no spread."""
    if r.size < 3:
        return math.nan
    x, y = r[:-1], r[1:]
    x, y = x - mean(x), y - mean(y)
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
    out["r2"] = fit.r2
    # Answers whose fitted swing is within the format's floor do not move: they have no phase
    # (atan2 of rounding noise reads anything, e.g. -77 degrees for a gain of 1e-15).
    flat = fit.amplitude <= FLOOR
    out["flat"] = float(flat)
    if not flat:
        out["phase_model_deg"] = math.degrees(fit.phase)
    flat_truth = truth_fit.amplitude <= ZERO_AMPLITUDE * max(1.0, abs(truth_fit.c))
    if not flat_truth:
        out["gain"] = fit.amplitude / truth_fit.amplitude
        if not flat:
            out["phase_err_deg"] = math.degrees(wrap_pi(fit.phase - truth_fit.phase))
    h = harmonic_amplitudes(t, y, omega, frequency_cycles, time_steps)
    out["h1"], out["h2"], out["h3"] = h
    out["h2_over_h1"] = h[1] / h[0] if h[0] > 0 else math.nan  # NaN / h1 stays NaN
    # The exact answers' own distortion on the same steps: p is printed to 3 decimals and the
    # answer is a nonlinear function of it, so the truth alone reads 0.004-0.047 in four families.
    # A model's H2/H1 is nonlinearity of its own only where it exceeds this.
    h_truth = harmonic_amplitudes(t, truth[finite], omega, frequency_cycles, time_steps)
    out["h2_over_h1_truth"] = h_truth[1] / h_truth[0] if h_truth[0] > 0 else math.nan
    residual = (y - mean(y)) - fit.amplitude * np.sin(omega * t + fit.phase)
    if not flat_truth:
        out["res_rms_norm"] = math.sqrt(mean(residual**2)) / truth_fit.amplitude
    out["res_acf1"] = lag1_autocorrelation(residual)
    if not flat_truth:
        truth_residual = truth[finite] - truth_fit.predict(omega, t)
        model_residual = y - fit.predict(omega, t)
        phase_err = wrap_pi(fit.phase - truth_fit.phase)
        out.update(calibrated_metrics(truth_residual, truth_fit.amplitude, y, model_residual, fit.amplitude, phase_err))
    return out
