"""Arrow arrays to and from Python lists and numpy, through their buffers.

`pyarrow.array` asks pandas whether a list is array-like, which imports pandas (0.5 s, a fifth of
a build) in a command that never uses it. The builder's columns are plain lists of strings,
floats and ints (None for null), which Arrow's buffer layout takes directly: a validity bitmap
(least significant bit first), then int32 offsets and UTF-8 bytes for a string, or the values.
The other way, pyarrow's numpy conversion of a column with nulls imports pandas too; reading the
buffers does not.
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


def validity(column: pa.Array) -> np.ndarray:
    """One uint8 per value, 1 where valid, from the validity bitmap (least significant bit first)."""
    bitmap = column.buffers()[0]
    if bitmap is None or not column.null_count:
        return np.ones(len(column), dtype=np.uint8)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return np.ascontiguousarray(bits[column.offset : column.offset + len(column)])


def with_nulls_as_zero(column: pa.Array, valid: np.ndarray) -> np.ndarray:
    """The column's values as numpy, 0 where null (what `fill_null(0)` gives)."""
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        dtype = np.dtype(column.type.to_pandas_dtype())
        values = np.frombuffer(
            column.buffers()[1], dtype=dtype, count=len(column), offset=column.offset * dtype.itemsize
        )
        # A null slot's bytes are unspecified in Arrow: they are replaced, never read.
        return np.where(valid.astype(bool), values, np.zeros(1, dtype)) if column.null_count else values
    from .arrow_compute import fill_nulls  # other types, Arrow's own way

    return fill_nulls(column, 0).to_numpy(zero_copy_only=False)


def all_finite(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether every float in the column (and in its fields, for a struct column) is finite, nulls aside."""
    kind = column.type
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_struct(kind):
        return all(all_finite(array.field(i)) for i in range(kind.num_fields))
    if pa.types.is_float64(kind):
        valid = validity(array)
        return bool(np.isfinite(with_nulls_as_zero(array, valid)[valid.astype(bool)]).all())
    return True
