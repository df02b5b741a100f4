"""Row and sweep keys: how a prediction line or a dataset row names one row of a release's split.

Row ids count the families of a `Universe` (see `universe`: the canonical five by default, always
first, so their ids never change).

Chirp and step rows are identified without frequency and phase (a chirp's frequency is a
per-step value, a step has none), so those two fields are None in their keys.
"""

from __future__ import annotations

from collections import Counter
from functools import cache, lru_cache
from typing import Any, Mapping, NamedTuple

import numpy as np
import pyarrow as pa

from mathbode.core.arrow_compute import as_float64, positions_in

from .drives import STANDARD, MultitoneDesign
from .layout import KEYED_SIGNALS, layout
from .universe import Universe, universe_of


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
    sinusoid = row["signal_type"] in KEYED_SIGNALS
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
    sinusoid = [signal in KEYED_SIGNALS for signal in columns["signal_type"]]
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
def canonical_sweeps(
    family: str, drives: str = STANDARD, questions: int | None = None, design: MultitoneDesign | None = None
) -> tuple[SweepKey, ...]:
    """Every sweep of one family, in dataset order (of the grid of `drives`, with `questions`
    problems: None, the layout's; `design`: a multi-tone design, None the layout's)."""
    lay = layout(drives, questions, design)
    return tuple(
        SweepKey(family, q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg)
        for q in lay.question_ids
        for s in lay.sweeps()
    )


@lru_cache(maxsize=8)
def _row_order(universe: Universe) -> tuple[RowKey, ...]:
    steps = range(layout().time_steps)
    return tuple(sweep.row(t) for sweep in _sweep_order(universe) for t in steps)


def canonical_row_order(universe: Universe | None = None) -> tuple[RowKey, ...]:
    """Every row key in published order: families in the universe's slot order (the canonical five
    in layout order first), each family's rows as its file holds them (`canonical_sweep_order`,
    each sweep's steps in time order).

    A row's position here is the `row_id` the paper authors' evaluation code gives it (it
    concatenates the five families in this order), so this order is a promise (docs/authors-code.md).
    A row of a canonical family has that id in every universe (see `universe`).
    """
    return _row_order(universe_of(universe))


@cache
def canonical_family_keys(
    family: str, drives: str = STANDARD, questions: int | None = None, design: MultitoneDesign | None = None
) -> frozenset[RowKey]:
    """Every row key of one family."""
    steps = range(layout().time_steps)
    return frozenset(sweep.row(t) for sweep in canonical_sweeps(family, drives, questions, design) for t in steps)


@lru_cache(maxsize=8)
def _preset_sweeps(preset: str, universe: Universe) -> frozenset[SweepKey]:
    lay = universe.layout
    if not lay.presets:  # a multi-tone release has no presets but ALL
        return frozenset()
    return frozenset(
        SweepKey(fam, q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg)
        for fam in universe.families
        for q, s in lay.preset_grid(preset)
    )


def preset_sweep_keys(preset: str, universe: Universe | None = None) -> frozenset[SweepKey]:
    """The sweeps a preset asks for, over every family of the universe (default: the canonical five)."""
    return _preset_sweeps(preset, universe_of(universe))


@lru_cache(maxsize=8)
def _preset_keys(preset: str, universe: Universe) -> frozenset[RowKey]:
    steps = range(layout().time_steps)
    return frozenset(sweep.row(t) for sweep in _preset_sweeps(preset, universe) for t in steps)


def preset_keys(preset: str, universe: Universe | None = None) -> frozenset[RowKey]:
    """The row keys a preset asks for, over all families of the universe."""
    return _preset_keys(preset, universe_of(universe))


@lru_cache(maxsize=16)
def _preset_rows_per_family(preset: str, universe: Universe) -> dict[str, int]:
    steps = layout().time_steps
    return {family: n * steps for family, n in Counter(s.family for s in _preset_sweeps(preset, universe)).items()}


