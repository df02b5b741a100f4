"""Resolve a reference spec: the canonical rows shipped with the package, a release folder, or a
release on the Hub (`hub:ORG/NAME[@REV]`).

One resolver for every consumer: the commands' `--reference` and the framework tasks' `reference`
option. A release's rows are compared with the packaged canonical rows only when its content
hash says they differ, to name the rows that do; a family that is not canonical is checked for
layout and counts (its content is its builder's to check: `mathbode validate`).

The families asked for may be a list of names or a spec (`all`, or comma-separated names) read
against the reference's own families: `all` of a release folder is all of its families.
"""

from __future__ import annotations

from typing import Sequence

from mathbode.core.errors import UnknownNameError
from mathbode.schema.content import TruthRows
from mathbode.schema.packaged import packaged_reference, packaged_truth
from mathbode.schema.reference import Reference
from mathbode.schema.universe import canonical_universe

from .fetch import fetch_release, is_hub_spec, snapshot_boundary


def resolve_reference(
    families: Sequence[str] | str | None, reference: str | None = None, truth: TruthRows = packaged_truth
) -> Reference:
    """Rows of `families` (names, a spec such as `all` or `a,b`, or None for all): the package's own
    canonical rows, a release folder, or `hub:ORG/NAME[@REV]`. A name the reference lacks is an
    error naming the close matches (and, with no reference, how to give a release of it)."""
    if not reference:
        universe = canonical_universe()
        names = universe.family_names(families or "all") if isinstance(families, str | None) else list(families)
        for name in names:
            if name not in universe.families:
                raise UnknownNameError(universe.unknown_family_message(name))
        return packaged_reference(names)
    # The release checker and its validators (40 ms, 80 modules) load only when a release is given.
    from mathbode.schema.release_reference import release_reference

    if is_hub_spec(reference):
        folder = fetch_release(reference)
        found = release_reference(folder, None, reference, truth, snapshot_boundary(folder))
    else:
        found = release_reference(reference, None, truth=truth)
    if families is None:
        return found
    if isinstance(families, str) and families.strip() == "all":
        return found  # all of the release's families (a one-family release: that family)
    names = found.universe.family_names(families) if isinstance(families, str) else list(families)
    return found.only(names)
