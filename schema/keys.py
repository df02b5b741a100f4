"""Row keys: how a prediction line or a dataset row names one row of the canonical split.

A key is (family, question_id, signal_type, amplitude_scale, frequency_cycles, phase_deg,
time_step). Chirp and step rows are identified without frequency and phase (a chirp's
frequency is a per-step value, a step has none), so those two slots are None in their keys.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from typing import Any, Mapping

from .layout import SINUSOID, layout

Key = tuple[str, int, str, float, float | None, float | None, int]
SweepKey = tuple[str, int, str, float, float | None, float | None]


def row_key(row: Mapping[str, Any]) -> Key:
    """The normalized key of a row or prediction that passed its schema."""
    sinusoid = row["signal_type"] == SINUSOID
    return (
        row["family"],
        int(row["question_id"]),
        row["signal_type"],
        float(row["amplitude_scale"]),
        float(row["frequency_cycles"]) if sinusoid else None,
        float(row["phase_deg"]) if sinusoid else None,
        int(row["time_step"]),
    )


def format_key(key: Key | SweepKey) -> str:
    names = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")
    return (
        "("
        + ", ".join(
            f"{n}={v:g}" if isinstance(v, float) else f"{n}={v}"
            for n, v in zip(names, key, strict=False)
            if v is not None
        )
        + ")"
    )


@cache
def canonical_sweeps(family: str) -> tuple[SweepKey, ...]:
    """Every sweep of one family, in dataset order."""
    lay = layout()
    return tuple(
        (family, q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg)
        for q in lay.question_ids
        for s in lay.sweeps()
    )


@cache
def canonical_keys() -> frozenset[Key]:
    """Every row key of the canonical split (all families)."""
    lay = layout()
    return frozenset(
        sweep + (t,) for fam in lay.families for sweep in canonical_sweeps(fam) for t in range(lay.time_steps)
    )


@cache
def preset_keys(preset: str) -> frozenset[Key]:
    """The row keys a preset asks for, over all families."""
    lay = layout()
    return frozenset(
        (fam, q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg, t)
        for fam in lay.families
        for q, s in lay.preset_sweeps(preset)
        for t in range(lay.time_steps)
    )


@cache
def _preset_rows_per_family(preset: str) -> dict[str, int]:
    return dict(Counter(k[0] for k in preset_keys(preset)))


def coverage(keys: set[Key]) -> dict[str, Any]:
    """Rows covered per family and per preset, and the presets covered completely."""
    lay = layout()
    per_family: dict[str, int] = defaultdict(int)
    for key in keys:
        per_family[key[0]] += 1
    families = {fam: {"rows": per_family.get(fam, 0), "of": lay.rows_per_family} for fam in lay.families}
    presets = {}
    for name in lay.presets:
        wanted = preset_keys(name)
        have = Counter(k[0] for k in wanted & keys)
        need = _preset_rows_per_family(name)
        presets[name] = {
            "rows": sum(have.values()),
            "of": len(wanted),
            "families_complete": [fam for fam in lay.families if have.get(fam, 0) == need[fam]],
        }
    complete = [name for name, p in presets.items() if p["rows"] == p["of"]]
    return {"families": families, "presets": presets, "presets_complete": complete}
