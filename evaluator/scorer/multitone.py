"""The multi-tone measurement: best linear approximation, added distortion, noise, two-tone products.

Pure numpy: each family's answered multi-tone sweeps in, one JSON-ready dict out (docs/multitone.md
says what every number means). Spectra are line amplitudes, 2/T |DFT| at lines 1..highest; levels
are in dB relative to one reference per family, the exact answers' mean amplitude at the excited
lines (two-tone: at the two tones).

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

#: Where an added level counts as distortion: this far above the truncation floor.
DETECTION_MARGIN_DB = 20.0
#: Where a phase counts as memory: beyond this many degrees and outside its interval.
MEMORY_PHASE_DEG = 3.0
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


def _t95(dof: int) -> float:
    # Student t 0.975 quantiles (scipy is not a dependency); beyond 30, the normal's 1.96 + 2.4/dof.
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
             10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
             18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}  # fmt: skip
    if dof in table:
        return table[dof]
    if dof < 30:
        return table[max(k for k in table if k < dof)]
    return 1.96 + 2.4 / dof


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
    lines and extrapolated from the nearest two beyond them (exact for a delay)."""
    logg, ph = np.log(np.abs(G)), np.unwrap(np.angle(G))
    out = []
    for k in at:
        if len(lines) == 1:
            out.append(G[0])
            continue
        j = int(np.clip(np.searchsorted(lines, k) - 1, 0, len(lines) - 2))
        w = (k - lines[j]) / (lines[j + 1] - lines[j])
        out.append(np.exp(logg[j] + w * (logg[j + 1] - logg[j]) + 1j * (ph[j] + w * (ph[j + 1] - ph[j]))))
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


def _memory(lines: np.ndarray, G: np.ndarray, T: int) -> dict[str, Any]:
    """The BLA's phase read as a delay and as a first-order low-pass y_t = y_{t-1} + a (x_t - y_{t-1}),
    each with a free real gain: a static map before or after the memory (Wiener, Hammerstein) scales
    the BLA by a real factor (its Bussgang gain) and leaves the memory's phase alone."""
    w = 2 * np.pi * lines / T
    unit = G / np.abs(G)
    delays = np.arange(0, 16.0001, 0.005)
    cost = [float(np.sum(np.abs(unit - np.exp(-1j * w * d)) ** 2)) for d in delays]
    d = float(delays[int(np.argmin(cost))])
    alphas = np.arange(0.01, 1.00001, 0.001)
    H = alphas[:, None] / (1 - (1 - alphas[:, None]) * np.exp(-1j * w[None, :]))
    # The least-squares real gain for each alpha, then the residual it leaves.
    gains = np.sum((np.conj(H) * G[None, :]).real, axis=1) / np.sum(np.abs(H) ** 2, axis=1)
    lp = np.sum(np.abs(G[None, :] - gains[:, None] * H) ** 2, axis=1)
    best = int(np.argmin(lp))
    a = float(alphas[best])
    return {
        "delay_steps": round(d, 3),
        "delay_residual": round(min(cost), 6),
        "lowpass_alpha": round(a, 3),
        "lowpass_gain": round(float(gains[best]), 6),
        "time_constant_steps": round(-1 / math.log(1 - a), 3) if a < 1 else 0.0,
        "lowpass_residual": round(float(lp[best]), 6),
    }


#: Why a stateless run's BLA phase is not read as memory (the verdict and the report say it).
STATELESS_MEMORY = (
    "memory not read (stateless protocol): each row was its own request, so a deterministic model is a "
    "memoryless map and its BLA phase is 0 by construction; a phase there is prompt-specific inconsistency "
    "(its spread across realizations), not lag. Run --protocol sequential to read memory."
)


