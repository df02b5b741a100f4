"""What system a model is: an equivalent delay and a first-order time constant from its Bode data.

Input: the per-sweep gain and phase error of a sequential submission (a memoryless stateless
model cannot lag). Each sweep's complex response is h = gain * exp(j phase_err); a cell's response
H(f) is the mean of its sweeps'. Two models are fitted to H across the measured frequencies, both
by least squares on the complex plane, so gain and phase count together:

- **a pure delay of d steps**, exp(-j w d), w = 2 pi f / 64. The phase of a delay wraps: a 4-step
  delay reads -90 degrees at 4 cycles and 180 at 8, and 0 at 16. The fit searches d over every
  branch at once (the objective sum |H_f| cos(phase_f + w_f d) is periodic in d with period
  64 / f_lowest), so the phases are unwrapped wherever the frequencies measured allow it; d is
  determined modulo that period, which is said with it.
- **a first-order low-pass** y_t = y_{t-1} + a (x_t - y_{t-1}), H = a / (1 - (1 - a) exp(-j w)),
  0 < a <= 1, with its time constant tau = -1 / ln(1 - a) steps.

Each fit's quality is its relative residual sqrt(sum |H - M|^2 / sum |H|^2) (0: the model is
exact). The verdict is "no dynamics detected" when the delay is within `STILL` steps of 0 (or its
interval holds 0) and the phases alone fit it (a memoryless gain error does not lag); otherwise
it names the better model when its residual is below `FITS`, else neither.
Intervals: estimate +- t x standard error, each cell's share of the variance from resampling
its sweeps, t on Satterthwaite's degrees of freedom (measured coverage 92-97 % for delays and
low-passes with 3 and 6 sweeps a cell); none with fewer than `MIN_SWEEPS` sweeps in a cell.

A lag is flagged when it reaches what the run could show: a delay at or beyond the history
window (a model that sees H exchanges cannot lag more than H: a 4-step delay asked with
--history 1 reads exactly as a 1-step delay), or a memory longer than the run-in (the first
steps still hold start-up transient).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..table import Table
from .uncertainty import t_quantile

T_STEPS = 64
#: A model's relative residual below which its fit names the system.
FITS = 0.1
#: An equivalent delay within this many steps of 0 (and an interval holding 0): no dynamics.
STILL = 0.05
#: The fewest sweeps per cell for an interval.
MIN_SWEEPS = 3
RESAMPLES = 400
SEED = 20261201
#: The grid the delay search starts from (steps; the fastest sinusoid, 16 cycles, repeats every 4
#: steps, so the global best lies within a step of the grid's), refined around the best point.
_DELAY_STEP = 0.05
_A_GRID = np.linspace(1e-3, 1.0, 1000)


def _omega(frequencies: np.ndarray) -> np.ndarray:
    return 2 * np.pi * frequencies / T_STEPS


def delay_period(frequencies: np.ndarray) -> float:
    """The period (in steps) within which the frequencies measured tell delays apart: 64 over the
    greatest common divisor of the (whole) frequencies; 4 and 8 cycles: 16 steps."""
    g = 0
    for f in frequencies:
        g = math.gcd(g, int(round(float(f))))
    return T_STEPS / max(g, 1)


def _vertex(grid: np.ndarray, values: np.ndarray, best: np.ndarray) -> np.ndarray:
    """The extremum of the parabola through each row's best grid point and its neighbours (the
    objectives are smooth: a step of 0.05 steps or 0.001 in a leaves errors far below 1e-4)."""
    i = np.clip(best, 1, len(grid) - 2)
    rows = np.arange(len(values))
    left, mid, right = values[rows, i - 1], values[rows, i], values[rows, i + 1]
    curve = left - 2 * mid + right
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(curve != 0, 0.5 * (left - right) / curve, 0.0)
    return grid[i] + np.clip(shift, -1, 1) * (grid[1] - grid[0])


def fit_delay(frequencies: np.ndarray, responses: np.ndarray) -> np.ndarray:
    """The delay d in [0, period) maximising sum |H_f| cos(angle H_f + w_f d), for each row of
    `responses` (shape (replicates, frequencies), complex)."""
    period = delay_period(frequencies)
    w = _omega(frequencies)
    # One step of grid beyond each end, so the best point always has two neighbours.
    grid = np.arange(-_DELAY_STEP, period + 2 * _DELAY_STEP, _DELAY_STEP)
    # (replicates, grid): the real part of H conj(exp(-j w d)) summed over frequencies, as one product.
    score = np.real(responses @ np.exp(1j * np.outer(w, grid)))
    return np.mod(_vertex(grid, score, np.argmax(score, axis=1)), period)


def low_pass(a: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """H of the first-order low-pass with coefficient a (shape (..., 1)) at `frequencies`."""
    return a / (1 - (1 - a) * np.exp(-1j * _omega(frequencies)))


def fit_low_pass(frequencies: np.ndarray, responses: np.ndarray) -> np.ndarray:
    """The a in (0, 1] minimising sum |H_f - L_a(f)|^2, for each row of `responses`."""
    models = low_pass(_A_GRID[:, None], frequencies)  # (grid, frequencies)
    # sum |H - M|^2 = sum |H|^2 - 2 Re(H . conj M) + sum |M|^2; the first term does not move the argmin.
    error = (np.abs(models) ** 2).sum(axis=1)[None, :] - 2 * np.real(responses @ np.conj(models).T)
    return np.clip(_vertex(_A_GRID, error, np.argmin(error, axis=1)), _A_GRID[0], 1.0)


def residual(responses: np.ndarray, model: np.ndarray) -> float:
    return float(math.sqrt(np.sum(np.abs(responses - model) ** 2) / np.sum(np.abs(responses) ** 2)))


def _cells(sweeps: Table, family: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """The family's frequencies and each frequency's per-sweep complex responses (finite only)."""
    mine = sweeps["family"] == family
    h = sweeps["gain"] * np.exp(1j * np.radians(sweeps["phase_err_deg"]))
    frequencies, cells = [], []
    for f in sorted({float(x) for x in sweeps["frequency_cycles"][mine]}):
        values = h[mine & (sweeps["frequency_cycles"] == f)]
        values = values[np.isfinite(values)]
        if values.size:
            frequencies.append(f)
            cells.append(values)
    return np.array(frequencies), cells


def _cell_variances(
    fit: Any, frequencies: np.ndarray, cells: list[np.ndarray], point: np.ndarray, estimate: float, period: float | None
) -> list[float]:
    """Each cell's share of the fitted number's variance: the cell's sweeps resampled (the others
    at their means) and refitted, the spread widened by n / (n - 1) (the plug-in variance's bias)."""
    rng = np.random.default_rng(SEED)
    shares = []
    for c, cell in enumerate(cells):
        responses = np.repeat(point, RESAMPLES, axis=0)
        responses[:, c] = cell[rng.integers(0, cell.size, (RESAMPLES, cell.size))].mean(axis=1)
        samples = fit(frequencies, responses)
        if period is not None:  # the short way round: replicates near a wrap stay beside the estimate
            samples = estimate + (samples - estimate + period / 2) % period - period / 2
        shares.append(float(np.var(samples)) * cell.size / (cell.size - 1))
    return shares


def _interval(shares: list[float], sizes: list[int], estimate: float) -> list[float]:
    """estimate +- t x the standard error, t on Satterthwaite's degrees of freedom from the cells'
    shares (a percentile bootstrap covered 77 % for a delay with 3 sweeps a cell, 92 % with 6)."""
    total = sum(shares)
    if total <= 0:
        return [estimate, estimate]
    df = total**2 / sum(v * v / (n - 1) for v, n in zip(shares, sizes, strict=True) if v > 0)
    half = t_quantile(0.975, df) * math.sqrt(total)
    return [estimate - half, estimate + half]


def family_dynamics(sweeps: Table, family: str, history: int | None, run_in: int | None) -> dict[str, Any]:
    """The equivalent delay, the first-order fit and the verdict of one family (see the module)."""
    frequencies, cells = _cells(sweeps, family)
    if len(frequencies) < 2:
        return {"verdict": "not measured: needs answers at two frequencies or more"}
    point = np.array([[cell.mean() for cell in cells]])
    d = float(fit_delay(frequencies, point)[0])
    a = float(fit_low_pass(frequencies, point)[0])
    period = delay_period(frequencies)
    delay_residual = residual(point[0], np.exp(-1j * _omega(frequencies) * d))
    # The phases alone (every response at unit gain): a memoryless gain error does not lag.
    phase_residual = residual(point[0] / np.abs(point[0]), np.exp(-1j * _omega(frequencies) * d))
    low_pass_residual = residual(point[0], low_pass(np.array([a]), frequencies))
    fewest = min(cell.size for cell in cells)
    out: dict[str, Any] = {
        "frequencies": frequencies.tolist(),
        "delay_steps": d,
        "delay_period_steps": period,
        "delay_interval": None,
        "delay_residual": delay_residual,
        "delay_phase_residual": phase_residual,
        "low_pass_a": a,
        "low_pass_a_interval": None,
        "time_constant_steps": _tau(a),
        "low_pass_residual": low_pass_residual,
        "sweeps_per_cell": fewest,
    }
    if fewest >= MIN_SWEEPS:
        sizes = [cell.size for cell in cells]
        shares = _cell_variances(fit_delay, frequencies, cells, point, d, period)
        out["delay_interval"] = _interval(shares, sizes, d)
        out["low_pass_a_interval"] = _interval(
            _cell_variances(fit_low_pass, frequencies, cells, point, a, None), sizes, a
        )
    else:
        out["interval_note"] = f"no intervals: {fewest} sweeps in a cell, {MIN_SWEEPS} needed to show a spread"
    out["verdict"] = _verdict(out)
    out["flags"] = _flags(out, history, run_in)
    return out


def _tau(a: float) -> float:
    return 0.0 if a >= 1 else -1 / math.log(1 - a)


def _holds_zero(out: dict[str, Any]) -> bool:
    d, period, iv = out["delay_steps"], out["delay_period_steps"], out["delay_interval"]
    near = min(d, period - d)
    if iv is None:
        return near <= STILL
    return near <= STILL or iv[0] <= 0 <= iv[1] or iv[0] <= period <= iv[1]


def _verdict(out: dict[str, Any]) -> str:
    if _holds_zero(out) and out["delay_phase_residual"] < FITS:
        return "no dynamics detected"
    d, dr, a, ar = out["delay_steps"], out["delay_residual"], out["low_pass_a"], out["low_pass_residual"]
    if min(dr, ar) >= FITS:
        return f"neither a delay nor a first-order low-pass fits (residuals {dr:.2f} and {ar:.2f})"
    if dr <= ar:
        return f"a delay of {d:.2f} steps (modulo {out['delay_period_steps']:g})"
    return f"a first-order low-pass, a = {a:.3f} (time constant {out['time_constant_steps']:.2f} steps)"


def _flags(out: dict[str, Any], history: int | None, run_in: int | None) -> list[str]:
    flags = []
    d, tau = out["delay_steps"], out["time_constant_steps"]
    delay_named = out["verdict"].startswith("a delay")
    if history is not None and delay_named and d >= history - 0.5:
        flags.append(
            f"the delay reaches the history window ({history} exchanges): the model cannot be seen to lag more than "
            "it is shown, so its true lag may be longer; run again with a longer --history"
        )
    if run_in is not None:
        memory = d if delay_named else 3 * tau if out["verdict"].startswith("a first-order") else 0.0
        if memory > run_in + 0.5:
            flags.append(
                f"the model's memory (about {memory:.1f} steps) is longer than the run-in ({run_in} steps): the first "
                "steps of each sweep still hold start-up transient; run again with a longer --run-in"
            )
    return flags


def dynamics(sweeps: Table, conditions: dict[str, str]) -> dict[str, dict[str, Any]] | None:
    """Per family, for a sequential submission (None for any other: a memoryless map cannot lag)."""
    if conditions.get("protocol") != "sequential" or not len(sweeps):
        return None
    history = conditions.get("history", "all")
    run_in = conditions.get("run_in", "0")
    window = int(history) if history.isdigit() else None
    lead = int(run_in) if run_in.isdigit() else None
    families = list(dict.fromkeys(str(f) for f in sweeps["family"]))
    return {family: family_dynamics(sweeps, family, window, lead) for family in families}
