"""The few Arrow compute kernels the scoring path calls, without importing `pyarrow.compute`.

`import pyarrow.compute` builds a Python wrapper with a docstring for each of Arrow's several
hundred kernels: 20-45 ms, about a twentieth of scoring a full file, for the four kernels scoring
uses. Every wrapper ends in one call, `call_function(name, args, options)`, which lives with the
options classes in the compiled module `pyarrow._compute` (7 ms to load); `pyarrow.compute`
re-exports that very function. Arrow's array methods (`Array.cast`, `.dictionary_encode()`,
`.fill_null()`) import the wrappers on first use, so the scoring path calls the kernels here.

Should a pyarrow release move `call_function`, the public module's is used: slower to import,
the same kernels and results.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa

try:
    from pyarrow._compute import CastOptions, DictionaryEncodeOptions, SetLookupOptions, call_function
except ImportError:  # pragma: no cover - another pyarrow layout: the public module has them all
    from pyarrow.compute import CastOptions, DictionaryEncodeOptions, SetLookupOptions, call_function

Column: TypeAlias = pa.Array | pa.ChunkedArray


def as_float64(column: Column) -> Column:
    """`pc.cast(column, pa.float64(), safe=False)`: an integer beyond 2^53 rounds to the nearest
    float, as Python's `float()` rounds it."""
    return call_function("cast", [column], CastOptions.unsafe(pa.float64()))


def positions_in(column: Column, values: tuple[Any, ...]) -> np.ndarray:
    """Each value's position in `values` as int64, -1 where it is not there or null
    (`pc.fill_null(pc.index_in(column, value_set=pa.array(values)), -1)`)."""
    return _nulls_as_minus_one(call_function("index_in", [column], SetLookupOptions(pa.array(values))))


def dictionary_codes(column: Column) -> tuple[np.ndarray, pa.Array]:
    """(each value's code as int64, -1 for null; the distinct values in order of first appearance):
    `column.dictionary_encode()`. A chunked column's chunks are encoded against one dictionary
    without first being copied into one array (16 MB for a full release's prompts)."""
    encoded = call_function("dictionary_encode", [column], DictionaryEncodeOptions())
    chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    if not chunks:
        return np.zeros(0, dtype=np.int64), pa.array([], type=column.type)
    dictionary = chunks[-1].dictionary  # Arrow gives each chunk the dictionary as it stood: a prefix of the last
    if not all(c.dictionary.equals(dictionary.slice(0, len(c.dictionary))) for c in chunks):
        return dictionary_codes(column.combine_chunks())  # not so in some release: one array, one dictionary
    return np.concatenate([_nulls_as_minus_one(c.indices) for c in chunks]), dictionary


def fill_nulls(column: Column, value: Any) -> Column:
    """`pc.fill_null(column, value)`: each null replaced by `value`, of the column's type."""
    return call_function("coalesce", [column, pa.scalar(value, type=column.type)])


def _nulls_as_minus_one(indices: Column) -> np.ndarray:
    """Integer positions as int64, -1 where null."""
    return np.asarray(fill_nulls(indices, -1), dtype=np.int64)
