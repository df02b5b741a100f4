"""Row and sweep keys: how a prediction line or a dataset row names one row of the canonical split.

Chirp and step rows are identified without frequency and phase (a chirp's frequency is a
per-step value, a step has none), so those two fields are None in their keys.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from typing import Any, Mapping, NamedTuple

from .layout import SINUSOID, layout


class SweepKey(NamedTuple):
    """One driven sequence of a family: every field of a row key but the time step."""

    family: str
    question_id: int
    signal_type: str
    amplitude_scale: float
    #: Cycles per T steps for a sinusoid; None for chirp and step.
    frequency_cycles: float | None
    #: Start phase in degrees for a sinusoid; None for chirp and step.
    phase_deg: float | None

    def row(self, time_step: int) -> "RowKey":
        return RowKey(*self, time_step)


class RowKey(NamedTuple):
    """One row of the canonical split (a NamedTuple: tens of thousands are made per file)."""

    family: str
    question_id: int
    signal_type: str
    amplitude_scale: float
    #: Cycles per T steps for a sinusoid; None for chirp and step.
    frequency_cycles: float | None
    #: Start phase in degrees for a sinusoid; None for chirp and step.
    phase_deg: float | None
    time_step: int

    @property
    def sweep(self) -> SweepKey:
        return SweepKey(*self[:-1])


def row_key(row: Mapping[str, Any]) -> RowKey:
    """The normalized key of a row or prediction that passed its schema."""
    sinusoid = row["signal_type"] == SINUSOID
    return RowKey(
        row["family"],
        int(row["question_id"]),
        row["signal_type"],
        float(row["amplitude_scale"]),
        float(row["frequency_cycles"]) if sinusoid else None,
        float(row["phase_deg"]) if sinusoid else None,
        int(row["time_step"]),
    )


def row_keys(columns: Mapping[str, list[Any]]) -> list[RowKey]:
    """`row_key` of every row, from the key columns of rows that passed their schema (column-wise)."""
    sinusoid = [signal == SINUSOID for signal in columns["signal_type"]]
    return list(
        map(
            RowKey._make,
            zip(
                columns["family"],
                map(int, columns["question_id"]),
                columns["signal_type"],
                map(float, columns["amplitude_scale"]),
                [float(f) if s else None for f, s in zip(columns["frequency_cycles"], sinusoid, strict=True)],
                [float(p) if s else None for p, s in zip(columns["phase_deg"], sinusoid, strict=True)],
                map(int, columns["time_step"]),
                strict=True,
            ),
        )
    )


def format_key(key: RowKey | SweepKey) -> str:
    """'(family=linear_solve, question_id=0, ...)' with the None fields left out."""
    return (
        "("
        + ", ".join(
            f"{n}={v:g}" if isinstance(v, float) else f"{n}={v}"
            for n, v in zip(key._fields, key, strict=True)
            if v is not None
        )
        + ")"
    )


@cache
def canonical_sweeps(family: str) -> tuple[SweepKey, ...]:
    """Every sweep of one family, in dataset order."""
    lay = layout()
    return tuple(
        SweepKey(family, q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg)
        for q in lay.question_ids
        for s in lay.sweeps()
    )


@cache
def canonical_row_order() -> tuple[RowKey, ...]:
    """Every row key in published order: families in layout order, each family's rows as its file holds them.

    A row's position here is the `row_id` the paper authors' evaluation code gives it (it
    concatenates the five families in this order), so this order is a promise (README).
    """
    lay = layout()
    return tuple(sweep.row(t) for fam in lay.families for sweep in canonical_sweeps(fam) for t in range(lay.time_steps))


@cache
def canonical_family_keys(family: str) -> frozenset[RowKey]:
    """Every row key of one family."""
    steps = range(layout().time_steps)
    return frozenset(sweep.row(t) for sweep in canonical_sweeps(family) for t in steps)


@cache
def canonical_sweep_set() -> frozenset[SweepKey]:
    """Every sweep of the canonical split (all families)."""
    return frozenset(s for fam in layout().families for s in canonical_sweeps(fam))


@cache
def canonical_keys() -> frozenset[RowKey]:
    """Every row key of the canonical split (all families)."""
    return frozenset(canonical_row_order())


@cache
def preset_sweep_keys(preset: str) -> frozenset[SweepKey]:
    """The sweeps a preset asks for, over every family of the layout."""
    lay = layout()
    return frozenset(
        SweepKey(fam, q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg)
        for fam in lay.families
        for q, s in lay.preset_grid(preset)
    )


@cache
def preset_keys(preset: str) -> frozenset[RowKey]:
    """The row keys a preset asks for, over all families."""
    steps = range(layout().time_steps)
    return frozenset(sweep.row(t) for sweep in preset_sweep_keys(preset) for t in steps)


@cache
def _preset_rows_per_family(preset: str) -> dict[str, int]:
    steps = layout().time_steps
    return {family: n * steps for family, n in Counter(s.family for s in preset_sweep_keys(preset)).items()}


def coverage(keys: set[RowKey]) -> dict[str, Any]:
    """Rows covered per family and per preset, and the presets covered completely.

    Counted per sweep (a preset is a set of whole sweeps), so no preset's row keys are built.
    `keys` are distinct keys of the split.
    """
    lay = layout()
    per_family: dict[str, int] = defaultdict(int)
    per_sweep = Counter(key[:-1] for key in keys)
    for sweep, n in per_sweep.items():
        per_family[sweep[0]] += n
    families = {fam: {"rows": per_family.get(fam, 0), "of": lay.rows_per_family} for fam in lay.families}
    presets = {}
    for name in [*lay.presets, *lay.transient_presets]:
        wanted = preset_sweep_keys(name)
        have: Counter[str] = Counter()
        for sweep in wanted:
            have[sweep.family] += per_sweep.get(sweep, 0)
        need = _preset_rows_per_family(name)
        presets[name] = {
            "rows": sum(have.values()),
            "of": len(wanted) * lay.time_steps,
            "families_complete": [fam for fam in lay.families if have.get(fam, 0) == need[fam]],
        }
    complete = [name for name, p in presets.items() if p["rows"] == p["of"]]
    return {"families": families, "presets": presets, "presets_complete": complete}
