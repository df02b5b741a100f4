"""The chirp and step rows of a submission: per-sweep curves and responses, per-family summaries,
and the agreement of the three measurements (sinusoid, chirp, step).

MB-Core and MB-Plus do not use any of this: they stay the paper's, from sinusoids only.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from mathbode.schema.keys import RowKey, SweepKey
from mathbode.schema.layout import CHIRP, STEP, layout

from .transients import OCTAVES, chirp_curve, curve_at, normalised_step, step_response

#: Columns naming a chirp or step sweep in chirp.csv and step.csv.
TRANSIENT_COLUMNS = ["family", "question_id", "signal_type", "amplitude_scale"]
STEP_METRICS = ("pre_error", "steady_state_error", "overshoot", "rise_time", "settling_time", "delay", "compliance")
#: Where the chirp and the sinusoids are compared: the paper's mid-band.
AGREEMENT_FREQUENCIES = (4.0, 8.0)


def _nanmean(values: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(np.asarray(values, dtype=float))) if len(values) else math.nan


def transient_tables(
    ref: dict[str, list[Any]], answers: dict[RowKey, float], sweeps: set[SweepKey]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, list[float]]]:
    """(chirp.csv, step.csv, step curves): every window of every chirp sweep, every step sweep's
    response, and per family the mean normalised step response from 4 steps before the switch.

    `ref` holds the reference's key columns and `ground_truth` as Python lists (the scorer's).
    """
    lay = layout()
    T = lay.time_steps
    truth: dict[SweepKey, np.ndarray] = {}
    for i, signal in enumerate(ref["signal_type"]):
        if signal not in (CHIRP, STEP):
            continue
        key = RowKey(*(ref[c][i] for c in lay.key))
        key = key._replace(frequency_cycles=None, phase_deg=None)
        if key.sweep in sweeps:
            truth.setdefault(key.sweep, np.full(T, math.nan))[key.time_step] = ref["ground_truth"][i]
    chirp_rows, step_rows = [], []
    curves: dict[str, list[np.ndarray]] = {}
    for sweep in sorted(truth, key=lambda s: (lay.families.index(s.family), s[1:4])):
        model = np.array([answers.get(sweep.row(t), math.nan) for t in range(T)])
        names = dict(
            zip(
                TRANSIENT_COLUMNS,
                (sweep.family, sweep.question_id, sweep.signal_type, sweep.amplitude_scale),
                strict=True,
            )
        )
        if sweep.signal_type == CHIRP:
            for row in chirp_curve(truth[sweep], model, lay.chirp_start_cycles, lay.chirp_end_cycles):
                chirp_rows.append({**names, **row})
        else:
            step_rows.append({**names, **step_response(truth[sweep], model, lay.step_switch)})
            curves.setdefault(sweep.family, []).append(normalised_step(truth[sweep], model, lay.step_switch))
    chirp = pd.DataFrame(
        chirp_rows,
        columns=[*TRANSIENT_COLUMNS, "centre_step", "frequency_cycles", "gain", "phase_err_deg", "compliance"],
    )
    step = pd.DataFrame(step_rows, columns=[*TRANSIENT_COLUMNS, *STEP_METRICS])
    mean_curves = {family: [_nanmean(column) for column in np.stack(rs).T] for family, rs in curves.items()}
    return chirp, step, mean_curves


def family_curves(chirp: pd.DataFrame) -> dict[str, list[dict[str, float]]]:
    """Each family's chirp curve: per window centre, the mean over its chirp sweeps (one groupby)."""
    if not len(chirp):
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = chirp.groupby(["family", "centre_step"], sort=True)[
            ["frequency_cycles", "gain", "phase_err_deg", "compliance"]
        ].mean()
    columns = list(mean.columns)
    curves: dict[str, list[dict[str, float]]] = {}
    for (family, centre), values in zip(mean.index, mean.to_numpy(dtype=float), strict=True):
        point = {"centre_step": float(centre), **dict(zip(columns, map(float, values), strict=True))}
        curves.setdefault(str(family), []).append(point)
    return curves


def diagnostics(chirp: pd.DataFrame, step: pd.DataFrame, summary: pd.DataFrame) -> dict[str, Any]:
    """Per family: the chirp curve at the octave points, the mean step response, and the agreement figures."""
    lay = layout()
    T = lay.time_steps
    out: dict[str, Any] = {"chirp": {}, "step": {}, "agreement": {}}
    curves = family_curves(chirp)
    for family in lay.families:
        curve = curves.get(family, [])
        steps = step[step["family"] == family] if len(step) else step
        sines = summary[summary["family"] == family] if len(summary) else summary
        if curve:
            points = {f"{f:g}": curve_at(curve, f) for f in OCTAVES}
            out["chirp"][family] = {
                "sweeps": int(chirp[chirp["family"] == family][TRANSIENT_COLUMNS].drop_duplicates().shape[0]),
                "at": points,
            }
        if len(steps):
            out["step"][family] = {"sweeps": len(steps), **{m: _nanmean(steps[m]) for m in STEP_METRICS}}
        agreement: dict[str, Any] = {}
        by_frequency = {float(r["frequency_cycles"]): r for _, r in sines.iterrows()} if len(sines) else {}
        if curve and by_frequency:
            for f in AGREEMENT_FREQUENCIES:
                if f in by_frequency:
                    point = curve_at(curve, f)
                    agreement[f"chirp_minus_sinusoid_at_{f:g}"] = {
                        "gain": point["gain"] - float(by_frequency[f]["gain"]),
                        "phase_err_deg": point["phase_err_deg"] - float(by_frequency[f]["phase_err_deg"]),
                    }
        if len(steps) and by_frequency:
            # A lag of d steps shows as a phase of -360 d f / T at frequency f: the delay the sinusoids imply.
            implied = [
                -float(by_frequency[f]["phase_err_deg"]) * T / (360 * f)
                for f in AGREEMENT_FREQUENCIES
                if f in by_frequency
            ]
            if implied:
                agreement["step_delay_minus_sinusoid_delay_steps"] = _nanmean(steps["delay"]) - _nanmean(implied)
            low = min(by_frequency)
            agreement[f"step_final_minus_sinusoid_gain_at_{low:g}"] = (
                1 + _nanmean(steps["steady_state_error"]) - float(by_frequency[low]["gain"])
            )
        if agreement:
            out["agreement"][family] = agreement
    return out
