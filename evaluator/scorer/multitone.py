"""The multi-tone measurement: best linear approximation, added distortion, noise, two-tone products.

Pure numpy: each family's answered multi-tone sweeps in, one JSON-ready dict out (docs/multitone.md
says what every number means). Spectra are line amplitudes, 2/T |DFT| at lines 1..highest; levels
are in dB relative to one reference per family, the exact answers' mean amplitude at the excited
lines (two-tone: the exact answers' rms at the tones, `two_tone`).

- BLA at an excited line k: the mean over experiments (question x realization) of Y_i(k) / X_i(k),
  Y the model's answers averaged over the periods, X the exact answers; a 95 % interval from the
  spread across experiments (Student t, n - 1 degrees of freedom) for the gain and for the phase.
- Added distortion at a detection line: Y_i(k) - G(k) X_i(k), G the BLA carried to line k (log
  gain and unwrapped phase, linear between excited lines and beyond them): what the exact answers
  hold at that line passes through a linear model (delay, low-pass) and is not counted.
- Noise: the spread of Y across periods of one realization; stochastic distortion: the spread of
  Y - G X across experiments beyond the noise.
- Floor: the level six-decimal truncation leaves at one line (uniform error, sigma = 1e-6/sqrt 12).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from mathbode.schema.drives import MULTISINE, TWO_TONE, MultitonePlan

from .dynamics import delay_period, fit_delay, wrap_delay
from .uncertainty import holm, t_cdf, t_quantile, t_ufuncs

#: Where an added level counts as distortion: this far above the truncation floor (and beyond the
#: noise, `CLAIM_RATE`).
DETECTION_MARGIN_DB = 20.0
#: The false-claim rate of a multi-tone finding, after Holm over the model's families: a linear
#: model with noise is read as distorted, or a memoryless one as having memory, in about one
#: family reading in 1,000 (the single tones' rule: docs/intervals.md; measured in
#: docs/calibration.md).
CLAIM_RATE = 0.001
#: A fitted delay closer to 0 than this is none, whatever its spread (the search's own precision).
DELAY_RESOLUTION = 1e-4
#: A memory model whose relative residual is below this names the memory (as for single tones).
MODEL_FITS = 0.1
#: One kind of added distortion this far above the other names the nonlinearity alone.
DOMINANT_DB = 6.0
#: Added distortion a static map explains at least this share of (power) is a static nonlinearity;
#: less is per-prompt inconsistency. A cubic map of 64 steps explains all of a smooth map's and
#: about 4/52 of white per-prompt errors' (4 nonlinear regressors against 52 real dimensions of
#: detection lines): 0.5 sits far from both.
STATIC_SHARE = 0.5
#: The truncation of six decimals: a uniform error of this width.
TRUNCATION = 1e-6


@dataclass(frozen=True)
class MultitoneSweep:
    """One answered multi-tone sweep: its drive, question, period, realization, exact answers and answers."""

    signal_type: str
    question_id: int
    period: int
    realization: int
    truth: np.ndarray
    answers: np.ndarray


def _db(x: float) -> float | None:
    return None if not (x > 0 and math.isfinite(x)) else round(20 * math.log10(x), 4)


def _spectrum(v: np.ndarray, highest: int) -> np.ndarray:
    """Complex line amplitudes 2/T DFT at lines 0..highest (cos-phase convention)."""
    return 2 * np.fft.rfft(v)[: highest + 1] / len(v)


@dataclass(frozen=True)
class _Experiment:
    """One (question, realization): the exact answers' spectrum X, the answers' spectrum Y averaged
    over periods, Y per period, and the same exact answers and mean answers in time."""

    X: np.ndarray
    Y: np.ndarray
    Ys: list[np.ndarray]
    x: np.ndarray
    y: np.ndarray


def _experiments(sweeps: Sequence[MultitoneSweep], signal: str, highest: int) -> list[_Experiment]:
    """Each (question, realization) with a complete period, in order."""
    groups: dict[tuple[int, int], list[MultitoneSweep]] = {}
    for s in sweeps:
        if s.signal_type == signal:
            groups.setdefault((s.question_id, s.realization), []).append(s)
    out = []
    for key in sorted(groups):
        periods = [s for s in sorted(groups[key], key=lambda s: s.period) if np.isfinite(s.answers).all()]
        if not periods:
            continue
        X = _spectrum(periods[0].truth, highest)
        Ys = [_spectrum(s.answers, highest) for s in periods]
        y = np.mean([s.answers for s in periods], axis=0)
        out.append(_Experiment(X, np.mean(Ys, axis=0), Ys, np.asarray(periods[0].truth, dtype=float), y))
    return out


def bla_at(lines: np.ndarray, G: np.ndarray, at: Sequence[int]) -> np.ndarray:
    """The BLA carried from its excited `lines` to `at`: log gain and unwrapped phase, linear between
    lines; beyond them the phase extrapolated from the nearest two (exact for a delay) and the gain
    held at the nearest line's. Extrapolating a noisy log gain from two lines 2 apart out to line 31
    multiplied it by up to e^40 (answers with noise above their signal's level read "distortion"
    +70 dB: docs/calibration.md); held, a wrong gain costs at most its error times the exact
    answers' own small content at that line."""
    logg, ph = np.log(np.abs(G)), np.unwrap(np.angle(G))
    out = []
    for k in at:
        if len(lines) == 1:
            out.append(G[0])
            continue
        j = int(np.clip(np.searchsorted(lines, k) - 1, 0, len(lines) - 2))
        w = (k - lines[j]) / (lines[j + 1] - lines[j])
        held = min(max(w, 0.0), 1.0)
        out.append(np.exp(logg[j] + held * (logg[j + 1] - logg[j]) + 1j * (ph[j] + w * (ph[j + 1] - ph[j]))))
    return np.array(out)


