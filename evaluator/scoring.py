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


def _sinusoid_row(key: tuple) -> tuple:
    """A sinusoid row key without its signal type: (family, q, amplitude, frequency, phase, t)."""
    return (key[0], key[1], *key[3:])


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
    # Sinusoid answers by (family, question_id, amplitude_scale, frequency_cycles, phase_deg, time_step).
    answers = {_sinusoid_row(p.key): answer_value(p) for p in predictions if p.key[2] == SINUSOID}
    families = [f for f in lay.families if any(k[0] == f for k in answers)]
    touched = {k[:-1] for k in answers}
    if preset:
        in_scope, preset_name = preset_sweeps(preset, families), preset.upper()
    else:
        in_scope, preset_name = touched, detect_preset(touched, families)

    # Plain Python columns: per-row lookups are much faster than on Arrow-backed pandas.
    ref = reference.select([*lay.key, "ground_truth"]).to_pydict()
    keys = zip(*(ref[c] for c in (*SWEEP_KEY, "time_step")), strict=True)
    rows = [
        (key, truth)
        for key, kind, truth in zip(keys, ref["signal_type"], ref["ground_truth"], strict=True)
        if kind == SINUSOID and key[:-1] in in_scope
    ]
    # Canonical sweep order (families in layout order), each sweep's steps in time order.
    rank = {f: n for n, f in enumerate(lay.families)}
    rows.sort(key=lambda row: (rank[row[0][0]], *row[0][1:]))
    y = np.array([answers.get(key, math.nan) for key, _ in rows], dtype=float)
    truth = np.array([t for _, t in rows], dtype=float)
    n_sweeps = len(rows) // T
    sweep_keys = pd.DataFrame([key[:-1] for key, _ in rows[::T]], columns=SWEEP_KEY)
    metrics = [
        sweep_metrics(
            truth[i * T : (i + 1) * T], y[i * T : (i + 1) * T], float(sweep_keys.at[i, "frequency_cycles"]), T
        )
        for i in range(n_sweeps)
    ]
    sweeps = pd.concat([sweep_keys, pd.DataFrame(metrics, columns=list(SWEEP_METRICS))], axis=1)
    summary = frequency_summary(sweeps)
    fam = family_scores(summary, config)
    return Scored(
        label=label,
        model=model,
        preset=preset_name,
        sweeps=sweeps,
        summary=summary,
        families=fam,
        overall=overall(fam),
        extra={"num_sweeps": n_sweeps, "num_answers": int(np.isfinite(y).sum())},
    )
