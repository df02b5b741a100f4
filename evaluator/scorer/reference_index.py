"""The reference's rows arranged once for scoring, shared by every submission scored against it.

Scoring ten submissions in one call reads the canonical rows, numbers them and truncates their
truth once: each submission then costs its own answers only (array gathers by row_id).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mathbode.core.arrow_compute import dictionary_codes, positions_in
from mathbode.core.errors import MathBodeError
from mathbode.schema.drives import MULTITONE_SIGNALS
from mathbode.schema.keys import SweepKey, canonical_row_ids, canonical_sweep_order
from mathbode.schema.layout import CHIRP, SINUSOID, STEP, layout
from mathbode.schema.parsing import truncate_array
from mathbode.schema.reference import Reference


@dataclass(frozen=True)
class ReferenceIndex:
    """Every row of a reference: its row_id, its truth, and where each sweep's steps are."""

    #: Each row's row_id (position in the canonical order), in the reference's order.
    rows: np.ndarray
    #: Per row_id, its position in the reference; `size + 1` for a row the reference does not hold.
    position_of_row: np.ndarray
    #: Ground truth per row, then NaN at position `size`, where a step the reference lacks points.
    truth: np.ndarray
    #: Sweep key -> the positions of its steps, in time order (`size` where the reference lacks one).
    steps: dict[SweepKey, np.ndarray]
    #: Sinusoid sweeps in canonical order (families in the universe's order, then key order).
    sinusoid_sweeps: list[SweepKey]
    #: Chirp and step sweeps, in the same order.
    transient_sweeps: list[SweepKey]
    #: Multi-tone sweeps (multisine, two-tone), in the same order.
    multitone_sweeps: list[SweepKey]
    #: Per row, the number of its prompt among the reference's distinct prompts (rows with one
    #: prompt ask one question: repeats of it measure repeatability).
    prompt_id: np.ndarray
    #: Per row, its family's position in the universe's slots (the layout's five first).
    family_code: np.ndarray

    @property
    def size(self) -> int:
        """The number of rows."""
        return len(self.rows)

    def answer_array(self, values: np.ndarray, where: np.ndarray) -> np.ndarray:
        """Answers over the reference's positions (`where`: each answer's, from `position_of_row`),
        NaN where none (and at `size`); answers to rows the reference does not hold are dropped."""
        out = np.full(self.size + 2, np.nan)
        out[where] = values
        return out[: self.size + 1]

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
    universe = reference.universe
    rows = canonical_row_ids({name: table.column(name) for name in lay.key}, universe)
    if rows is None or (rows < 0).any():
        raise MathBodeError(f"{reference.source}: a reference row has a key outside the release's split.")
    n = len(rows)
    order = canonical_sweep_order(universe)
    position_of_row = np.full(len(order) * T, n + 1, dtype=np.int64)
    position_of_row[rows] = np.arange(n)
    truth = np.append(np.asarray(table.column("ground_truth").to_numpy(), dtype=float), np.nan)
    # Each sweep's steps in one grid row (sweep number = row_id // T, step = row_id % T).
    grid = np.full((len(order), T), n, dtype=np.int64)
    grid[rows // T, rows % T] = np.arange(n)
    steps: dict[SweepKey, np.ndarray] = {order[s]: grid[s] for s in np.flatnonzero(np.bincount(rows // T)).tolist()}
    rank = {family: n for n, family in enumerate(universe.slots)}
    ordered = sorted(steps, key=lambda s: (rank[s.family], s[1:4], s[4] or 0.0, s[5] or 0.0))
    return ReferenceIndex(
        rows=rows,
        position_of_row=position_of_row,
        truth=truth,
        steps=steps,
        sinusoid_sweeps=[s for s in ordered if s.signal_type == SINUSOID],
        transient_sweeps=[s for s in ordered if s.signal_type in (CHIRP, STEP)],
        multitone_sweeps=[s for s in ordered if s.signal_type in MULTITONE_SIGNALS],
        prompt_id=dictionary_codes(table.column("prompt"))[0],
        family_code=positions_in(table.column("family"), tuple(universe.slots)),
    )