#: A dynamics model that fits the BLA this closely (rms complex error per line) carries it to the
#: detection lines; otherwise the BLA is interpolated (a low-pass is curved in log gain and phase).
MODEL_FIT_RMS = 0.002


def _carried(lines: np.ndarray, G: np.ndarray, at: Sequence[int], memory: dict[str, Any], T: int) -> np.ndarray:
    """The BLA at the detection lines: from the delay or low-pass model when one fits, else `bla_at`."""
    w, wa = 2 * np.pi * lines / T, 2 * np.pi * np.asarray(at) / T
    a, g, d = memory["lowpass_alpha"], memory["lowpass_gain"], memory["delay_steps"]
    lowpass = g * a / (1 - (1 - a) * np.exp(-1j * w))
    gain = float(np.mean(np.abs(G)))
    delay = gain * np.exp(-1j * w * d)
    if math.sqrt(float(np.mean(np.abs(G - lowpass) ** 2))) < MODEL_FIT_RMS:
        return g * a / (1 - (1 - a) * np.exp(-1j * wa))
    if math.sqrt(float(np.mean(np.abs(G - delay) ** 2))) < MODEL_FIT_RMS:
        return gain * np.exp(-1j * wa * d)
    return bla_at(lines, G, at)


def _static_share(
    exps: Sequence[_Experiment], detect: Sequence[int], D: np.ndarray, full: np.ndarray, H: int
) -> float | None:
    """The share of the added distortion's power (D, at the `detect` lines) that a static cubic map
    of the answer explains, before or after the BLA (`full`: the BLA carried to lines 0..T/2).

    Per experiment, the mean answers are fitted by least squares on 1, the BLA's output x_l, the
    square and cube of x_l (a map after the memory: Wiener) and the BLA applied to the square and
    cube of the exact answers' deviation (a map before it: Hammerstein). A smooth map of the answer
    is explained whole, even and odd parts alike; errors particular to each prompt are not."""
    total = float(np.sum(np.abs(D) ** 2))
    if not total > 0:
        return None
    unexplained = 0.0
    for e in exps:
        filtered = [np.fft.irfft(full * np.fft.rfft(v), len(e.x)) for v in (e.x, *_powers(e.x - e.x.mean()))]
        xl = filtered[0]
        columns = [np.ones_like(xl), xl, *_powers(xl - xl.mean()), *filtered[1:]]
        A = np.column_stack([c / s if (s := float(np.std(c))) > 0 else c for c in columns])
        coef = np.linalg.lstsq(A, e.y, rcond=None)[0]
        unexplained += float(np.sum(np.abs(_spectrum(e.y - A @ coef, H)[list(detect)]) ** 2))
    return float(min(max(1 - unexplained / total, 0.0), 1.0))


