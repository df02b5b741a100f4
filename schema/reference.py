"""The canonical rows a submission is asked and scored against, and where they came from.

A `Reference` is the rows plus their provenance (the builder's own rows, a release folder, or a
release fetched from the Hub) and each family's content hash, so a score or a run record can
say exactly what it was measured against.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError, UsageError
from mathbode.core.hashing import combined_hash

from .content import TruthRows
from .manifest import read_manifest

#: The `source` of the builder's own rows.
BUILDER_SOURCE = "builder"


@dataclass(frozen=True)
class Reference:
    """Canonical rows of some families, with where they came from."""

    table: pa.Table
    #: `builder`, a release folder's path, or `hub:ORG/NAME[@REV]`.
    source: str
    #: family -> content hash of its rows, in canonical order.
    family_hashes: dict[str, str]

    @property
    def content_hash(self) -> str:
        """One hash over the families' content hashes (the release's own when all are present)."""
        return combined_hash(list(self.family_hashes.values()))

    def provenance(self) -> dict[str, object]:
        return {"source": self.source, "content_hash": self.content_hash, "families": dict(self.family_hashes)}


def release_reference(
    folder: str | Path,
    families: list[str],
    source: str | None = None,
    truth: TruthRows | None = None,
    boundary: Path | None = None,
) -> Reference:
    """`families` read from a release folder that passes validation (files, manifest and, with `truth`, every row)."""
    from .dataset import check_release, open_table  # the release check: only a folder given needs it

    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"--reference {folder}: no such folder. Give a release folder such as dist/.")
    report, read = check_release(folder, truth, boundary)
    if not report.valid:
        raise ReferenceMismatchError(f"--reference {folder} is not a valid release:\n{report.format_text()}")
    manifest = read_manifest(folder)
    missing = [f for f in families if f not in manifest.families]
    if missing:
        raise ReferenceMismatchError(f"--reference {folder} has no rows for {', '.join(missing)}.")
    # The tables the check read, not read again (a file it could not read failed the check).
    table = pa.concat_tables(
        read[rel] if rel in read else open_table(folder / rel)
        for name in families
        for rel in manifest.family_files(name)
    )
    hashes = {name: manifest.families[name].content_hash for name in families}
    return Reference(table, source or str(folder), hashes)
