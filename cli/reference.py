"""Resolve `--reference`: the builder's own rows, a release folder, or a release on the Hub."""

from __future__ import annotations

from mathbode.builder.oracle import canonical_reference, true_rows
from mathbode.hub.fetch import fetch_release, is_hub_spec, snapshot_boundary
from mathbode.schema.reference import Reference, release_reference


def resolve_reference(families: list[str], reference: str | None = None) -> Reference:
    """Canonical rows of `families`: the builder's own, a release folder, or `hub:ORG/NAME[@REV]`."""
    if not reference:
        return canonical_reference(families)
    if is_hub_spec(reference):
        folder = fetch_release(reference)
        return release_reference(folder, families, reference, true_rows, snapshot_boundary(folder))
    return release_reference(reference, families, truth=true_rows)
