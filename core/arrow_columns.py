"""Arrow arrays from Python lists, built from buffers.

`pyarrow.array` asks pandas whether a list is array-like, which imports pandas (0.5 s, a fifth of
a build) in a command that never uses it. The builder's columns are plain lists of strings,
floats and ints (None for null), which Arrow's buffer layout takes directly: a validity bitmap
(least significant bit first), then int32 offsets and UTF-8 bytes for a string, or the values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa


def array_from_list(values: list[Any], kind: pa.DataType) -> pa.Array:
    """`pa.array(values, type=kind)` for string, float64 and int64 columns (None is null)."""
    n = len(values)
    present = [v is not None for v in values]
    nulls = n - sum(present)
    validity = pa.py_buffer(np.packbits(np.array(present, dtype=bool), bitorder="little")) if nulls else None
    if pa.types.is_string(kind):
        encoded = [v.encode("utf-8") if v is not None else b"" for v in values]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    elif pa.types.is_float64(kind) or pa.types.is_int64(kind):
        dtype = np.float64 if pa.types.is_float64(kind) else np.int64
        data = np.array([v if v is not None else 0 for v in values], dtype=dtype)
        buffers = [validity, pa.py_buffer(data)]
    else:
        raise TypeError(f"no buffer layout here for Arrow type {kind}")
    array = pa.Array.from_buffers(kind, n, buffers, null_count=nulls)
    array.validate(full=True)
    return array


def table_from_lists(columns: dict[str, list[Any]], schema: pa.Schema) -> pa.Table:
    """`pa.table(columns, schema=schema)` for the column types `array_from_list` knows."""
    return pa.Table.from_arrays([array_from_list(columns[f.name], f.type) for f in schema], schema=schema)
