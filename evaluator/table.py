"""The scorer's tables (sweeps, frequency summary, chirp, step, leaderboard): named numpy columns.

The scoring path needs a few table operations (select rows, group by keys, join on keys, write
CSV); pandas gives them at the cost of its import, about 0.4 s, more than scoring a file takes
otherwise. A `Table` is an ordered mapping of equal-length numpy arrays: numbers as float64 or
int64, anything else (names, None) as object arrays. Means skip NaN, as pandas' do, and a CSV is
written as `DataFrame.to_csv(index=False)` writes it (shortest round-trip floats, NaN and None
as empty fields), so the report's files read the same.
"""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, overload

import numpy as np


def column(values: Iterable[Any] | np.ndarray) -> np.ndarray:
    """A column from values: float64 or int64 when every value is a number (bools as numbers
    too), an object array otherwise (names, None, mixed)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiubO":
        return values if values.dtype.kind != "b" else values.astype(np.int64)
    items = list(values)
    if items and all(type(v) in (int, np.int64) for v in items):
        return np.array(items, dtype=np.int64)
    if items and all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in items):
        return np.array(items, dtype=float)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def nanmean(values: np.ndarray | Sequence[float]) -> float:
    """The mean of the values that are not NaN; NaN when there are none (and no warning)."""
    array = np.asarray(values, dtype=float)
    if not array.size:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(array))


def compensated_means(values: np.ndarray) -> np.ndarray:
    """Column means of a (rows x columns) array, NaN skipped, each sum Kahan-compensated as
    pandas' grouped mean sums: the frequency means (and so the scores) are the same floats as
    the paper authors' code computes with pandas, bit for bit.

    Summed in Python floats, column by column: the same IEEE operations in the same order as
    numpy's (a test compares the two on random arrays), without numpy's cost per call on rows of
    a few values (a third of the time of the frequency and chirp means)."""
    means = []
    for column in np.asarray(values, dtype=np.float64).T.tolist():
        total = compensation = 0.0
        count = 0
        for x in column:
            if x != x:  # NaN: skipped
                continue
            y = x - compensation
            t = total + y
            c = (t - total) - y
            compensation = 0.0 if c != c else c  # an infinite sum: no compensation, as pandas
            total = t
            count += 1
        means.append(total / count if count else math.nan)
    return np.array(means, dtype=np.float64)


#: What a spreadsheet reads as the start of a formula in a cell (`=HYPERLINK(...)`, `+1`, `-1+1`,
#: `@SUM(...)`, and a tab or carriage return before one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell_text(value: Any) -> Any:
    """A CSV cell as spreadsheet exports write it: text that starts like a formula gets a leading
    `'`, so a spreadsheet shows it as text instead of running it (a model named
    `=HYPERLINK("http://x")`); numbers, negative ones too, are written as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class Table:
    """Named columns of one length, in order."""

    def __init__(self, columns: Mapping[str, Iterable[Any] | np.ndarray] | None = None, length: int = 0) -> None:
        self._data: dict[str, np.ndarray] = {name: column(values) for name, values in (columns or {}).items()}
        lengths = {len(v) for v in self._data.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._length = lengths.pop() if lengths else length

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> "Table":
        """Rows (mappings) as a table; `columns` in order (default: every key, as first seen);
        a key a row lacks is None there."""
        names = list(columns) if columns is not None else list(dict.fromkeys(k for row in rows for k in row))
        return cls({name: [row.get(name) for row in rows] for name in names}, length=len(rows))

    @property
    def columns(self) -> list[str]:
        return list(self._data)

    def __len__(self) -> int:
        return self._length

    def __contains__(self, name: object) -> bool:
        return name in self._data

    @property
    def empty(self) -> bool:
        return self._length == 0

    @overload
    def __getitem__(self, key: str) -> np.ndarray: ...

    @overload
    def __getitem__(self, key: np.ndarray | list[str]) -> "Table": ...

    def __getitem__(self, key: str | np.ndarray | list[str]) -> np.ndarray | "Table":
        """A column by name; a table of the rows where a boolean mask holds (or at integer
        positions); a table of the named columns."""
        if isinstance(key, str):
            return self._data[key]
        if isinstance(key, list):
            return Table({name: self._data[name] for name in key}, length=self._length)
        return self.take(key)

    def __setitem__(self, name: str, values: Iterable[Any] | np.ndarray) -> None:
        array = column(values)
        if len(array) != self._length and self._data:
            raise ValueError(f"column {name!r} has {len(array)} values for {self._length} rows")
        if not self._data:
            self._length = len(array)
        self._data[name] = array

    def take(self, where: np.ndarray | Sequence[int]) -> "Table":
        """The rows at integer positions, or where a boolean mask holds."""
        where = np.asarray(where)
        if where.dtype != bool:
            where = where.astype(np.int64)
        length = int(where.sum()) if where.dtype == bool else len(where)
        return Table({name: values[where] for name, values in self._data.items()}, length=length)

    def copy(self) -> "Table":
        return Table({name: values.copy() for name, values in self._data.items()}, length=self._length)

    def rows(self) -> list[dict[str, Any]]:
        """Each row as a dict of Python values (numbers as int or float)."""
        lists = {name: values.tolist() for name, values in self._data.items()}
        return [{name: lists[name][i] for name in lists} for i in range(self._length)]

    def keys(self, names: Sequence[str]) -> list[tuple[Any, ...]]:
        """Each row's values of `names`, as a tuple."""
        return list(zip(*(self._data[n].tolist() for n in names), strict=True)) if self._length else []

    def groups(self, names: Sequence[str]) -> list[tuple[tuple[Any, ...], np.ndarray]]:
        """(key, row positions) per distinct key of `names`, keys in order of first appearance."""
        found: dict[tuple[Any, ...], list[int]] = {}
        for i, key in enumerate(self.keys(names)):
            found.setdefault(key, []).append(i)
        return [(key, np.asarray(where, dtype=np.int64)) for key, where in found.items()]

    def numbers(self, names: Sequence[str]) -> np.ndarray:
        """The named columns as one float array (rows x names); a column the table lacks is NaN."""
        out = np.full((self._length, len(names)), np.nan)
        for j, name in enumerate(names):
            if name in self._data:
                out[:, j] = self._data[name]
        return out

    def join(self, other: "Table", on: Sequence[str]) -> "Table":
        """Every row of this table with the other's columns for its key (NaN where the other has
        no row for it); the other must have one row per key."""
        position = {key: i for i, key in enumerate(other.keys(on))}
        if len(position) != len(other):
            raise ValueError("join: the other table has a key twice")
        where = np.array([position.get(key, -1) for key in self.keys(on)], dtype=np.int64)
        out = Table(dict(self._data), length=self._length)
        for name in other.columns:
            if name in on:
                continue
            values = other[name].astype(float) if other[name].dtype.kind in "if" else other[name]
            picked = np.full(self._length, np.nan) if values.dtype.kind == "f" else np.full(self._length, None)
            picked[where >= 0] = values[where[where >= 0]]
            out[name] = picked
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def to_csv(self, path: str | Path) -> None:
        """Write as `DataFrame.to_csv(index=False)` does: a header, then each row; NaN and None
        empty; a text cell a spreadsheet would run as a formula neutralized (`cell_text`)."""
        lists = [values.tolist() for values in self._data.values()]
        with open(path, "w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow([cell_text(c) for c in self.columns])
            for row in zip(*lists, strict=True) if lists else ():
                # Only a text can read as a formula: numbers are written without a call each.
                writer.writerow(
                    [
                        "" if v is None or (type(v) is float and v != v) else cell_text(v) if isinstance(v, str) else v
                        for v in row
                    ]
                )

    def __repr__(self) -> str:
        return f"Table({self._length} rows: {', '.join(self.columns)})"
