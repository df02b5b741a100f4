"""The on-disk cache of the builder's canonical rows: used only when its content hash checks out."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from mathbode.builder.oracle import canonical_reference
from mathbode.cli.reference import resolve_reference
from mathbode.core.hashing import content_hash
from mathbode.schema.reference_cache import _path, cached_reference, read_cached, write_cached
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES

FAMILY = "linear_system"


def test_the_builder_fills_the_cache_and_the_scorer_reads_it_back(monkeypatch, tmp_path):
    monkeypatch.setenv("MATHBODE_CACHE", str(tmp_path))
    assert cached_reference([FAMILY]) is None
    built = canonical_reference([FAMILY])
    assert _path(FAMILY).is_file()
    cached = cached_reference([FAMILY])
    assert cached is not None and cached.table.equals(built.table)
    assert cached.provenance() == built.provenance()
    assert resolve_reference([FAMILY]).table.equals(built.table)


def test_a_damaged_or_edited_cache_file_is_never_used(monkeypatch, tmp_path):
    monkeypatch.setenv("MATHBODE_CACHE", str(tmp_path))
    table = canonical_reference([FAMILY]).table
    truth = table.column("ground_truth").to_pylist()
    truth[7] += 1.0
    edited = table.set_column(table.schema.get_field_index("ground_truth"), "ground_truth", pa.array(truth))
    pq.write_table(edited, _path(FAMILY))
    assert read_cached(FAMILY) is None
    _path(FAMILY).write_bytes(b"not parquet")
    assert read_cached(FAMILY) is None
    reference = resolve_reference([FAMILY])  # falls back to the builder, which rewrites the cache
    assert content_hash(reference.table) == RELEASE_CONTENT_HASHES[FAMILY]
    assert read_cached(FAMILY) is not None


def test_an_unwritable_cache_is_skipped_silently(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("MATHBODE_CACHE", str(blocker / "cache"))  # under a file: cannot be made
    table = canonical_reference([FAMILY]).table
    write_cached(FAMILY, table)
    assert read_cached(FAMILY) is None
