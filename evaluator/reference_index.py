"""The reference's rows arranged once for scoring, shared by every submission scored against it.

Scoring ten submissions in one call reads the canonical rows, keys them and truncates their
truth once: each submission then costs its own answers only (a dictionary lookup per line
and array gathers), not a rebuild of 47,040 keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mathbode.schema.keys import RowKey, SweepKey, row_keys
from mathbode.schema.layout import SINUSOID, layout
from mathbode.schema.parsing import truncate_array
from mathbode.schema.reference import Reference


@dataclass(frozen=True)
class ReferenceIndex:
    """Every row of a reference: its key, its truth, and where each sweep's steps are."""

    #: Row keys in the reference's order.
    keys: list[RowKey]
    #: Row key -> position.
    position: dict[RowKey, int]
    #: Ground truth per row, then NaN at position `len(keys)`, where a step the reference lacks points.
    truth: np.ndarray
    #: Sweep key -> the positions of its steps, in time order (`len(keys)` where the reference lacks one).
    steps: dict[SweepKey, np.ndarray]
    #: Sinusoid sweeps in canonical order (families in layout order, then key order).
    sinusoid_sweeps: list[SweepKey]
    #: Chirp and step sweeps, in the same order.
    transient_sweeps: list[SweepKey]
    #: Per row, the number of its prompt among the reference's distinct prompts (rows with one
    #: prompt ask one question: repeats of it measure repeatability).
    prompt_id: np.ndarray
    #: Per row, its family's position in the layout's list.
    family_code: np.ndarray

    def positions(self, keys: list[RowKey]) -> np.ndarray:
        """Each key's position; `len(self.keys) + 1` for a key the reference does not hold."""
        get, missing = self.position.get, len(self.keys) + 1
        return np.fromiter((get(key, missing) for key in keys), np.int64, len(keys))

    def answer_array(self, keys: list[RowKey], values: list[float], where: np.ndarray | None = None) -> np.ndarray:
        """Answers over the reference's positions, NaN where none (and at `len(keys)`); answers to
        keys the reference does not hold are dropped. `where`: the keys' `positions`, if known."""
        n = len(self.keys)
        out = np.full(n + 2, np.nan)
        out[self.positions(keys) if where is None else where] = values
        return out[: n + 1]

    @cached_property
    def exact(self) -> np.ndarray:
        """The truth truncated to six decimals: the answer that counts as exactly right."""
        return truncate_array(self.truth)


_CACHE: dict[int, tuple[Reference, ReferenceIndex]] = {}


def reference_index(reference: Reference) -> ReferenceIndex:
    """The index of `reference`, built once per reference object."""
    hit = _CACHE.get(id(reference))
    if hit is not None and hit[0] is reference:
        return hit[1]
    index = _build(reference)
    _CACHE.clear()  # one reference at a time is what a command uses; do not keep old tables alive
    _CACHE[id(reference)] = (reference, index)
    return index


def _build(reference: Reference) -> ReferenceIndex:
    lay = layout()
    T = lay.time_steps
    table = reference.table
    keys = row_keys({name: table.column(name).to_pylist() for name in lay.key})
    truth = np.append(np.asarray(table.column("ground_truth").to_numpy(zero_copy_only=False), dtype=float), np.nan)
    position = dict(zip(keys, range(len(keys)), strict=True))
    # Each row's sweep (its key less the step) numbered once; the steps then land in one array.
    numbering: dict[tuple[object, ...], int] = {}
    sweep_of = np.fromiter((numbering.setdefault(key[:-1], len(numbering)) for key in keys), np.int64, len(keys))
    grid = np.full((len(numbering), T), len(keys), dtype=np.int64)
    grid[sweep_of, np.asarray(table.column("time_step").to_numpy(), dtype=np.int64)] = np.arange(len(keys))
    steps: dict[SweepKey, np.ndarray] = {SweepKey._make(sweep): grid[j] for sweep, j in numbering.items()}
    rank = {family: n for n, family in enumerate(lay.families)}
    ordered = sorted(steps, key=lambda s: (rank[s.family], s[1:4], s[4] or 0.0, s[5] or 0.0))
    return ReferenceIndex(
        keys=keys,
        position=position,
        truth=truth,
        steps=steps,
        sinusoid_sweeps=[s for s in ordered if s.signal_type == SINUSOID],
        transient_sweeps=[s for s in ordered if s.signal_type != SINUSOID],
        prompt_id=np.asarray(table.column("prompt").combine_chunks().dictionary_encode().indices, dtype=np.int64),
        family_code=np.asarray(pc.index_in(table.column("family"), value_set=pa.array(lay.families)), dtype=np.int64),
    )
