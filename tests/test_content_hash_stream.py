"""The content hash's string stream (`core.hashing._length_prefixed`), built from Arrow's buffers
with numpy, is the plain definition: each value's 8-byte little-endian length, then its UTF-8."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest

from mathbode.core.hashing import _length_prefixed


def _plain(values: list[str | None]) -> bytes:
    out = b""
    for value in values:
        data = (value or "").encode("utf-8")
        out += struct.pack("<Q", len(data)) + data
    return out


CASES = {
    "empty": [],
    "one": ["x"],
    "empty strings": ["", "", "a", ""],
    "unicode": ["é", "日本語", "\U0001f600 and more", "plain"],
    "prompts": [f"Solve a*x + b = c for x, where a = {i / 8:.3f}.\n\nReply [answer_start] X." for i in range(99)],
}


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_the_stream_is_each_length_then_each_text(values):
    assert _length_prefixed(pa.array(values, pa.string())) == _plain(values)


def test_a_slice_streams_only_its_own_values():
    values = [f"value {i} " * (i % 7) for i in range(50)]
    column = pa.array(values, pa.string())
    assert _length_prefixed(column.slice(13, 20)) == _plain(values[13:33])
    assert _length_prefixed(column.slice(50, 0)) == b""


def test_nulls_stream_as_empty_texts():
    assert _length_prefixed(pa.array(["a", None, "bc"], pa.string())) == _plain(["a", None, "bc"])
