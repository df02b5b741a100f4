"""What a release records of a family's truth (MANIFEST.json `truth`), computed from its rows alone.

The builder records these facts and the validator recomputes them from the data file, so an
edited manifest cannot claim a swing or a distortion its rows do not have.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from .layout import SINUSOID, layout


def _sweep(columns: dict[str, np.ndarray], q: int, amplitude: float) -> np.ndarray:
    """Question `q`'s 1-cycle, 0-degree sinusoid at `amplitude`: its truth in time order."""
    mask = (columns["question_id"] == q) & (columns["amplitude_scale"] == amplitude) & columns["one_cycle"]
    rows = np.flatnonzero(mask)
    order = np.argsort(columns["time_step"][rows], kind="stable")
    return columns["ground_truth"][rows[order]]


def _sweep_columns(table: pa.Table) -> dict[str, np.ndarray]:
    # numpy masks rather than pyarrow.compute (its import, 40 ms, is on the build's critical path),
    # each column converted once for every sweep read: a null frequency or phase (chirp, step)
    # reads as NaN, equal to nothing, as Arrow's null is.
    columns = {name: table.column(name).to_numpy() for name in ("question_id", "amplitude_scale", "time_step")}
    columns["ground_truth"] = table.column("ground_truth").to_numpy()
    columns["one_cycle"] = (
        (table.column("signal_type").to_numpy() == SINUSOID)
        & (table.column("frequency_cycles").to_numpy() == 1.0)
        & (table.column("phase_deg").to_numpy() == 0.0)
    )
    return columns


def swings_and_distortions(table: pa.Table) -> tuple[list[float], list[float]]:
    """Per question: half the truth's peak-to-peak swing over the smallest amplitude's 1-cycle
    sinusoid, and the truth's own harmonic distortion (2nd and higher over the 1st) at the largest."""
    lay = layout()
    low, high = min(lay.sinusoid_amplitudes), max(lay.sinusoid_amplitudes)
    swings, distortions = [], []
    columns = _sweep_columns(table)
    # The layout's questions, and any more a release of `--questions N` holds.
    held = np.unique(columns["question_id"]).tolist() if columns["question_id"].size else []
    for q in sorted({*lay.question_ids, *held}):
        small = _sweep(columns, q, low)
        swings.append(float(small.max() - small.min()) / 2 if small.size else 0.0)
        wide = _sweep(columns, q, high)
        spectrum = np.abs(np.fft.rfft(wide - wide.mean())) if wide.size else np.zeros(3)
        first = spectrum[1] if spectrum.size > 1 else 0.0
        rest = math.sqrt(float(np.sum(spectrum[2:] ** 2)))
        distortions.append(rest / first if first else math.inf)
    return swings, distortions


def truth_facts(table: pa.Table) -> dict[str, float] | None:
    """What a release records of a family's truth (MANIFEST.json `truth`): what bounds how exactly
    a model's gain and phase can be read on it (see docs/building.md, "Fresh and private splits").

    None when the rows hold no 1-cycle sinusoid to read them on (a multi-tone release), or give a
    value no JSON number can hold (a first harmonic of zero: an infinite distortion): a manifest
    is strict JSON, read by every JSON parser, so it records no facts rather than `Infinity`."""
    swings, distortions = swings_and_distortions(table)
    facts = {"smallest_swing": round(min(swings), 9), "harmonic_distortion": round(max(distortions), 6)}
    has_sweeps = bool(_sweep_columns(table)["one_cycle"].any())
    return facts if has_sweeps and all(math.isfinite(v) for v in facts.values()) else None