def measure_family(
    sweeps: Sequence[MultitoneSweep], plan: MultitonePlan, protocol: str = "sequential"
) -> dict[str, Any] | None:
    """The multi-tone reading of one family (None without a complete multisine sweep). In the
    stateless `protocol` no memory is claimed: `memory` says why instead of reading the phase."""
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
    memory = _memory(excited, G, T)
    Gd = _carried(excited, G, detect, memory, T)
    D = Y[:, detect] - Gd * X[:, detect]
    # The BLA over every line of the period, for the static map's fit (0: the constant fits the mean).
    full = np.concatenate([[1.0], _carried(excited, G, range(1, T // 2 + 1), memory, T)])
    static_share = _static_share(exps, detect, D, full, H)
    t = _t95(n - 1) if n > 1 else math.nan
    gain_i, phase_i = np.abs(Gi), np.angle(Gi / G)
    half_gain = t * gain_i.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full(len(excited), math.nan)
    half_phase = (
        np.degrees(t * phase_i.std(axis=0, ddof=1) / math.sqrt(n)) if n > 1 else np.full(len(excited), math.nan)
    )
    # Noise: the spread across periods of one realization (variance of the period mean).
    noise_var = np.zeros(H + 1)
    with_periods = [e for e in exps if len(e.Ys) > 1]
    for e in with_periods:
        noise_var += np.sum(np.abs(np.array(e.Ys) - e.Y) ** 2, axis=0) / (len(e.Ys) - 1) / len(e.Ys)
    noise_var = noise_var / len(with_periods) if with_periods else np.full(H + 1, np.nan)
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
    phases = np.degrees(np.angle(G))
    if protocol == "stateless":
        memory = {"read": False, "found": None, "why": STATELESS_MEMORY}
    else:
        memory["read"] = True
        memory["found"] = bool(
            np.any((np.abs(phases) > MEMORY_PHASE_DEG) & ~(np.abs(phases) <= np.nan_to_num(half_phase, nan=0.0)))
        )
    bound = TRUNCATION * 2  # worst case: every step off by a whole truncation, all in phase
    return {
        "reference_level": ref,
        "experiments": n,
        "lines": lines,
        "bla_intervals": intervals,
        "floor_db": floor_db,
        "truncation_bound_db": _db(bound / ref),
        "even_added_db": even_db,
        "odd_added_db": odd_db,
        "distortion_db": _db(math.sqrt(distortion_power / signal_power)),
        "static_share": None if static_share is None else round(static_share, 4),
        # A deterministic model answers each period of a realization alike: its noise is exactly zero
        # (no dB: `noise_db` null), which the report says as "none", apart from not measured (null here).
        "periods_identical": (
            all(all(np.array_equal(e.Ys[0], ys) for ys in e.Ys[1:]) for e in with_periods) if with_periods else None
        ),
        "memory": memory,
        "verdict": verdict(even_db, odd_db, floor_db, memory["found"], static_share),
        "two_tone": two_tone(sweeps, plan, excited, G),
    }


def verdict(
    even_db: float | None,
    odd_db: float | None,
    floor_db: float | None,
    memory: bool | None,
    static_share: float | None = None,
) -> str:
    """Linear within the floor, static nonlinearity (even / odd / even and odd), per-prompt inconsistency,
    memory, or a mix; `memory` None: not read (the stateless protocol), said after the rest.

    Distortion counts 20 dB above the floor. A static map must explain at least half its power
    (`STATIC_SHARE`), else it is per-prompt inconsistency; a static map is named by the kinds of line
    it adds on (one kind 6 dB above the other names that kind alone: a map of the itself nonlinear
    truth leaves a little of the other)."""
    limit = (floor_db if floor_db is not None else -math.inf) + DETECTION_MARGIN_DB
    even = even_db is not None and even_db > limit
    odd = odd_db is not None and odd_db > limit
    parts = ["memory"] if memory else []
    if (even or odd) and (static_share is None or static_share < STATIC_SHARE):
        parts.append(INCONSISTENCY)
    elif even and odd and abs((even_db or 0) - (odd_db or 0)) < DOMINANT_DB:
        parts.append("static nonlinearity (even and odd)")
    elif even or odd:
        dominant = "even" if (even and not odd) or (even and odd and (even_db or 0) > (odd_db or 0)) else "odd"
        parts.append(f"static nonlinearity ({dominant})")
    said = " and ".join(parts) if parts else "linear within the floor"
    return f"{said}; {STATELESS_VERDICT}" if memory is None else said


#: Added distortion no static map of the answer explains: errors particular to each prompt.
INCONSISTENCY = "per-prompt inconsistency (no static map of the answer explains it)"


#: The verdict's closing words in the stateless protocol (`STATELESS_MEMORY` says why).
STATELESS_VERDICT = "memory not read (stateless protocol)"


def two_tone(
    sweeps: Sequence[MultitoneSweep], plan: MultitonePlan, excited: np.ndarray, G: np.ndarray
) -> list[dict[str, Any]]:
    """Each tone's and product's levels relative to the exact answers' tones (added: beyond the exact
    answers' own content at that line passed through the multisine's BLA)."""
    exps = _experiments(sweeps, TWO_TONE, plan.highest_line)
    if not exps:
        return []
    X = np.array([e.X for e in exps])
    Y = np.array([e.Y for e in exps])
    f1, f2 = plan.two_tone_lines
    ref = float(np.mean(np.abs(X[:, [f1, f2]])))
    out = []
    # The tones first (a static map moves them too: y = x + c x^3 lifts each by (9/4) c A^3), then the products.
    for name, k in [("f1", f1), ("f2", f2), *plan.products()]:
        Gk = bla_at(excited, G, [k])[0]
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
