"""A `Reference` read from a release folder, after the folder passes the release check.

Apart from `reference` because it needs the checker (`dataset`), and the checker reads the
packaged canonical rows, which are a `Reference`: kept in one module, the type and the checker
made a circle (`dataset -> split_identity -> packaged -> reference -> dataset`).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError, UsageError

from .content import TruthRows
from .dataset import check_release, open_table
from .manifest import read_manifest
from .reference import Reference
from .splits import prompts_hash, split_hash
from .universe import Universe


def release_reference(
    folder: str | Path,
    families: list[str] | None,
    source: str | None = None,
    truth: TruthRows | None = None,
    boundary: Path | None = None,
) -> Reference:
    """`families` (None: all of its families, in its universe's order) read from a release folder that
    passes validation (files, manifest and, with `truth`, every row)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"--reference {folder}: no such folder. Give a release folder such as dist/.")
    report, read = check_release(folder, truth, boundary)
    if not report.valid:
        raise ReferenceMismatchError(f"--reference {folder} is not a valid release:\n{report.format_text()}")
    manifest = read_manifest(folder)
    universe = Universe.of(manifest.families, manifest.name, manifest.drive_set, manifest.questions, manifest.design)
    if families is None:
        families = list(manifest.families)
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
    split = manifest.prompts_hash
    if not split and families == list(manifest.families):  # a release from before splits had names
        split = split_hash([prompts_hash(read_family(table, name)) for name in families])
    return Reference(
        table,
        source or str(folder),
        hashes,
        manifest.name,
        universe,
        manifest.content_hash,
        split,
        manifest.prompts_only,
        manifest.split,
        variants=manifest.variants,
    )


def read_family(table: pa.Table, family: str) -> pa.Table:
    import pyarrow.compute as pc

    return table.filter(pc.equal(table.column("family"), family))
