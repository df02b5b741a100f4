"""A content hash of dataset rows that does not depend on the file format or writer version.

Two releases have the same `content_hash` exactly when they hold the same rows in the same
order with the same values. Parquet bytes change with the writer's version (its `created_by`
field, encodings); this hash does not, so it is what the build's determinism is judged by.
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_HASH = "sha256"


def _feed_column(h: "hashlib._Hash", name: str, column: pa.ChunkedArray | pa.Array) -> None:
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    h.update(f"{name}:{column.type}:{len(column)}\n".encode())
    h.update(np.asarray(column.is_valid(), dtype=np.uint8).tobytes())
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        for value in column.to_pylist():
            data = (value or "").encode("utf-8")
            h.update(struct.pack("<Q", len(data)))
            h.update(data)
    else:
        # Nulls hash as 0 beside a validity byte, so a null and a 0 never collide.
        values = pc.fill_null(column, 0).to_numpy(zero_copy_only=False)
        h.update(np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes())


def content_hash(table: pa.Table) -> str:
    """`sha256:<hex>` over every column of `table`, in its column order."""
    h = hashlib.new(_HASH)
    for name in table.column_names:
        _feed_column(h, name, table.column(name))
    return f"{_HASH}:{h.hexdigest()}"


def combined_hash(parts: list[str]) -> str:
    """One hash over per-family content hashes, in the given (canonical) order."""
    h = hashlib.new(_HASH)
    for part in parts:
        h.update(part.encode() + b"\n")
    return f"{_HASH}:{h.hexdigest()}"


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
