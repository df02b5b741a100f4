"""Is a release the canonical MathBode, and is every row true?

A family whose rows hash to the canonical content hash (`release_hashes`) is proved canonical:
no edit can keep that hash. For any other family, its rows are compared with the truth, the
family's rows recomputed from its definition by the builder (given as `truth`, since this room
does not import the builder), and each wrong row is named: file order first (a row holding
another row's key), then `p_value` (the drive's value at the key), `prompt` (the rendering of
that value) and `ground_truth` (the exact answer at that value).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .keys import format_key, row_key
from .layout import layout
from .release_hashes import RELEASE_CONTENT_HASHES, release_content_hash
from .report import Report

#: family -> its canonical rows, recomputed from the family's definition.
TruthRows = Callable[[str], pa.Table]
#: The columns a row's truth is made of, in the order a reader should hear about them.
CONTENT_COLUMNS = ("p_value", "prompt", "ground_truth")


def _differing(a: pa.ChunkedArray, b: pa.ChunkedArray) -> np.ndarray:
    """Row positions where two equally long columns differ (a null equals only a null)."""
    unequal = pc.fill_null(pc.not_equal(a, b), False)
    one_null = pc.xor(pc.is_null(a), pc.is_null(b))
    return np.flatnonzero(pc.or_(unequal, one_null).to_numpy(zero_copy_only=False))


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def compare_rows(table: pa.Table, truth: pa.Table, report: Report, where: str) -> None:
    """Name every row of `table` that differs from the family's true rows (same length, same columns)."""
    lay = layout()
    key_rows = sorted({int(i) for column in lay.key for i in _differing(table[column], truth[column])})
    for i in key_rows:
        report.error(
            "row-order",
            f"{where} row {i}",
            "",
            "the rows in canonical order",
            f"{format_key(row_key(table.slice(i, 1).to_pylist()[0]))}, where the canonical row is "
            f"{format_key(row_key(truth.slice(i, 1).to_pylist()[0]))}",
        )
    wrong_keys = set(key_rows)
    for column in CONTENT_COLUMNS:
        for i in map(int, _differing(table[column], truth[column])):
            if i in wrong_keys:
                continue
            row = table.slice(i, 1).to_pylist()[0]
            report.error(
                "content",
                f"{where} row {i} {format_key(row_key(row))}",
                column,
                f"the {column} recomputed from the family's definition",
                f"{_shown(row[column])}, where the true value is {_shown(truth[column][i].as_py())}",
            )


def check_content(
    tables: dict[str, tuple[str, pa.Table]], hashes: dict[str, str], report: Report, truth: TruthRows | None
) -> bool:
    """Check each family's rows (family -> (file, table)) against the canonical content.

    True when every family is canonical."""
    canonical = True
    for family, (where, table) in tables.items():
        if hashes[family] == RELEASE_CONTENT_HASHES.get(family):
            continue
        canonical = False
        if table.num_rows != layout().rows_per_family:
            continue  # the row count error already says what is wrong
        if truth is None:
            report.error(
                "content",
                where,
                "",
                f"the canonical rows of {family} (content {RELEASE_CONTENT_HASHES.get(family)})",
                f"rows with content {hashes[family]} (mathbode-validate names the rows that differ)",
            )
            continue
        true_rows = truth(family)
        before = report.num_errors
        compare_rows(table.select(true_rows.column_names), true_rows, report, where)
        if report.num_errors == before:  # same values, other bytes (e.g. types): still not canonical
            report.error("content", where, "", f"content {RELEASE_CONTENT_HASHES.get(family)}", hashes[family])
    return canonical and len(tables) > 0


def verdict(canonical: bool, hashes: dict[str, str], valid: bool = True) -> str:
    """The one line a leaderboard keeper reads: canonical release or not."""
    everything = list(layout().families)
    if canonical and not valid:
        return "NOT a canonical release: its rows are the canonical content, but the release fails the checks above"
    if canonical and list(hashes) == everything:
        return f"canonical release: MathBode, content {release_content_hash()}"
    if canonical:
        names = ", ".join(hashes)
        return f"canonical rows of {names} (not the whole release: {len(hashes)} of {len(everything)} families)"
    return "NOT a canonical release: its rows differ from the canonical MathBode content"
