"""Resolve `--reference`: the builder's own rows, a release folder, or a release on the Hub.

The builder (and sympy with it, about 1.7 s of imports) loads only when its rows are needed: for
the default reference, or to name the wrong rows of a release that is not canonical.
"""

from __future__ import annotations

import pyarrow as pa

from mathbode.hub.fetch import fetch_release, is_hub_spec, snapshot_boundary
from mathbode.schema.reference import Reference, release_reference
from mathbode.schema.reference_cache import cached_reference


def builder_truth(family: str) -> pa.Table:
    """A family's rows recomputed by the builder (the `truth` the validators compare against)."""
    from mathbode.builder.oracle import true_rows

    return true_rows(family)


def resolve_reference(families: list[str], reference: str | None = None) -> Reference:
    """Canonical rows of `families`: the builder's own, a release folder, or `hub:ORG/NAME[@REV]`."""
    if not reference:
        cached = cached_reference(families)  # each family's rows checked against its content hash
        if cached is not None:
            return cached
        from mathbode.builder.oracle import canonical_reference

        return canonical_reference(families)
    if is_hub_spec(reference):
        folder = fetch_release(reference)
        return release_reference(folder, families, reference, builder_truth, snapshot_boundary(folder))
    return release_reference(reference, families, truth=builder_truth)