@lru_cache(maxsize=8)
def _row_position(universe: Universe) -> dict[RowKey, int]:
    members = set(universe.families)
    return {key: i for i, key in enumerate(_row_order(universe)) if key.family in members}


def canonical_row_position(universe: Universe | None = None) -> dict[RowKey, int]:
    """Row key -> its position in `canonical_row_order` (its row_id), for the universe's families."""
    return _row_position(universe_of(universe))


@lru_cache(maxsize=8)
def _sweep_order(universe: Universe) -> tuple[SweepKey, ...]:
    return tuple(
        sweep
        for fam in universe.slots
        for sweep in canonical_sweeps(fam, universe.drives, universe.questions, universe.design)
    )


def canonical_sweep_order(universe: Universe | None = None) -> tuple[SweepKey, ...]:
    """Every sweep in published order: sweep number `s` holds row_ids `s * T` to `s * T + T - 1`."""
    return _sweep_order(universe_of(universe))


def row_key_of(row_id: int, universe: Universe | None = None) -> RowKey:
    """The key of one row_id (without making every key of the split, as `canonical_row_order` does)."""
    sweep, step = divmod(row_id, layout().time_steps)
    return _sweep_order(universe_of(universe))[sweep].row(step)


class _SweepCodes(NamedTuple):
    """The values each sweep field takes (a value's code is its position) and, by the codes of
    (signal, amplitude, frequency, phase), a sweep's number within its question (-1: none).
    Frequency and phase have one code more, "not a sinusoid's" (their values are ignored there)."""

    number: np.ndarray
    signals: tuple[str, ...]
    amplitudes: tuple[float, ...]
    frequencies: tuple[float, ...]
    phases: tuple[float, ...]


@cache
def _sweep_codes(drives: str = STANDARD, design: MultitoneDesign | None = None) -> _SweepCodes:
    lay = layout(drives, None, design)
    amplitudes = tuple(sorted({s.amplitude_scale for s in lay.sweeps()}))
    keyed = [s for s in lay.sweeps() if s.signal_type in KEYED_SIGNALS]
    frequencies = tuple(sorted({s.frequency_cycles for s in keyed if s.frequency_cycles is not None}))
    phases = tuple(sorted({s.phase_deg for s in keyed if s.phase_deg is not None}))
    signals = tuple(dict.fromkeys(s.signal_type for s in lay.sweeps()))
    number = np.full((len(signals), len(amplitudes), len(frequencies) + 1, len(phases) + 1), -1, dtype=np.int64)
    for n, sweep in enumerate(lay.sweeps()):
        sinusoid = sweep.signal_type in KEYED_SIGNALS
        f = frequencies.index(sweep.frequency_cycles) if sinusoid else len(frequencies)
        p = phases.index(sweep.phase_deg) if sinusoid else len(phases)
        number[signals.index(sweep.signal_type), amplitudes.index(sweep.amplitude_scale), f, p] = n
    return _SweepCodes(number, signals, amplitudes, frequencies, phases)


def _code(column: pa.ChunkedArray | pa.Array, values: tuple[Any, ...]) -> np.ndarray:
    """Each value's position in `values` (-1: not there, or null); numbers are compared as floats."""
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        column, values = as_float64(column), tuple(float(v) for v in values)
    return positions_in(column, values)


#: The Arrow types a key field may have for `canonical_row_ids` to read it.
_NUMBER_KINDS = (pa.types.is_integer, pa.types.is_floating)


