"""The canonical rows to score against: the builder's own (hash-checked) or a release folder."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from mathbode.schema.dataset import open_table, validate_dataset
from mathbode.schema.errors import MathBodeError, UsageError
from mathbode.schema.hashing import content_hash


class ReferenceMismatchError(MathBodeError):
    """The reference rows are not the canonical release."""


def canonical_rows(families: list[str]) -> pa.Table:
    """The builder's rows for `families`, checked against the release's content hashes."""
    from mathbode.builder import get_family
    from mathbode.builder.rows import family_table
    from mathbode.builder.version import RELEASE_CONTENT_HASHES

    tables = []
    for name in families:
        table = family_table(get_family(name))
        if content_hash(table) != RELEASE_CONTENT_HASHES.get(name):
            raise ReferenceMismatchError(
                f"the builder's rows for {name!r} do not match the release's content hash; "
                "this installation is not the canonical builder. Score with --reference DIR instead."
            )
        tables.append(table)
    return pa.concat_tables(tables)


def release_rows(folder: str | Path, families: list[str]) -> pa.Table:
    """`families` read from a release folder, after checking its files against its manifest."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"--reference {folder}: no such folder. Give a release folder such as dist/.")
    report = validate_dataset(folder)
    if not report.valid:
        raise ReferenceMismatchError(f"--reference {folder} is not a valid release:\n{report.format_text()}")
    manifest = json.loads((folder / "MANIFEST.json").read_text("utf-8"))
    missing = [f for f in families if f not in manifest["families"]]
    if missing:
        raise ReferenceMismatchError(f"--reference {folder} has no rows for {', '.join(missing)}.")
    return pa.concat_tables(
        open_table(folder / rel) for name in families for rel in manifest["families"][name]["files"]
    )
