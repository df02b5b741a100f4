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
exact). A delay is reported on the side of its wrap nearest 0, in (-period / 2, period / 2]: a
memoryless model's -0.09 steps is not 15.91 steps modulo 16, and a negative delay (a lead) is
said with its equivalent delay one period later.

The verdict (`reading`) asks first whether the data can see a lag at all:
- **cannot tell** with one sweep at a frequency (no spread: a lag cannot be told from noise), or
  when the answers are so noisy that no delay within the half-period could be told from 0;
- **no dynamics detected** when the delay lies within `NAMED`-level noise of 0: closer than
  t(`NAMED`) standard errors (plus the search's `RESOLUTION`). Not 95 %: a memoryless model with
  noisy answers would then read a lag in one family in 20, one run of 4 over the five families;
  at 99.9 % one family in 1,000 (measured: docs/running.md, Dynamics; tested in
  tests/test_dynamics.py);
- otherwise a lag: named as the better of the two models when its residual is below `FITS`, else
  "a lag that neither fits".
Intervals (shown at 95 %, like every bracket of the report): estimate +- t x standard error,
each cell's share of the variance from resampling its sweeps, t on Satterthwaite's degrees of
freedom (measured coverage 92-97 % for delays and low-passes with 3 and 6 sweeps a cell; with 2,
as SMOKE and MVP ask, t on 1 to 3 degrees of freedom makes them wide: 95-99 %); none with one.

A lag is flagged, only when one is named and from the same number the verdict shows, when it
reaches what the run could show: a delay at or beyond the history window (a model that sees H
exchanges cannot lag more than H: a 4-step delay asked with --history 1 reads exactly as a 1-step
delay), or a memory longer than the run-in (the first steps still hold start-up transient).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..table import Table
from .uncertainty import shared_sweeps, t_quantile

T_STEPS = 64
#: A model's relative residual below which its fit names the system.
FITS = 0.1
#: The confidence at which a lag is named (two-sided): see the module.
NAMED = 0.999
#: The level of the intervals shown.
LEVEL = 0.95
#: The delay search's own precision (steps): exact delays are recovered within 1e-5.
RESOLUTION = 1e-4
#: The fewest sweeps per cell for an interval (one sweep has no spread).
MIN_SWEEPS = 2
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


def _parabola(left: np.ndarray, mid: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Where the parabola through three equally spaced values peaks, in grid steps from the middle
    one (the objectives are smooth: a grid of 0.05 steps or 0.001 in a leaves errors below 1e-4)."""
    curve = left - 2 * mid + right
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(curve != 0, 0.5 * (left - right) / curve, 0.0)
    return np.clip(shift, -1, 1)


def _vertex(grid: np.ndarray, values: np.ndarray, best: np.ndarray) -> np.ndarray:
    """The extremum of the parabola through each row's best grid point and its neighbours."""
    i = np.clip(best, 1, len(grid) - 2)
    rows = np.arange(len(values))
    shift = _parabola(values[rows, i - 1], values[rows, i], values[rows, i + 1])
    return grid[i] + shift * (grid[1] - grid[0])


def wrap_delay(d: Any, period: float) -> Any:
    """d on the side of the wrap nearest 0, in (-period / 2, period / 2]: 15.91 steps modulo 16
    is -0.09 (a delay and its shift by a whole period read the same phases)."""
    return period / 2 - np.mod(period / 2 - d, period)


def fit_delay(frequencies: np.ndarray, responses: np.ndarray) -> np.ndarray:
    """The delay d in (-period / 2, period / 2] maximising sum |H_f| cos(angle H_f + w_f d), for
    each row of `responses` (shape (replicates, frequencies), complex)."""
    period = delay_period(frequencies)
    w = _omega(frequencies)
    # One period of grid, read cyclically: the objective is periodic in d, so the best point's
    # neighbours are always there (a maximum near +-period / 2 included).
    n = max(3, math.ceil(period / _DELAY_STEP))
    step = period / n
    grid = -period / 2 + step * np.arange(1, n + 1)
    # (replicates, grid): the real part of H conj(exp(-j w d)) summed over frequencies, as one product.
    score = np.real(responses @ np.exp(1j * np.outer(w, grid)))
    best = np.argmax(score, axis=1)
    rows = np.arange(len(score))
    shift = _parabola(score[rows, (best - 1) % n], score[rows, best], score[rows, (best + 1) % n])
    return wrap_delay(grid[best] + shift * step, period)


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
            samples = estimate + wrap_delay(samples - estimate, period)
        shares.append(float(np.var(samples)) * cell.size / (cell.size - 1))
    return shares


@dataclass(frozen=True)
class _Spread:
    """A fitted number's standard error and its Satterthwaite degrees of freedom."""

    error: float
    df: float

    def half_width(self, level: float) -> float:
        return 0.0 if self.error <= 0 else t_quantile(0.5 + level / 2, self.df) * self.error

    def interval(self, estimate: float) -> list[float]:
        half = self.half_width(LEVEL)
        return [estimate - half, estimate + half]


def _spread(shares: list[float], sizes: list[int]) -> _Spread:
    """The standard error from the cells' shares, t on Satterthwaite's degrees of freedom (a
    percentile bootstrap covered 77 % for a delay with 3 sweeps a cell, 92 % with 6)."""
    total = sum(shares)
    if total <= 0:
        return _Spread(0.0, math.inf)
    df = total**2 / sum(v * v / (n - 1) for v, n in zip(shares, sizes, strict=True) if v > 0)
    return _Spread(math.sqrt(total), df)


def family_dynamics(sweeps: Table, family: str, history: int | None, run_in: int | None) -> dict[str, Any]:
    """The equivalent delay, the first-order fit and the verdict of one family (see the module)."""
    frequencies, cells = _cells(sweeps, family)
    if len(frequencies) < 2:
        return {"reading": "not measured", "verdict": "not measured: needs answers at two frequencies or more"}
    point = np.array([[cell.mean() for cell in cells]])
    d = float(fit_delay(frequencies, point)[0])
    a = float(fit_low_pass(frequencies, point)[0])
    period = delay_period(frequencies)
    fewest = min(cell.size for cell in cells)
    out: dict[str, Any] = {
        "frequencies": frequencies.tolist(),
        "delay_steps": d,
        "delay_period_steps": period,
        "delay_interval": None,
        "delay_residual": residual(point[0], np.exp(-1j * _omega(frequencies) * d)),
        "low_pass_a": a,
        "low_pass_a_interval": None,
        "time_constant_steps": _tau(a),
        "time_constant_interval": None,
        "low_pass_residual": residual(point[0], low_pass(np.array([a]), frequencies)),
        "sweeps_per_cell": fewest,
    }
    delay_spread = None
    if fewest >= MIN_SWEEPS:
        sizes = [cell.size for cell in cells]
        delay_spread = _spread(_cell_variances(fit_delay, frequencies, cells, point, d, period), sizes)
        a_spread = _spread(_cell_variances(fit_low_pass, frequencies, cells, point, a, None), sizes)
        out["delay_interval"] = delay_spread.interval(d)
        low, high = a_spread.interval(a)
        out["low_pass_a_interval"] = [low, high]
        # tau falls as a rises; an a at or below 0 is a memory without end (null: no upper bound).
        out["time_constant_interval"] = [_tau(min(high, 1.0)), _tau(low) if low > 0 else None]
    else:
        out["interval_note"] = f"no intervals: {fewest} sweep in a cell, {MIN_SWEEPS} needed to show a spread"
    out["reading"], out["verdict"] = _verdict(out, delay_spread)
    out["flags"] = _flags(out, history, run_in)
    return out


def _tau(a: float) -> float:
    return 0.0 if a >= 1 else -1 / math.log(1 - a)


def _verdict(out: dict[str, Any], spread: _Spread | None) -> tuple[str, str]:
    """(reading, verdict): what the data can say of the family's dynamics, in words."""
    d, period = out["delay_steps"], out["delay_period_steps"]
    if spread is None:
        return "cannot tell", (
            f"cannot tell: {out['sweeps_per_cell']} sweep at a frequency shows no spread, so a lag cannot be told "
            f"from noise; a preset with {MIN_SWEEPS} or more sweeps a frequency can (SMOKE and MVP: 2, FULL: 6)"
        )
    noise = spread.half_width(NAMED) + RESOLUTION
    if noise >= period / 2:
        return "cannot tell", (
            f"cannot tell: the answers are too noisy to place a lag (a delay would have to lie {noise:.2f} steps from "
            f"0 to be seen, and delays are only told apart within {period / 2:g} of it); more sweeps a frequency "
            "(FULL: 6) narrow it"
        )
    if abs(d) <= noise:
        return "no dynamics", "no dynamics detected"
    dr, a, ar = out["delay_residual"], out["low_pass_a"], out["low_pass_residual"]
    named = f"{d:.2f} steps (modulo {period:g}" + (f": a lead, or a delay of {d + period:.2f})" if d < 0 else ")")
    if min(dr, ar) >= FITS:
        return "lag", (
            f"a lag of {named} that neither a pure delay nor a first-order low-pass fits (residuals {dr:.2f} and "
            f"{ar:.2f})"
        )
    if dr <= ar:
        return "delay", f"a delay of {named}"
    return "low-pass", f"a first-order low-pass, a = {a:.3f} (time constant {out['time_constant_steps']:.2f} steps)"


def _flags(out: dict[str, Any], history: int | None, run_in: int | None) -> list[str]:
    """What the run could not show, read from the number the verdict names (none without a lag)."""
    flags: list[str] = []
    reading, d, tau = out["reading"], out["delay_steps"], out["time_constant_steps"]
    if reading not in ("delay", "low-pass", "lag"):
        return flags
    if history is not None and reading == "delay" and d >= history - 0.5:
        flags.append(
            f"the delay reaches the history window ({history} exchanges): the model cannot be seen to lag more than "
            "it is shown, so its true lag may be longer; run again with a longer --history"
        )
    memory = 3 * tau if reading == "low-pass" else abs(d)
    if run_in is not None and memory > run_in + 0.5:
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


def _paired_cells(a: Table, b: Table) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """The frequencies and, per frequency, the complex responses of a's and b's sweeps that pair
    (same sweep key, finite on both sides), aligned: row i of a cell is one pair."""
    a, b = shared_sweeps(a, b)
    ha = np.asarray(a["gain"] * np.exp(1j * np.radians(a["phase_err_deg"]))) if len(a) else np.zeros(0, complex)
    hb = np.asarray(b["gain"] * np.exp(1j * np.radians(b["phase_err_deg"]))) if len(b) else np.zeros(0, complex)
    both = np.isfinite(ha) & np.isfinite(hb)
    frequencies, cells_a, cells_b = [], [], []
    column = np.asarray(a["frequency_cycles"], dtype=float) if len(a) else np.zeros(0)
    for f in sorted({float(x) for x in column}):
        mine = both & (column == f)
        if mine.any():
            frequencies.append(f)
            cells_a.append(ha[mine])
            cells_b.append(hb[mine])
    return np.array(frequencies), cells_a, cells_b


def dynamics_difference(a: Table, b: Table) -> dict[str, Any]:
    """a's identified dynamics minus b's, paired on their shared sweeps (a variant against its
    original, both labelled as one family): the delay and the time constant, with 95 % intervals.

    Each cell's pairs are resampled together (the same drawn pairs refitted on both sides), so
    what the two share cancels in the difference as it does in the point estimate; the cells'
    shares of the variance add, t on Satterthwaite's degrees of freedom, as for one family's
    intervals. The delay difference is taken the short way round the period both are read in."""
    frequencies, cells_a, cells_b = _paired_cells(a, b)
    if len(frequencies) < 2:
        return {"dynamics_diff_note": "not measured: the pair shares answers at fewer than two frequencies"}
    period = delay_period(frequencies)
    point_a = np.array([[cell.mean() for cell in cells_a]])
    point_b = np.array([[cell.mean() for cell in cells_b]])
    delay = float(wrap_delay(fit_delay(frequencies, point_a)[0] - fit_delay(frequencies, point_b)[0], period))
    tau_a = _tau(float(fit_low_pass(frequencies, point_a)[0]))
    tau_b = _tau(float(fit_low_pass(frequencies, point_b)[0]))
    out: dict[str, Any] = {
        "delay_diff_steps": delay,
        "delay_diff_interval": None,
        "delay_period_steps": period,
        "time_constant_diff_steps": tau_a - tau_b,
        "time_constant_diff_interval": None,
    }
    fewest = min(cell.size for cell in cells_a)
    if fewest < MIN_SWEEPS:
        out["dynamics_diff_note"] = f"no intervals: {fewest} shared sweep in a cell, {MIN_SWEEPS} needed"
        return out
    rng = np.random.default_rng(SEED)
    taus = np.vectorize(_tau)
    delay_shares, tau_shares = [], []
    for c in range(len(frequencies)):
        n = cells_a[c].size
        pick = rng.integers(0, n, (RESAMPLES, n))
        ra, rb = np.repeat(point_a, RESAMPLES, axis=0), np.repeat(point_b, RESAMPLES, axis=0)
        ra[:, c] = cells_a[c][pick].mean(axis=1)
        rb[:, c] = cells_b[c][pick].mean(axis=1)
        d = delay + wrap_delay(fit_delay(frequencies, ra) - fit_delay(frequencies, rb) - delay, period)
        t = taus(fit_low_pass(frequencies, ra)) - taus(fit_low_pass(frequencies, rb))
        delay_shares.append(float(np.var(d)) * n / (n - 1))
        tau_shares.append(float(np.var(t)) * n / (n - 1))
    sizes = [cell.size for cell in cells_a]
    out["delay_diff_interval"] = _spread(delay_shares, sizes).interval(delay)
    out["time_constant_diff_interval"] = _spread(tau_shares, sizes).interval(tau_a - tau_b)
    return out
