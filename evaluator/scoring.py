"""Score a submission against the canonical rows: answers -> sweeps -> frequency means -> scores."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from mathbode.schema.keys import canonical_sweeps
from mathbode.schema.layout import SINUSOID, layout
from mathbode.schema.submission import Prediction

from .aggregate import SWEEP_KEY, ScoreConfig, family_scores, frequency_summary, overall
from .metrics import SWEEP_METRICS, sweep_metrics
from .parsing import parse_response, truncate

ALL_PRESET, CUSTOM = "ALL", "custom"
DEFAULT_CONFIG = ScoreConfig()


@dataclass
class Scored:
    """The measurements of one submission."""

    label: str
    model: str | None
    preset: str
    sweeps: pd.DataFrame
    summary: pd.DataFrame
    families: dict[str, dict[str, float]]
    overall: dict[str, float]
    extra: dict[str, Any] = field(default_factory=dict)

    def scores_json(self) -> dict[str, Any]:
        """The `scores.json` document."""
        return {
            "method": "paper",
            "preset": self.preset,
            "label": self.label,
            "model": self.model,
            "overall": self.overall,
            "families": self.families,
            **self.extra,
        }


def answer_value(p: Prediction) -> float:
    """The number a line contributes: its parsed response, or its prediction truncated to six decimals."""
    if p.has_response:
        return parse_response(p.response)
    return math.nan if p.prediction is None else truncate(p.prediction)


def _sinusoid_sweeps(family: str) -> list[tuple]:
    return [(f, q, s, fr, ph) for (f, q, kind, s, fr, ph) in canonical_sweeps(family) if kind == SINUSOID]


def preset_sweeps(preset: str, families: list[str]) -> set[tuple]:
    """Sweep keys (family, question_id, amplitude_scale, frequency_cycles, phase_deg) of a preset."""
    lay = layout()
    if preset.upper() == ALL_PRESET:
        return {s for f in families for s in _sinusoid_sweeps(f)}
    return {
        (f, q, s.amplitude_scale, s.frequency_cycles, s.phase_deg)
        for f in families
        for q, s in lay.preset_sweeps(preset)
    }


def detect_preset(sweeps: set[tuple], families: list[str]) -> str:
    """The name of the preset whose sweeps are exactly `sweeps`, else `custom`."""
    for name in [*layout().presets, ALL_PRESET]:
        if preset_sweeps(name, families) == sweeps:
            return name
    return CUSTOM


def score(
    predictions: list[Prediction],
    reference: pa.Table,
    label: str,
    model: str | None = None,
    preset: str | None = None,
    config: ScoreConfig = DEFAULT_CONFIG,
) -> Scored:
    """Measure one submission. `preset` limits the sweeps; by default every sinusoid sweep it answers."""
    lay = layout()
    T = lay.time_steps
    answers = {p.key: answer_value(p) for p in predictions if p.key[2] == SINUSOID}
    families = [f for f in lay.families if any(k[0] == f for k in answers)]
    touched = {(k[0], k[1], k[3], k[4], k[5]) for k in answers}
    if preset:
        in_scope = preset_sweeps(preset, families)
        name = preset.upper()
    else:
        in_scope, name = touched, detect_preset(touched, families)

    ref = reference.select(
        [
            "family",
            "question_id",
            "signal_type",
            "amplitude_scale",
            "frequency_cycles",
            "phase_deg",
            "time_step",
            "ground_truth",
        ]
    ).to_pydict()
    # Plain Python columns: per-row dictionary lookups are much faster than on Arrow-backed pandas.
    cols = [ref[c] for c in ("family", "question_id", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")]
    picked = [
        i
        for i, (f, q, s, fr, ph, _) in enumerate(zip(*cols, strict=True))
        if ref["signal_type"][i] == SINUSOID and (f, q, s, fr, ph) in in_scope
    ]
    # Canonical sweep order (families in layout order), each sweep's steps in time order.
    rank = {f: n for n, f in enumerate(lay.families)}
    picked.sort(key=lambda i: (rank[cols[0][i]], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i]))
    y = np.array(
        [
            answers.get((cols[0][i], cols[1][i], SINUSOID, cols[2][i], cols[3][i], cols[4][i], cols[5][i]), math.nan)
            for i in picked
        ],
        dtype=float,
    )
    truth = np.array([ref["ground_truth"][i] for i in picked], dtype=float)
    n_sweeps = len(picked) // T
    sweep_keys = pd.DataFrame({name: [cols[j][i] for i in picked[::T]] for j, name in enumerate(SWEEP_KEY)})
    rows = []
    for i in range(n_sweeps):
        window = slice(i * T, (i + 1) * T)
        rows.append(sweep_metrics(truth[window], y[window], float(sweep_keys.at[i, "frequency_cycles"]), T))
    sweeps = pd.concat([sweep_keys, pd.DataFrame(rows, columns=list(SWEEP_METRICS))], axis=1)
    summary = frequency_summary(sweeps)
    fam = family_scores(summary, config)
    return Scored(
        label=label,
        model=model,
        preset=name,
        sweeps=sweeps,
        summary=summary,
        families=fam,
        overall=overall(fam),
        extra={"num_sweeps": n_sweeps, "num_answers": int(np.isfinite(y).sum())},
    )
