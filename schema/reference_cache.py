"""A cache of the builder's canonical rows on disk, trusted only after their content hash is checked.

Making the canonical rows costs the builder: sympy's import and exact arithmetic, about 3 s per
`mathbode-score`. The rows never change for a given content hash, so the first run writes them
to `$MATHBODE_CACHE` (default `$XDG_CACHE_HOME/mathbode`, else `~/.cache/mathbode`) as one parquet
file per family named by its content hash, and later runs read them back and recompute the
content hash before using them: a damaged or edited file is ignored (and rewritten), never
scored against. The cache is an optimisation only: any failure to read or write it is silent.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mathbode.core.hashing import content_hash

from .layout import layout
from .parquet import read_parquet
from .reference import BUILDER_SOURCE, Reference
from .release_hashes import RELEASE_CONTENT_HASHES


def cache_dir() -> Path:
    given = os.environ.get("MATHBODE_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mathbode"


def _path(family: str) -> Path:
    digest = RELEASE_CONTENT_HASHES[family].split(":", 1)[1][:16]
    return cache_dir() / f"{family}-{digest}.parquet"


def read_cached(family: str) -> pa.Table | None:
    """The family's canonical rows from the cache, if present and exactly canonical; else None."""
    if family not in RELEASE_CONTENT_HASHES:
        return None
    try:
        table = read_parquet(_path(family))
    except (OSError, pa.ArrowException, ValueError):
        return None
    if table.schema != layout().arrow_schema or content_hash(table) != RELEASE_CONTENT_HASHES[family]:
        return None
    return table


def write_cached(family: str, table: pa.Table) -> None:
    """Keep a family's canonical rows for the next run (atomically; silently skipped on any failure)."""
    if content_hash(table) != RELEASE_CONTENT_HASHES.get(family):
        return
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{family}.", suffix=".tmp", dir=folder)
        os.close(fd)
        try:
            pq.write_table(table, tmp)
            os.replace(tmp, _path(family))
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError:
        return


def cached_reference(families: list[str]) -> Reference | None:
    """The builder's canonical rows of `families` from the cache, each checked; None if any is missing."""
    tables = []
    for family in families:
        table = read_cached(family)
        if table is None:
            return None
        tables.append(table)
    hashes = {family: RELEASE_CONTENT_HASHES[family] for family in families}
    return Reference(pa.concat_tables(tables), BUILDER_SOURCE, hashes)