def canonical_row_ids(
    columns: Mapping[str, pa.ChunkedArray | pa.Array], universe: Universe | None = None
) -> np.ndarray | None:
    """Each row's row_id from its key columns (Arrow), -1 where the key is none of the split's (of the
    universe's families: default, the canonical five);
    None when a column's type is not one a key can have (a string where a number goes, say).

    What `row_key` reads, column-wise: numbers compare by value (1 and 1.0 are one key), and a
    chirp's or step's frequency and phase are not part of its key, whatever they hold.
    """
    universe = universe_of(universe)
    lay = universe.layout
    for name in lay.key:
        kind = columns[name].type
        text = name in ("family", "signal_type")
        nullable = name in ("frequency_cycles", "phase_deg") and pa.types.is_null(kind)
        if not (nullable or (pa.types.is_string(kind) if text else any(is_(kind) for is_ in _NUMBER_KINDS))):
            return None
    codes = _sweep_codes(universe.drives, universe.design)
    family = _code(columns["family"], universe.families)
    if not universe.is_canonical:  # a member's code is its slot (a mixed release's canonical ids stay canonical)
        slots = np.array([universe.slots.index(f) for f in universe.families], dtype=np.int64)
        family = np.where(family >= 0, slots[family], -1)
    question = _code(columns["question_id"], lay.question_ids)
    signal = _code(columns["signal_type"], codes.signals)
    amplitude = _code(columns["amplitude_scale"], codes.amplitudes)
    sinusoid = np.isin(signal, [codes.signals.index(s) for s in KEYED_SIGNALS if s in codes.signals])
    freq = np.where(sinusoid, _code(columns["frequency_cycles"], codes.frequencies), len(codes.frequencies))
    phase = np.where(sinusoid, _code(columns["phase_deg"], codes.phases), len(codes.phases))
    steps = np.asarray(as_float64(columns["time_step"]), dtype=np.float64)
    whole = np.isfinite(steps) & (np.floor(steps) == steps) & (steps >= 0) & (steps < lay.time_steps)
    known = (family >= 0) & (question >= 0) & (signal >= 0) & (amplitude >= 0) & (freq >= 0) & (phase >= 0) & whole
    sweep = np.full(len(family), -1, dtype=np.int64)
    sweep[known] = codes.number[signal[known], amplitude[known], freq[known], phase[known]]
    known &= sweep >= 0
    per_question = len(lay.sweeps())
    ids = ((family * len(lay.question_ids) + question) * per_question + sweep) * lay.time_steps
    ids += np.where(known, steps, 0).astype(np.int64)
    return np.where(known, ids, -1)


def coverage(rows: np.ndarray, universe: Universe | None = None) -> dict[str, Any]:
    """Rows covered per family and per preset, and the presets covered completely.

    `rows`: distinct row_ids of the split (of `universe`, default the canonical one). Counted per
    sweep (a preset is a set of whole sweeps); the universe's families only.
    """
    universe = universe_of(universe)
    lay = universe.layout
    sweeps = _sweep_order(universe)
    per_sweep = np.bincount(np.asarray(rows, dtype=np.int64) // lay.time_steps, minlength=len(sweeps))
    per_slot = dict(zip(universe.slots, per_sweep.reshape(len(universe.slots), -1).sum(axis=1), strict=True))
    families = {fam: {"rows": int(per_slot[fam]), "of": lay.rows_per_family} for fam in universe.families}
    number = _sweep_number(universe)
    presets = {}
    for name in [*lay.presets, *lay.transient_presets]:
        wanted = _preset_sweeps(name, universe)
        have: Counter[str] = Counter()
        for sweep in wanted:
            have[sweep.family] += int(per_sweep[number[sweep]])
        need = _preset_rows_per_family(name, universe)
        presets[name] = {
            "rows": sum(have.values()),
            "of": len(wanted) * lay.time_steps,
            "families_complete": [fam for fam in universe.families if have.get(fam, 0) == need[fam]],
        }
    if not lay.presets:
        # A release without presets (multi-tone) is asked whole: ALL is its one preset, and what
        # "coverage by preset" must say of a complete submission.
        presets["ALL"] = {
            "rows": int(per_sweep.sum()),
            "of": len(universe.families) * lay.rows_per_family,
            "families_complete": [fam for fam in universe.families if per_slot[fam] == lay.rows_per_family],
        }
    complete = [name for name, p in presets.items() if p["rows"] == p["of"]]
    return {"families": families, "presets": presets, "presets_complete": complete}


@lru_cache(maxsize=8)
def _sweep_number(universe: Universe) -> dict[SweepKey, int]:
    return {sweep: n for n, sweep in enumerate(_sweep_order(universe))}
