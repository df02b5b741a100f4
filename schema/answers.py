"""A submission's valid lines as columns: what the scorer reads.

A clean file reaches here straight from Arrow's columns (no object per line); lines read one by
one (files with problems, a framework's answers) are turned into the same columns. A row is named
by its row_id, its position in the canonical order (`keys.canonical_row_order`) of the
submission's family universe (`universe`: the canonical five unless read against another release).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

import numpy as np

from mathbode.core.errors import ReferenceMismatchError

from .keys import RowKey, canonical_row_position, row_key_of
from .universe import Universe, canonical_universe, universe_of


class Prediction(NamedTuple):
    """One valid line of a submission, as an object (see `Answers.predictions`)."""

    #: The normalized row key (see `keys.row_key`).
    key: RowKey
    #: 1-based line number in the file.
    line: int
    #: The raw model text, when the line gave `response`.
    response: str | None
    #: The number, when the line gave `prediction` (None = no answer).
    prediction: float | None
    #: Whether the line gave `response` (parse it) or `prediction` (use it).
    has_response: bool


@dataclass(frozen=True, eq=False)
class Answers:
    """The valid lines of a submission, in file order, one entry per line in each column."""

    #: The row each line answers: its row_id.
    row: np.ndarray
    #: 1-based line number in the file.
    line: np.ndarray
    #: The raw model text; None where the line gave `prediction`.
    response: list[str | None]
    #: The number a line gave as `prediction`; NaN where it gave null or a response.
    prediction: np.ndarray
    #: Whether the line gave `response` (parse it) or `prediction` (use it).
    has_response: np.ndarray
    #: The family universe the row ids count in.
    universe: Universe = field(default_factory=canonical_universe)

    def __len__(self) -> int:
        return len(self.row)

    @classmethod
    def of(cls, predictions: Iterable[Prediction], universe: Universe | None = None) -> Answers:
        """The columns of lines given one by one (their keys of `universe`'s families)."""
        lines = list(predictions)
        universe = universe_of(universe)
        position = canonical_row_position(universe) if lines else {}
        missing = next((p.key.family for p in lines if p.key not in position), None)
        if missing is not None:
            raise ReferenceMismatchError(universe.unknown_family_message(missing))
        return cls(
            row=np.fromiter((position[p.key] for p in lines), np.int64, len(lines)),
            line=np.fromiter((p.line for p in lines), np.int64, len(lines)),
            response=[p.response for p in lines],
            prediction=np.array([np.nan if p.prediction is None else p.prediction for p in lines], dtype=np.float64),
            has_response=np.fromiter((p.has_response for p in lines), bool, len(lines)),
            universe=universe,
        )

    @classmethod
    def concat(cls, parts: list[Answers]) -> Answers:
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls.of([])
        return cls(
            row=np.concatenate([p.row for p in parts]),
            line=np.concatenate([p.line for p in parts]),
            response=[text for p in parts for text in p.response],
            prediction=np.concatenate([p.prediction for p in parts]),
            has_response=np.concatenate([p.has_response for p in parts]),
            universe=parts[0].universe,
        )

    def in_universe(self, universe: Universe) -> Answers:
        """The same lines, their row ids counted in `universe` (a family it lacks is an error)."""
        if universe.slots == self.universe.slots:
            return self
        return Answers.of(self.predictions(), universe)

    def at(self, i: int) -> Prediction:
        """Line `i` (0-based, in this order) as an object."""
        number = float(self.prediction[i])
        return Prediction(
            row_key_of(int(self.row[i]), self.universe),
            int(self.line[i]),
            self.response[i],
            None if number != number else number,
            bool(self.has_response[i]),
        )

    def predictions(self) -> list[Prediction]:
        """Every line as an object (for a reader that wants them; the scorer reads the columns)."""
        return [self.at(i) for i in range(len(self))]
