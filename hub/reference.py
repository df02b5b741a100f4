"""Resolve a reference spec: the canonical rows shipped with the package, a release folder, or a
release on the Hub (`hub:ORG/NAME[@REV]`).

One resolver for every consumer: the commands' `--reference` and the framework tasks' `reference`
option. A release's rows are compared with the packaged canonical rows only when its content
hash says they differ, to name the rows that do.
"""

from __future__ import annotations

from mathbode.schema.content import TruthRows
from mathbode.schema.packaged import packaged_reference, packaged_rows
from mathbode.schema.reference import Reference, release_reference

from .fetch import fetch_release, is_hub_spec, snapshot_boundary


def resolve_reference(families: list[str], reference: str | None = None, truth: TruthRows = packaged_rows) -> Reference:
    """Canonical rows of `families`: the package's own, a release folder, or `hub:ORG/NAME[@REV]`."""
    if not reference:
        return packaged_reference(families)
    if is_hub_spec(reference):
        folder = fetch_release(reference)
        return release_reference(folder, families, reference, truth, snapshot_boundary(folder))
    return release_reference(reference, families, truth=truth)
