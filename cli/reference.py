"""The builder's rows as the truth a release is checked against (`validate`, `push`).

The builder (and sympy with it, about 1.7 s of imports) loads only when its rows are needed: to
name the wrong rows of a release that is not canonical. Scoring and running resolve their
reference with `mathbode.hub.reference.resolve_reference` (the packaged canonical rows by default).
"""

from __future__ import annotations

from typing import Any, Callable

import pyarrow as pa

from mathbode.core.errors import UnknownNameError, UsageError
from mathbode.schema.drives import MultitoneDesign


class BuilderTruth:
    """A family's rows recomputed by the builder (the `truth` the validators compare against);
    None for a family its registry does not know (a plugin's, not installed here): the validator
    then checks that family's layout and counts and says its content was not checked.

    `for_split` gives the truth of a fresh split: each family drawn again from the split's seed,
    or for a private split from `keeper_seed` (its keeper's, which must match the commitment the
    manifest records); None for a private split without it. A release of `--questions N` draws N
    problems a family (`questions`)."""

    def __init__(self, keeper_seed: str | None = None) -> None:
        self.keeper_seed = keeper_seed

    def describe_family(self, family: str) -> dict[str, Any] | None:
        """The family's entry in a release's description (`schema.description`), as the builder
        writes it; None for a family its registry does not know."""
        from mathbode.builder.release import described_family

        return described_family(family)

    def __call__(self, family: str) -> pa.Table | None:
        from mathbode.builder.oracle import true_rows

        try:
            return true_rows(family)
        except UnknownNameError:
            return None

    def for_split(self, split: dict[str, str], questions: int | None = None) -> Callable[[str], pa.Table | None] | None:
        seed = split.get("seed")
        if seed is None and self.keeper_seed is not None and "seed_sha256" in split:
            from mathbode.builder.splits import seed_commitment

            if seed_commitment(self.keeper_seed) != split["seed_sha256"]:
                raise UsageError(
                    "--seed is not this private split's seed: its sha256 does not match the commitment "
                    f"{split['seed_sha256']} that the release's MANIFEST.json records."
                )
            seed = self.keeper_seed
        if seed is None:
            return None
        chosen = seed

        def drawn(family: str) -> pa.Table | None:
            from mathbode.builder.families import get_family
            from mathbode.builder.rows import family_table
            from mathbode.builder.splits import drawn_family
            from mathbode.schema.layout import layout

            try:
                return family_table(
                    drawn_family(get_family(family), chosen, questions=questions), layout("standard", questions)
                )
            except UnknownNameError:
                return None

        return drawn

    def for_drives(self, drives: str, design: MultitoneDesign | None = None) -> Callable[[str], pa.Table | None]:
        """The truth of a release of other drives (multi-tone, of `design`): each family's rows on that grid."""

        def driven(family: str) -> pa.Table | None:
            from mathbode.builder.families import get_family
            from mathbode.builder.rows import family_table
            from mathbode.schema.layout import layout

            try:
                return family_table(get_family(family), layout(drives, None, design))
            except UnknownNameError:
                return None

        return driven


builder_truth = BuilderTruth()
