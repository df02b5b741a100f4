"""Chirp and step measurements: a swept-sine Bode curve, a step response, and their agreement.

Pure numpy. The paper drives its questions with sinusoids only and names chirps and steps as
future work, to tell memory (lag) apart from static nonlinearity; these measurements do that.

Chirp: the drive's phase theta(t) is known exactly (logarithmic sweep from f0 to f1 cycles per
T steps, reaching f1 at the last step; the formula is the builder's). In a window of
CHIRP_WINDOW steps around each centre, y = c + a sin(theta) + b cos(theta) is fitted by least
squares to the truth and to the model; gain and phase error are read against the instantaneous
frequency at the window's centre. Why 16 steps: the fit needs several points per unknown
(3 unknowns, at least 12 compliant answers), and the sweep's frequency doubles every 15.75
steps, so a 16-step window spans one octave: the curve is resolved to about an octave, and
its centres run from step 8 to step 55, i.e. from 1.42 to 11.2 cycles, so the octave points
1 and 16 are read at the nearest centres (1.42 and 11.2) and said so.

Step: the drive jumps at `switch` from its low to its high value. The model's answers are
normalised by the truth's jump: r_t = (y_t - y_pre) / (truth_post - truth_pre), with y_pre the
model's settled pre-step level (the mean of its answers over the 16 steps before the switch).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ..curves import CHIRP_WINDOW, MIN_WINDOW_CYCLES, window_cycles

#: Compliant answers a window needs.
CHIRP_MIN_POINTS = 12
#: The octave points the curve is reported at (cycles per T steps).
OCTAVES = (1.0, 2.0, 4.0, 8.0, 16.0)
#: Steps before the switch that make the settled pre-step level, and after it the final level.
SETTLE = 16
#: A response starts at START_LEVEL (the end of its dead time) and has risen at RISE_LEVEL; the
#: rise time runs between them (10-90 %), so a pure delay of k steps reads dead time k and rise 0.
START_LEVEL, RISE_LEVEL, DELAY_LEVEL, SETTLE_BAND = 0.1, 0.9, 0.5, 0.05


def chirp_phase(time_steps: int, start_cycles: float, end_cycles: float) -> np.ndarray:
    """theta(t) in radians, t = 0..T-1: 2 pi f0 (T-1) / (T ln k) (k^(t/(T-1)) - 1), k = f1 / f0."""
    k = end_cycles / start_cycles
    span = time_steps - 1
    t = np.arange(time_steps, dtype=float)
    return 2 * math.pi * start_cycles * span / (time_steps * math.log(k)) * (k ** (t / span) - 1)


def chirp_frequency(time_steps: int, start_cycles: float, end_cycles: float, t: np.ndarray | float) -> np.ndarray:
    """Instantaneous frequency (cycles per T steps) at (possibly fractional) step t."""
    return start_cycles * (end_cycles / start_cycles) ** (np.asarray(t, dtype=float) / (time_steps - 1))


def _local_fit(y: np.ndarray, theta: np.ndarray) -> tuple[float, float]:
    """(amplitude, phase) of y ~ c + a sin(theta) + b cos(theta) on the finite points; NaN when too few."""
    finite = np.isfinite(y)
    if finite.sum() < CHIRP_MIN_POINTS:
        return math.nan, math.nan
    design = np.column_stack([np.ones(finite.sum()), np.sin(theta[finite]), np.cos(theta[finite])])
    coef, *_ = np.linalg.lstsq(design, y[finite], rcond=None)
    return math.hypot(coef[1], coef[2]), math.atan2(coef[2], coef[1])


def chirp_curve(truth: np.ndarray, model: np.ndarray, start_cycles: float, end_cycles: float) -> list[dict[str, float]]:
    """Gain and phase error against instantaneous frequency, one row per window centre."""
    steps = len(truth)
    theta = chirp_phase(steps, start_cycles, end_cycles)
    rows = []
    for first in range(steps - CHIRP_WINDOW + 1):
        window = slice(first, first + CHIRP_WINDOW)
        centre = first + (CHIRP_WINDOW - 1) / 2
        amp_t, ph_t = _local_fit(truth[window], theta[window])
        amp_m, ph_m = _local_fit(model[window], theta[window])
        gain = amp_m / amp_t if amp_t > 0 else math.nan
        phase = math.degrees((ph_m - ph_t + math.pi) % (2 * math.pi) - math.pi) if amp_t > 0 else math.nan
        rows.append(
            {
                "centre_step": centre,
                "frequency_cycles": float(chirp_frequency(steps, start_cycles, end_cycles, centre)),
                "gain": gain,
                "phase_err_deg": phase,
                "compliance": float(np.isfinite(model[window]).mean()),
            }
        )
    return rows


@lru_cache(maxsize=8)
def _window_projectors(time_steps: int, start_cycles: float, end_cycles: float) -> np.ndarray:
    """Per window start: the least-squares projector (3 x CHIRP_WINDOW) of [1, sin theta, cos theta]
    over the window's steps (lstsq's cutoff, so the same minimum-norm solution)."""
    theta = chirp_phase(time_steps, start_cycles, end_cycles)
    out = []
    for first in range(time_steps - CHIRP_WINDOW + 1):
        window = theta[first : first + CHIRP_WINDOW]
        design = np.column_stack([np.ones(CHIRP_WINDOW), np.sin(window), np.cos(window)])
        out.append(np.linalg.pinv(design, rcond=max(design.shape) * np.finfo(float).eps))
    return np.array(out)


def chirp_curves(truth: np.ndarray, model: np.ndarray, start_cycles: float, end_cycles: float) -> dict[str, np.ndarray]:
    """`chirp_curve` of many sweeps at once: `truth` and `model` are (sweeps, T); every output is
    (sweeps, windows), plus `centre_step` and `frequency_cycles` per window.

    A window whose answers are all there is fitted by one product with its shared projector (the
    same least-squares solution as `lstsq`, to rounding); a window with missing answers goes the
    per-window way (`_local_fit`), as the sweep-at-a-time function does.
    """
    steps = truth.shape[1]
    projectors = _window_projectors(steps, start_cycles, end_cycles)
    windows = steps - CHIRP_WINDOW + 1
    view = np.lib.stride_tricks.sliding_window_view

    def fit(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        coef = np.einsum("wkt,swt->swk", projectors, view(y, CHIRP_WINDOW, axis=1))
        return np.hypot(coef[..., 1], coef[..., 2]), np.arctan2(coef[..., 2], coef[..., 1])

    amp_t, ph_t = fit(truth)
    finite = view(np.isfinite(model), CHIRP_WINDOW, axis=1)
    complete = finite.all(axis=2)
    amp_m, ph_m = fit(np.where(np.isfinite(model), model, 0.0))
    theta = chirp_phase(steps, start_cycles, end_cycles)
    for s, first in zip(*np.nonzero(~complete), strict=True):
        window = slice(first, first + CHIRP_WINDOW)
        amp_m[s, first], ph_m[s, first] = _local_fit(model[s, window], theta[window])
    with np.errstate(divide="ignore", invalid="ignore"):
        has_truth = amp_t > 0
        gain = np.where(has_truth, amp_m / amp_t, math.nan)
        phase = np.where(has_truth, np.degrees((ph_m - ph_t + math.pi) % (2 * math.pi) - math.pi), math.nan)
    centres = np.arange(windows) + (CHIRP_WINDOW - 1) / 2
    return {
        "centre_step": centres,
        "frequency_cycles": chirp_frequency(steps, start_cycles, end_cycles, centres),
        "gain": gain,
        "phase_err_deg": phase,
        "compliance": finite.mean(axis=2),
    }


def curve_at(curve: list[dict[str, float]], frequency: float) -> dict[str, Any]:
    """The curve at `frequency`: interpolated in log frequency between centres, else the nearest
    end; n/a (with a `note`) where the window there holds under MIN_WINDOW_CYCLES cycles."""
    out = _curve_at(curve, frequency)
    out["window_cycles"] = float(window_cycles(out["frequency_cycles"]))
    if out["window_cycles"] < MIN_WINDOW_CYCLES:
        out["gain"] = out["phase_err_deg"] = math.nan
        out["note"] = (
            f"n/a: the {CHIRP_WINDOW}-step window holds {out['window_cycles']:.2f} of a cycle here, under "
            f"{MIN_WINDOW_CYCLES:g}: too little to tell a swing from a level"
        )
    return out


def _curve_at(curve: list[dict[str, float]], frequency: float) -> dict[str, Any]:
    freqs = np.array([r["frequency_cycles"] for r in curve])
    out: dict[str, Any] = {"requested": frequency}
    if frequency <= freqs[0] or frequency >= freqs[-1]:
        nearest = curve[0] if frequency <= freqs[0] else curve[-1]
        out.update(
            frequency_cycles=nearest["frequency_cycles"], gain=nearest["gain"], phase_err_deg=nearest["phase_err_deg"]
        )
        return out
    x = math.log(frequency)
    logs = np.log(freqs)
    out["frequency_cycles"] = frequency
    for name in ("gain", "phase_err_deg"):
        out[name] = float(np.interp(x, logs, [r[name] for r in curve]))
    return out


def _levels(truth: np.ndarray, model: np.ndarray, switch: int) -> tuple[float, float, float] | None:
    """(truth_pre, jump, y_pre), or None when the model has no settled pre-step level or the truth no jump."""
    pre = model[max(0, switch - SETTLE) : switch]
    truth_pre = float(np.mean(truth[:switch]))
    jump = float(np.mean(truth[switch:])) - truth_pre
    if not np.isfinite(pre).any() or jump == 0:
        return None
    return truth_pre, jump, float(np.nanmean(pre))


def normalised_step(truth: np.ndarray, model: np.ndarray, switch: int, before: int = 4) -> np.ndarray:
    """r_t for t from `before` steps ahead of the switch to the end (NaN where not defined)."""
    levels = _levels(truth, model, switch)
    if levels is None:
        return np.full(len(truth) - switch + before, math.nan)
    _, jump, y_pre = levels
    return (model[switch - before :] - y_pre) / jump


def step_response(truth: np.ndarray, model: np.ndarray, switch: int) -> dict[str, float]:
    """The numbers a control engineer reads off a step response (definitions in docs/chirp-step.md).

    pre_error: (y_pre - truth_pre) / jump; steady_state_error: mean r over the last SETTLE steps
    minus 1; overshoot: max(r after the switch) - 1, at least 0; dead_time: steps after the
    switch until r first reaches 0.1; rise_time: steps from there until r first reaches 0.9 (the
    10-90 % rise time); settling_time: steps after the switch from which |r - 1| stays within
    0.05; delay: steps after the switch until r first reaches 0.5.
    """
    out = dict.fromkeys(
        ("pre_error", "steady_state_error", "overshoot", "dead_time", "rise_time", "settling_time", "delay"), math.nan
    )
    out["compliance"] = float(np.isfinite(model).mean())
    levels = _levels(truth, model, switch)
    if levels is None:
        return out
    truth_pre, jump, y_pre = levels
    r = normalised_step(truth, model, switch, before=0)
    out["pre_error"] = (y_pre - truth_pre) / jump
    tail = r[-SETTLE:]
    if np.isfinite(tail).any():
        out["steady_state_error"] = float(np.nanmean(tail)) - 1
    if np.isfinite(r).any():
        out["overshoot"] = max(0.0, float(np.nanmax(r)) - 1)
    reached = {}
    for name, level in (("dead_time", START_LEVEL), ("risen", RISE_LEVEL), ("delay", DELAY_LEVEL)):
        where = np.flatnonzero(np.nan_to_num(r, nan=-np.inf) >= level)
        if where.size:
            reached[name] = float(where[0])
    out["dead_time"] = reached.get("dead_time", math.nan)
    out["delay"] = reached.get("delay", math.nan)
    if "risen" in reached:
        out["rise_time"] = reached["risen"] - reached["dead_time"]
    outside = np.flatnonzero(~(np.abs(r - 1) <= SETTLE_BAND))  # NaN answers count as outside
    if outside.size == 0:
        out["settling_time"] = 0.0
    elif outside[-1] < len(r) - 1:
        out["settling_time"] = float(outside[-1] + 1)
    return out