def _powers(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return v**2, v**3


def _rms(values: list[np.ndarray] | np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(np.abs(np.asarray(values)) ** 2, axis=0))


def _lowpass_fits(lines: np.ndarray, G: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of `G` (responses at `lines`), the first-order low-pass y_t = y_{t-1} + a (x_t - y_{t-1})
    with a free real gain that fits it best: (a, gain, squared residual), one each per row."""
    w = 2 * np.pi * lines / T
    alphas = np.arange(0.01, 1.00001, 0.001)
    H = alphas[:, None] / (1 - (1 - alphas[:, None]) * np.exp(-1j * w[None, :]))
    rows = np.atleast_2d(G)
    # The least-squares real gain for each (row, alpha), then the residual it leaves.
    gains = (rows @ np.conj(H).T).real / np.sum(np.abs(H) ** 2, axis=1)[None, :]
    error = np.sum(np.abs(rows[:, None, :] - gains[:, :, None] * H[None, :, :]) ** 2, axis=2)
    best = np.argmin(error, axis=1)
    picked = np.arange(len(rows))
    return alphas[best], gains[picked, best], error[picked, best]


def _memory(lines: np.ndarray, G: np.ndarray, T: int, Gi: np.ndarray | None = None) -> dict[str, Any]:
    """The BLA's phase read as a delay and as a first-order low-pass, each with a free real gain (a
    static map before or after the memory, Wiener or Hammerstein, scales the BLA by a real factor, its
    Bussgang gain, and leaves the memory's phase alone); with `Gi` (each experiment's BLA), the delay's
    test and both numbers' 95 % intervals from their spread across experiments.

    Memory is claimed from the delay alone: it is signed (a memoryless model's scatters around 0 on
    both sides, so a t test holds its rate), while a time constant is bounded at 0 and a low-pass
    lags as well. Residuals are relative, sqrt(sum |G - M|^2 / sum |G|^2), as the single tones'."""
    w = 2 * np.pi * lines / T
    norm = float(np.sum(np.abs(G) ** 2))
    d = float(fit_delay(lines, G[None, :])[0])
    shift = np.exp(-1j * w * d)
    delay_gain = float(np.mean((G * np.conj(shift)).real))
    a, g, lp = (float(v[0]) for v in _lowpass_fits(lines, G, T))
    out: dict[str, Any] = {
        "delay_steps": round(d, 3),
        "delay_gain": round(delay_gain, 6),
        "delay_residual": round(math.sqrt(float(np.sum(np.abs(G - delay_gain * shift) ** 2)) / norm), 6)
        if norm > 0
        else None,
        "lowpass_alpha": round(a, 3),
        "lowpass_gain": round(g, 6),
        "time_constant_steps": round(_tau(a), 3),
        "lowpass_residual": round(math.sqrt(lp / norm), 6) if norm > 0 else None,
    }
    if Gi is None:
        return out
    out |= _memory_test(lines, Gi, d, a, T)
    return out


def _tau(a: float) -> float:
    return -1 / math.log(1 - a) if a < 1 else 0.0


def _memory_test(lines: np.ndarray, Gi: np.ndarray, d: float, a: float, T: int) -> dict[str, Any]:
    """The delay's two-sided t test against 0 over the experiments (each experiment's BLA fitted
    alone; the spread of those fits is the delay's standard error times sqrt n), and 95 % intervals
    of the delay and of the time constant."""
    n = len(Gi)
    if n < 2:
        return {"experiments": n, "p_value": None, "delay_interval": None, "time_constant_interval": None}
    period = delay_period(lines)
    # The short way round from the pooled delay: fits near a wrap stay beside it.
    each = d + wrap_delay(fit_delay(lines, Gi) - d, period)
    se = float(np.std(each, ddof=1)) / math.sqrt(n)
    if se > 0:
        p = 2 * (1 - t_cdf(abs(d) / se, n - 1))
    else:
        p = 0.0 if abs(d) > DELAY_RESOLUTION else 1.0
    if abs(d) <= DELAY_RESOLUTION:
        p = 1.0
    half = t_quantile(0.975, n - 1)
    alphas = _lowpass_fits(lines, Gi, T)[0]
    a_se = float(np.std(alphas, ddof=1)) / math.sqrt(n)
    a_low, a_high = max(a - half * a_se, 0.0), min(a + half * a_se, 1.0)
    return {
        "experiments": n,
        "p_value": float(min(max(p, 0.0), 1.0)),
        "delay_interval": [round(d - half * se, 3), round(d + half * se, 3)],
        # tau falls as a rises; an a at or below 0 is a memory without end (null: no upper bound).
        "time_constant_interval": [round(_tau(a_high), 3), round(_tau(a_low), 3) if a_low > 0 else None],
    }


def _model(memory: dict[str, Any]) -> str:
    """The memory model that fits the BLA: `delay`, `low-pass`, or `lag` (neither below `MODEL_FITS`)."""
    delay, lowpass = memory.get("delay_residual"), memory.get("lowpass_residual")
    if delay is None or lowpass is None or min(delay, lowpass) >= MODEL_FITS:
        return "lag"
    return "delay" if delay <= lowpass else "low-pass"


def _noise_cells(exps: Sequence[_Experiment], H: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per experiment with two periods or more, per line 0..H: the variance of its period mean
    estimated from the spread across periods (`s2`), the periods (`P`), and the experiments' positions."""
    where = [i for i, e in enumerate(exps) if len(e.Ys) > 1]
    if not where:
        return None
    s2 = np.array(
        [np.sum(np.abs(np.array(exps[i].Ys) - exps[i].Y) ** 2, axis=0) / (len(exps[i].Ys) - 1) / len(exps[i].Ys)
         for i in where]
    )  # fmt: skip
    return s2, np.array([len(exps[i].Ys) for i in where]), np.array(where)


def _beyond_noise(D: np.ndarray, s2: np.ndarray, periods: np.ndarray) -> float:
    """The p-value of the added power in `D` (experiments x lines, the ones with a noise estimate)
    against the noise `s2` measured at the same cells: under a linear model plus noise each |D|^2 is
    the noise of a period mean (complex: 2 degrees of freedom) and each s2 its estimate from the
    periods (2 (P - 1)), so their sums' ratio is F distributed; the noise level of each experiment
    (pooled over its lines) weighs the degrees of freedom (Satterthwaite), as levels differ between
    questions. Noise measured as exactly zero (every period alike): any added power repeats."""
    added, noise = float(np.sum(np.abs(D) ** 2)), float(np.sum(s2))
    if noise <= 0:
        return 0.0 if added > 0 else 1.0
    level = np.repeat(s2.mean(axis=1, keepdims=True), s2.shape[1], axis=1)
    total = float(level.sum())
    dfn = 2 * total**2 / float(np.sum(level**2))
    dfd = 2 * total**2 / float(np.sum(level**2 / (periods[:, None] - 1)))
    return float(t_ufuncs().fdtrc(dfn, dfd, added / noise))


#: Why a stateless run's BLA phase is not read as memory (the verdict and the report say it).
STATELESS_MEMORY = (
    "memory not read (stateless protocol): each row was its own request, so a deterministic model is a "
    "memoryless map and its BLA phase is 0 by construction; a phase there is prompt-specific inconsistency "
    "(its spread across realizations), not lag. Run --protocol sequential to read memory."
)
#: Why the noise was not measured when the periods were copies of one answer.
COPIES = "noise not measured: each distinct prompt was asked once (--dedupe), so the periods are copies"
#: Why the noise was not measured with one period.
ONE_PERIOD = "noise not measured: no realization was answered in two periods"


def measure_family(
    sweeps: Sequence[MultitoneSweep], plan: MultitonePlan, protocol: str = "sequential", copies: bool = False
) -> dict[str, Any] | None:
    """The multi-tone reading of one family (None without a complete multisine sweep). In the
    stateless `protocol` no memory is claimed: `memory` says why instead of reading the phase.
    `copies`: the periods repeat one answer per prompt (a --dedupe run), so they measure no noise.

    The claims (`distortion_detected`, `memory.found`, the verdict) are made from this family's
    tests alone; `conclude` makes them again over several families' tests (Holm)."""
    T, H = plan.time_steps, plan.highest_line
    exps = _experiments(sweeps, MULTISINE, H)
    if not exps:
        return None
    excited = np.array(plan.excited_lines)
    X = np.array([e.X for e in exps])
    Y = np.array([e.Y for e in exps])
    n = len(exps)
    ref = float(np.mean(np.abs(X[:, excited])))
    Gi = Y[:, excited] / X[:, excited]
    G = Gi.mean(axis=0)
    detect = [k for k in range(1, H + 1) if k not in plan.excited_lines]
    memory = _memory(excited, G, T, Gi if protocol != "stateless" else None)
    Gd = _carried(excited, G, detect, memory, T)
    D = Y[:, detect] - Gd * X[:, detect]
    # The BLA over every line of the period, for the static map's fit (0: the constant fits the mean).
    full = np.concatenate([[1.0], _carried(excited, G, range(1, T // 2 + 1), memory, T)])
    static_share = _static_share(exps, detect, D, full, H)
    t = t_quantile(0.975, n - 1) if n > 1 else math.nan
    gain_i, phase_i = np.abs(Gi), np.angle(Gi / G)
    half_gain = t * gain_i.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full(len(excited), math.nan)
    half_phase = (
        np.degrees(t * phase_i.std(axis=0, ddof=1) / math.sqrt(n)) if n > 1 else np.full(len(excited), math.nan)
    )
    # Noise: the spread across periods of one realization (variance of the period mean).
    cells = None if copies else _noise_cells(exps, H)
    if cells is not None:
        noise_var = cells[0].mean(axis=0)
    else:
        noise_var = np.full(H + 1, np.nan)
    resid = Y[:, excited] - G * X[:, excited]
    total_var = np.sum(np.abs(resid) ** 2, axis=0) / max(n - 1, 1)
    stochastic_var = np.maximum(total_var - noise_var[excited], 0)
    floor = 2 * (TRUNCATION / math.sqrt(12)) / math.sqrt(T)
    lines: list[dict[str, Any]] = []
    intervals: list[dict[str, Any]] = []
    level, truth_level, error_level = _rms(Y), _rms(X), _rms(Y - X)
    added_at = dict(zip(detect, _rms(D), strict=True))
    for k in range(1, H + 1):
        kind = plan.line_kind(k)
        entry: dict[str, Any] = {"cycles": k, "kind": kind, "gain": None, "phase_deg": None}
        if kind == "excited":
            j = plan.excited_lines.index(k)
            entry["gain"] = round(float(abs(G[j])), 6)
            entry["phase_deg"] = round(float(np.degrees(np.angle(G[j]))), 4)
            intervals.append(
                {
                    "cycles": k,
                    "gain_low": round(float(abs(G[j]) - half_gain[j]), 6),
                    "gain_high": round(float(abs(G[j]) + half_gain[j]), 6),
                    "phase_low_deg": round(float(entry["phase_deg"] - half_phase[j]), 4),
                    "phase_high_deg": round(float(entry["phase_deg"] + half_phase[j]), 4),
                    "noise_db": _db(math.sqrt(noise_var[k]) / ref) if np.isfinite(noise_var[k]) else None,
                    "stochastic_db": _db(math.sqrt(stochastic_var[j]) / ref),
                }
            )
        entry["level_db"] = _db(level[k] / ref)
        entry["truth_level_db"] = _db(truth_level[k] / ref)
        entry["error_level_db"] = _db(error_level[k] / ref)
        entry["added_db"] = _db(added_at[k] / ref) if k in added_at else None
        lines.append(entry)
    floor_db = _db(floor / ref)
    even = [added_at[k] for k in detect if k % 2 == 0]
    odd = [added_at[k] for k in detect if k % 2 == 1]
    even_db, odd_db = _db(float(_rms(even)) / ref), _db(float(_rms(odd)) / ref)
    signal_power = float(np.mean(np.abs(X[:, excited]) ** 2) * len(excited))
    distortion_power = float(np.mean(np.abs(D) ** 2) * len(detect))
    # The noise at the detection lines (each line's period-mean variance, averaged): the level the
    # added distortion is judged against, on the same footing.
    detection_noise = float(np.mean(noise_var[detect])) if cells is not None else math.nan
    noise: dict[str, Any] = {
        "measured": cells is not None,
        "level_db": (_db(math.sqrt(detection_noise) / ref) if detection_noise > 0 else None)
        if cells is not None
        else None,
    }
    p_values: dict[str, float | None] = {"even": None, "odd": None}
    share_beyond_noise = static_share
    if cells is not None:
        s2, periods, at = cells
        for kind, parity in (("even", 0), ("odd", 1)):
            group = np.array([j for j, k in enumerate(detect) if k % 2 == parity], dtype=np.int64)
            columns = [detect[j] for j in group]
            p_values[kind] = _beyond_noise(D[np.ix_(at, group)], s2[:, columns], periods)
        if static_share is not None and distortion_power > 0:
            # The static map's share of what the noise does not explain (noise is white to it): the
            # share the verdict reads, none where the noise holds all of the added power.
            beyond = 1 - detection_noise * len(detect) * n / float(np.sum(np.abs(D) ** 2))
            share_beyond_noise = min(static_share / beyond, 1.0) if beyond > 0 else None
    else:
        noise["why"] = COPIES if copies else ONE_PERIOD
    if protocol == "stateless":
        memory = {"read": False, "found": None, "why": STATELESS_MEMORY}
    else:
        memory["read"] = True
    out = {
        "reference_level": ref,
        "experiments": n,
        "lines": lines,
        "bla_intervals": intervals,
        "floor_db": floor_db,
        "truncation_bound_db": _db(TRUNCATION * 2 / ref),  # worst case: every step a whole truncation off, in phase
        "even_added_db": even_db,
        "odd_added_db": odd_db,
        "distortion_db": _db(math.sqrt(distortion_power / signal_power)),
        "static_share": None if static_share is None else round(static_share, 4),
        "static_share_beyond_noise": None if share_beyond_noise is None else round(share_beyond_noise, 4),
        # A deterministic model answers each period of a realization alike: its noise is exactly zero
        # (no dB: `noise_db` null), which the report says as "none", apart from not measured (null here).
        "periods_identical": (
            all(all(np.array_equal(e.Ys[0], ys) for ys in e.Ys[1:]) for e in exps if len(e.Ys) > 1)
            if cells is not None
            else None
        ),
        "noise": noise,
        "distortion_tests": {"even_p": p_values["even"], "odd_p": p_values["odd"]},
        "memory": memory,
        "two_tone": two_tone(sweeps, plan, excited, G),
    }
    return conclude({"family": out})["family"]


def conclude(families: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The claims of each family's reading, with its tests Holm-adjusted over every family here:
    the even and odd distortion tests (two a family) together, the memory tests together. Sets
    `distortion_tests.*_p_holm`, `distortion_detected`, `memory.p_value_holm`, `memory.found`,
    `memory.model` and `verdict`; `tests` counts the tests each adjustment was over."""
    keys = [(f, kind) for f, m in families.items() for kind in ("even", "odd")
            if m["distortion_tests"][f"{kind}_p"] is not None]  # fmt: skip
    adjusted = dict(zip(keys, holm([families[f]["distortion_tests"][f"{kind}_p"] for f, kind in keys]), strict=True))
    memories = [f for f, m in families.items() if m["memory"].get("read") and m["memory"].get("p_value") is not None]
    memory_adjusted = dict(zip(memories, holm([families[f]["memory"]["p_value"] for f in memories]), strict=True))
    for f, m in families.items():
        limit = (m["floor_db"] if m["floor_db"] is not None else -math.inf) + DETECTION_MARGIN_DB
        found: dict[str, bool | None] = {}
        for kind in ("even", "odd"):
            above = m[f"{kind}_added_db"] is not None and m[f"{kind}_added_db"] > limit
            p = adjusted.get((f, kind))
            m["distortion_tests"][f"{kind}_p_holm"] = p
            found[kind] = (above and p < CLAIM_RATE) if p is not None else (None if above else False)
        m["distortion_tests"]["tests"] = len(keys)
        m["distortion_tests"]["claim_rate"] = CLAIM_RATE
        detected = [found["even"], found["odd"]]
        m["distortion_detected"] = True if True in detected else (None if None in detected else False)
        memory = m["memory"]
        if memory.get("read"):
            p = memory_adjusted.get(f)
            memory["p_value_holm"] = p
            memory["tests"] = len(memories)
            memory["found"] = None if p is None else bool(p < CLAIM_RATE)
            memory["model"] = _model(memory) if memory["found"] else None
        m["verdict"] = verdict(m, found)
    return families


def verdict(m: dict[str, Any], found: dict[str, bool | None]) -> str:
    """Linear within the noise (or the floor), static nonlinearity (even / odd / even and odd),
    per-prompt inconsistency, memory, or a mix; added distortion whose noise was not measured is
    said to be undecided; memory not read (the stateless protocol) is said after the rest.

    A static map must explain at least half the distortion beyond the noise (`STATIC_SHARE`), else
    it is per-prompt inconsistency (errors that repeat across periods); a static map is named by the
    kinds of line it adds on (one kind 6 dB above the other names that kind alone: a map of the
    itself nonlinear truth leaves a little of the other)."""
    memory = m["memory"]
    parts = (
        [f"memory ({memory['model']})" if memory.get("model") not in (None, "lag") else "memory"]
        if memory.get("found")
        else []
    )
    even, odd = found["even"] is True, found["odd"] is True
    share = m.get("static_share_beyond_noise")
    if even or odd:
        if share is None or share < STATIC_SHARE:
            parts.append(INCONSISTENCY)
        elif even and odd and abs((m["even_added_db"] or 0) - (m["odd_added_db"] or 0)) < DOMINANT_DB:
            parts.append("static nonlinearity (even and odd)")
        else:
            dominant = "even" if even and (not odd or (m["even_added_db"] or 0) > (m["odd_added_db"] or 0)) else "odd"
            parts.append(f"static nonlinearity ({dominant})")
    elif None in found.values():
        parts.append(UNDECIDED)
    elif not parts:
        parts.append("linear within the noise" if _noisy(m) else "linear within the floor")
    said = " and ".join(parts)
    return f"{said}; {STATELESS_VERDICT}" if not memory.get("read") else said


def _noisy(m: dict[str, Any]) -> bool:
    """Whether the family's answers held measured noise (not none, not unmeasured)."""
    return bool(m["noise"]["measured"]) and m.get("periods_identical") is False


#: Added distortion no static map of the answer explains: errors particular to each prompt that
#: repeat when it is asked again.
INCONSISTENCY = (
    "per-prompt inconsistency (errors that repeat across periods; no static map of the answer explains them)"
)
#: Distortion above the floor when the noise was not measured: noise and per-prompt errors look alike.
UNDECIDED = (
    "added distortion above the floor, undecided: noise not measured, so errors that repeat are not told from noise"
)


#: The verdict's closing words in the stateless protocol (`STATELESS_MEMORY` says why).
STATELESS_VERDICT = "memory not read (stateless protocol)"


def two_tone(
    sweeps: Sequence[MultitoneSweep], plan: MultitonePlan, excited: np.ndarray, G: np.ndarray
) -> list[dict[str, Any]]:
    """Each tone's and product's levels relative to the exact answers' tones (added: beyond the exact
    answers' own content at that line passed through the multisine's BLA).

    One convention, numerator and denominator alike: a level is an rms over the experiments, and
    so is its reference, the exact answers' rms at the tones: a tone's own (so the exact answers
    read 0.0 dB there, and the answers' tone reads as that tone's gain), both tones' together (their
    power mean) for a product. An rms over a mean of magnitudes read the exact answers' tones +0.4 dB,
    as the questions' sizes differ."""
    exps = _experiments(sweeps, TWO_TONE, plan.highest_line)
    if not exps:
        return []
    X = np.array([e.X for e in exps])
    Y = np.array([e.Y for e in exps])
    f1, f2 = plan.two_tone_lines
    tones = float(_rms(X[:, [f1, f2]].ravel()))
    out = []
    # The tones first (a static map moves them too: y = x + c x^3 lifts each by (9/4) c A^3), then the products.
    for name, k in [("f1", f1), ("f2", f2), *plan.products()]:
        Gk = bla_at(excited, G, [k])[0]
        ref = float(_rms(X[:, k])) if k in (f1, f2) else tones
        out.append(
            {
                "cycles": k,
                "product": name,
                "level_db": _db(float(_rms(Y[:, k])) / ref),
                "truth_level_db": _db(float(_rms(X[:, k])) / ref),
                "error_level_db": _db(float(_rms(Y[:, k] - X[:, k])) / ref),
                "added_db": _db(float(_rms(Y[:, k] - Gk * X[:, k])) / ref),
            }
        )
    return out


def summarize(families: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The overall distortion (power mean of the families' distortion-to-signal ratios, dB)."""
    values = [f["distortion_db"] for f in families.values() if f.get("distortion_db") is not None]
    overall = _db(math.sqrt(float(np.mean([10 ** (v / 10) for v in values])))) if values else None
    return {"distortion_db": overall, "families": len(families)}
