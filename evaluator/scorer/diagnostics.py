"""The chirp and step rows of a submission: per-sweep curves and responses, per-family summaries,
and the agreement of the three measurements (sinusoid, chirp, step).

MB-Core and MB-Plus do not use any of this: they stay the paper's, from sinusoids only.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from mathbode.schema.keys import SweepKey
from mathbode.schema.layout import CHIRP, layout

from ..curves import family_curves, window_cycles
from ..table import Table
from .reference_index import ReferenceIndex
from .transients import OCTAVES, chirp_curves, curve_at, normalised_step, step_response

#: Columns naming a chirp or step sweep in chirp.csv and step.csv.
TRANSIENT_COLUMNS = ["family", "question_id", "signal_type", "amplitude_scale"]
STEP_METRICS = (
    *("pre_error", "steady_state_error", "overshoot", "dead_time", "rise_time", "settling_time", "delay"),
    "compliance",
)
#: Where the chirp and the sinusoids are compared: the paper's mid-band.
AGREEMENT_FREQUENCIES = (4.0, 8.0)


def _nanmean(values: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(np.asarray(values, dtype=float))) if len(values) else math.nan


def transient_tables(
    index: ReferenceIndex, answers: np.ndarray, sweeps: set[SweepKey]
) -> tuple[Table, Table, dict[str, list[float]]]:
    """(chirp.csv, step.csv, step curves): every window of every chirp sweep, every step sweep's
    response, and per family the mean normalised step response from 4 steps before the switch.

    `answers` holds each reference row's answer (NaN where none), in the index's row order.
    """
    lay = layout()
    chosen = [sweep for sweep in index.transient_sweeps if sweep in sweeps]
    chirps = [sweep for sweep in chosen if sweep.signal_type == CHIRP]
    chirp = _chirp_table(index, answers, chirps)
    step_rows = []
    curves: dict[str, list[np.ndarray]] = {}
    for sweep in chosen:
        if sweep.signal_type == CHIRP:
            continue
        where = index.steps[sweep]
        truth, model = index.truth[where], answers[where]
        names = (sweep.family, sweep.question_id, sweep.signal_type, sweep.amplitude_scale)
        step_rows.append(
            {**dict(zip(TRANSIENT_COLUMNS, names, strict=True)), **step_response(truth, model, lay.step_switch)}
        )
        curves.setdefault(sweep.family, []).append(normalised_step(truth, model, lay.step_switch))
    step = Table.from_rows(step_rows, [*TRANSIENT_COLUMNS, *STEP_METRICS])
    mean_curves = {family: [_nanmean(column) for column in np.stack(rs).T] for family, rs in curves.items()}
    return chirp, step, mean_curves


CHIRP_COLUMNS = [
    *TRANSIENT_COLUMNS,
    *("centre_step", "frequency_cycles", "window_cycles", "gain", "phase_err_deg", "compliance"),
]


def _chirp_table(index: ReferenceIndex, answers: np.ndarray, chirps: list[SweepKey]) -> Table:
    """chirp.csv: one row per window of each chirp sweep, sweeps in the given order."""
    if not chirps:
        return Table.from_rows([], CHIRP_COLUMNS)
    lay = layout()
    where = np.array([index.steps[sweep] for sweep in chirps])
    curves = chirp_curves(index.truth[where], answers[where], lay.chirp_start_cycles, lay.chirp_end_cycles)
    windows = len(curves["centre_step"])
    table: dict[str, Any] = {
        name: [getattr(sweep, name) for sweep in chirps for _ in range(windows)] for name in TRANSIENT_COLUMNS
    }
    table["centre_step"] = np.tile(curves["centre_step"], len(chirps))
    table["frequency_cycles"] = np.tile(curves["frequency_cycles"], len(chirps))
    table["window_cycles"] = window_cycles(table["frequency_cycles"], lay.time_steps)
    for name in ("gain", "phase_err_deg", "compliance"):
        table[name] = curves[name].ravel()
    return Table({name: table[name] for name in CHIRP_COLUMNS})


def diagnostics(chirp: Table, step: Table, summary: Table, families: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Per family (of `families`, in their order; default the layout's five): the chirp curve at the
    octave points, the mean step response, and the agreement figures."""
    lay = layout()
    T = lay.time_steps
    out: dict[str, Any] = {"chirp": {}, "step": {}, "agreement": {}}
    curves = family_curves(chirp)
    for family in families if families is not None else lay.families:
        curve = curves.get(family, [])
        steps = step[step["family"] == family] if len(step) else step
        sines = summary[summary["family"] == family] if len(summary) else summary
        if curve:
            points = {f"{f:g}": curve_at(curve, f) for f in OCTAVES}
            out["chirp"][family] = {
                "sweeps": len(set(chirp[chirp["family"] == family].keys(TRANSIENT_COLUMNS))),
                "at": points,
            }
        if len(steps):
            out["step"][family] = {"sweeps": len(steps), **{m: _nanmean(steps[m]) for m in STEP_METRICS}}
        agreement: dict[str, Any] = {}
        by_frequency = {float(r["frequency_cycles"]): r for r in sines.rows()} if len(sines) else {}
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
