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

from .arrow_columns import validity, with_nulls_as_zero
from .digests import combined_hash, file_sha256

_HASH = "sha256"
#: Strings turned into the length-prefixed stream at a time (sha256 is a stream: the digest is the same).
_STRINGS_AT_ONCE = 2048
__all__ = ["combined_hash", "content_hash", "file_sha256"]


def _length_prefixed(column: pa.Array) -> bytes:
    """Each value as its 8-byte little-endian length and its UTF-8 bytes (null as ""), concatenated.

    sha256 is a stream, so one update with this is the same digest as one update per piece;
    built from the Arrow buffers with numpy rather than value by value.
    """
    if column.null_count or not pa.types.is_string(column.type):
        pack = struct.Struct("<Q").pack
        encoded = [(value or "").encode("utf-8") for value in column.to_pylist()]
        return b"".join(piece for data in encoded for piece in (pack(len(data)), data))
    n = len(column)
    _, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=n + 1, offset=4 * column.offset).astype(np.int64)
    lengths = np.diff(offsets)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer else np.empty(0, np.uint8)
    data = data[offsets[0] : offsets[-1]]
    out = np.empty(8 * n + len(data), dtype=np.uint8)
    starts = offsets[:-1] - offsets[0] + 8 * np.arange(n)
    prefixes = (starts[:, None] + np.arange(8)).ravel()
    out[prefixes] = lengths.astype("<u8").view(np.uint8)
    # The text fills the bytes between the prefixes, in order: a mask places it in one pass (an
    # index per byte of text took ten times as long, most of a family's content hash).
    text = np.ones(len(out), dtype=bool)
    text[prefixes] = False
    out[text] = data
    return out.tobytes()


def _feed_column(h: "hashlib._Hash", name: str, column: pa.ChunkedArray | pa.Array) -> None:
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    h.update(f"{name}:{column.type}:{len(column)}\n".encode())
    # One byte per value, 1 = valid. Conversions here stay in Arrow and numpy buffers: pyarrow's
    # own conversions of booleans and scalars import pandas (0.5 s), which nothing else here needs.
    valid = validity(column)
    h.update(valid.tobytes())
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        # In slices: building the stream takes index arrays eight times the text's size.
        for start in range(0, len(column), _STRINGS_AT_ONCE):
            h.update(_length_prefixed(column.slice(start, _STRINGS_AT_ONCE)))
    else:
        # Nulls hash as 0 beside a validity byte, so a null and a 0 never collide.
        values = with_nulls_as_zero(column, valid)
        h.update(np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes())


def content_hash(table: pa.Table) -> str:
    """`sha256:<hex>` over every column of `table`, in its column order."""
    h = hashlib.new(_HASH)
    for name in table.column_names:
        _feed_column(h, name, table.column(name))
    return f"{_HASH}:{h.hexdigest()}"
