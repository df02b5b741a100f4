"""Predictions as the paper authors' evaluation code (MathBode-Eval) writes them: a parquet keyed by `row_id`.

`row_id` is a row's position in the five families concatenated in the canonical order
(`keys.canonical_row_order`). The answer is taken from the first column present of:
`y_hat` (the number that code parsed, NaN = no answer), `prediction` (a number), `raw_text` or
`response` (text, parsed like a JSONL `response`). Columns that repeat key fields (`family`,
`question_id`, `time_step`, ...) are checked against the row the `row_id` names, so a file made
against another ordering is refused instead of scored against the wrong rows.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .answers import Answers
from .keys import format_key, row_key_of
from .layout import layout
from .parquet import read_parquet
from .report import Report
from .universe import Universe, universe_of

PARQUET_MAGIC = b"PAR1"
ROW_ID = "row_id"
NUMBER_COLUMNS = ("y_hat", "prediction")
TEXT_COLUMNS = ("raw_text", "response")


def has_row_id(data_or_path: bytes | str) -> bool:
    """Whether a parquet file (bytes or path) has a `row_id` column; False for anything unreadable."""
    try:
        source = io.BytesIO(data_or_path) if isinstance(data_or_path, bytes) else data_or_path
        return ROW_ID in pq.read_schema(source).names
    except (OSError, pa.ArrowException, ValueError):
        return False


def _same(found: Any, expected: Any) -> bool:
    if expected is None:  # chirp and step rows carry no frequency or phase; any value there is ignored
        return True
    if isinstance(expected, str):
        return found == expected
    try:
        return float(found) == float(expected)
    except (TypeError, ValueError):
        return False


def read_row_id_parquet(data: bytes, report: Report, universe: Universe | None = None) -> tuple[Answers, str | None]:
    """The answers of a row_id parquet (each line is its 1-based row) and its model name (when it
    has a `model` column). Every problem goes to `report`."""
    answers = Answers.of([], universe)
    try:
        table = read_parquet(io.BytesIO(data))
    except (OSError, pa.ArrowException, ValueError) as err:
        report.error("parquet", "file", "", "a readable parquet file", str(err).splitlines()[0][:200])
        return answers, None
    names = table.column_names
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        report.error("schema", "file", ", ".join(twice), "each column once", "a column name twice")
        return answers, None
    if ROW_ID not in names:
        report.error("schema", "file", ROW_ID, "a row_id column (the row's position in the release)", "none")
        return answers, None
    if table.num_rows == 0:
        report.error("empty", "file", "", "one row per answer", "a parquet with no rows")
        return answers, None
    value_column = next((c for c in (*NUMBER_COLUMNS, *TEXT_COLUMNS) if c in names), None)
    if value_column is None:
        wanted = ", ".join((*NUMBER_COLUMNS, *TEXT_COLUMNS))
        report.error("schema", "file", "", f"an answer column: one of {wanted}", "none of them")
        return answers, None
    ids = table.column(ROW_ID)
    if not pa.types.is_integer(ids.type):
        report.error("schema", "file", ROW_ID, "integers", f"a column of {ids.type}")
        return answers, None
    is_text = value_column in TEXT_COLUMNS
    value_type = table.column(value_column).type
    text_type = pa.types.is_string(value_type) or pa.types.is_large_string(value_type)
    number_type = pa.types.is_floating(value_type) or pa.types.is_integer(value_type)
    if not (pa.types.is_null(value_type) or (text_type if is_text else number_type)):
        expected = "text" if is_text else "numbers (NaN or null = no answer)"
        report.error("schema", "file", value_column, expected, f"a column of {value_type}")
        return answers, None
    lay = layout()
    universe = universe_of(universe)
    total = universe.num_rows
    members = set(universe.families)
    checked = [c for c in lay.key if c in names]
    columns = {c: table.column(c).to_pylist() for c in {ROW_ID, value_column, *checked, "model"} & set(names)}
    first: dict[int, int] = {}
    models: dict[str, int] = {}
    rows: list[int] = []
    lines: list[int] = []
    texts: list[str | None] = []
    numbers: list[float] = []
    for i, row_id in enumerate(columns[ROW_ID]):
        where = f"row {i + 1}"
        if row_id is None or not 0 <= row_id < total:
            report.error("unknown-key", where, ROW_ID, f"a row_id from 0 to {total - 1}", repr(row_id))
            continue
        if row_id in first:
            report.error(
                "duplicate-key", where, ROW_ID, "each row_id once", f"{row_id} again (first in row {first[row_id]})"
            )
            continue
        first[row_id] = i + 1
        key = row_key_of(row_id, universe)
        if key.family not in members:  # a canonical family's ids, in a release that lacks it
            report.error("unknown-key", where, ROW_ID, f"a row_id of a family of {universe.release}", repr(row_id))
            continue
        wrong = [c for c in checked if not _same(columns[c][i], getattr(key, c))]
        if wrong:
            found = ", ".join(f"{c}={columns[c][i]!r}" for c in wrong)
            report.error(
                "row-id-order",
                where,
                ", ".join(wrong),
                f"the fields of row_id {row_id}, {format_key(key)} (row_id counts rows in the canonical order)",
                found,
            )
            continue
        value = columns[value_column][i]
        if "model" in columns and isinstance(columns["model"][i], str):
            models.setdefault(columns["model"][i], i + 1)
        rows.append(row_id)
        lines.append(i + 1)
        texts.append(value if is_text else None)
        numbers.append(math.nan if is_text or value is None else float(value))
    prediction = np.array(numbers, dtype=np.float64)
    # NaN is that code's "no answer"; a number beyond the float range is no number either.
    prediction[~np.isfinite(prediction)] = np.nan
    answers = Answers(
        row=np.array(rows, dtype=np.int64),
        line=np.array(lines, dtype=np.int64),
        response=texts,
        prediction=prediction,
        has_response=np.full(len(rows), is_text, dtype=bool),
        universe=universe,
    )
    if len(models) > 1:
        listed = ", ".join(f"{m!r} (first in row {n})" for m, n in models.items())
        report.error("model", "file", "model", "the same model on every row", listed)
    report.summary.update(answer_column=value_column)
    return answers, next(iter(models), None)
