"""`core.arrow_compute` calls Arrow's kernels without importing `pyarrow.compute`'s wrappers: its
results equal, value for value, what the public functions give, and scoring a file no longer
loads the wrappers (20-45 ms of a 0.5 s command)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from mathbode.core.arrow_compute import as_float64, dictionary_codes, positions_in
from mathbode.schema.submission import _any_empty


@pytest.mark.parametrize(
    "column",
    [
        pa.array([0, 1, -3, 2**53 + 1, 2**63 - 1, None]),
        pa.array([0.5, None, -0.0, float("inf")]),
        pa.chunked_array([[1, 2], [], [2**60 + 3, None]], type=pa.int64()),
    ],
)
def test_as_float64_is_arrows_unsafe_cast(column):
    ours, theirs = as_float64(column), pc.cast(column, pa.float64(), safe=False)
    assert ours.equals(theirs)
    # An integer beyond 2^53 rounds to the nearest float, as Python's float() does.
    exact = [float(v) if v is not None else None for v in column.to_pylist()]
    assert ours.to_pylist() == exact


@pytest.mark.parametrize(
    "column, values, expected",
    [
        (pa.array(["b", "a", None, "z", "a"]), ("a", "b"), [1, 0, -1, -1, 0]),
        (pa.chunked_array([["x"], [], ["y", None]], type=pa.string()), ("y", "x"), [1, 0, -1]),
        (pa.array([1.0, 2.5, None, 3.0]), (3.0, 1.0), [1, -1, -1, 0]),
        (pa.chunked_array([], type=pa.string()), ("a",), []),
    ],
)
def test_positions_in_is_index_in_with_nulls_as_minus_one(column, values, expected):
    found = positions_in(column, values)
    assert found.dtype == np.int64 and found.tolist() == expected
    public = pc.fill_null(pc.index_in(column, value_set=pa.array(values)), -1)
    assert found.tolist() == public.to_pylist()


@pytest.mark.parametrize(
    "column",
    [
        pa.array(["q", "r", "q", None, "", "r"]),
        pa.chunked_array([["a", "b"], ["b", "c", None], [], ["d", "a"]], type=pa.string()),
        pa.chunked_array([[None, None], ["x"]], type=pa.string()),
        pa.chunked_array([], type=pa.string()),
    ],
)
def test_dictionary_codes_number_values_by_first_appearance_across_chunks(column):
    codes, dictionary = dictionary_codes(column)
    values = column.to_pylist()
    distinct = list(dict.fromkeys(v for v in values if v is not None))
    assert dictionary.to_pylist() == distinct
    assert codes.dtype == np.int64
    assert codes.tolist() == [-1 if v is None else distinct.index(v) for v in values]


@pytest.mark.parametrize(
    "values, expected",
    [(["m", "n"], False), (["m", ""], True), ([None, "m"], False), (["", None], True), ([None], False)],
)
def test_an_empty_name_is_found_in_a_sliced_string_column_too(values, expected):
    part = pa.array(["pad", *values, "tail"]).slice(1, len(values))  # offsets read from the slice's own start
    assert _any_empty(part) is expected
    assert _any_empty(part) is bool(pc.any(pc.equal(pc.utf8_length(part), 0)).as_py())  # None (all null): none empty


def test_chunks_encoded_against_dictionaries_of_their_own_are_encoded_again_as_one(monkeypatch):
    """Arrow encodes a chunked column's chunks against one growing dictionary; were a release to
    give each chunk its own, the codes would mean different values in different chunks: the
    column is then encoded as one array."""
    from mathbode.core import arrow_compute

    real = arrow_compute.call_function

    def own_dictionaries(name, args, options=None):
        (column,) = args if name == "dictionary_encode" else (None,)
        if isinstance(column, pa.ChunkedArray):
            return pa.chunked_array([real(name, [c], options) for c in column.chunks])
        return real(name, args, options)

    monkeypatch.setattr(arrow_compute, "call_function", own_dictionaries)
    column = pa.chunked_array([["b", "a"], ["a", "c"]], type=pa.string())
    codes, dictionary = dictionary_codes(column)
    assert dictionary.to_pylist() == ["b", "a", "c"] and codes.tolist() == [0, 1, 1, 2]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        (pa.array([True, None, False]), False),
        (pa.chunked_array([[None, "b"], ["c", None]], type=pa.string()), ""),
        (pa.array([3, None, -1], type=pa.int32()), -1),
    ],
)
def test_fill_nulls_is_arrows_fill_null(column, value):
    from mathbode.core.arrow_compute import fill_nulls

    assert fill_nulls(column, value).equals(pc.fill_null(column, value))
