"""The builder's rows as the truth a release is checked against (`validate`, `push`).

The builder (and sympy with it, about 1.7 s of imports) loads only when its rows are needed: to
name the wrong rows of a release that is not canonical. Scoring and running resolve their
reference with `mathbode.hub.reference.resolve_reference` (the packaged canonical rows by default).
"""

from __future__ import annotations

import pyarrow as pa

from mathbode.core.errors import UnknownNameError


def builder_truth(family: str) -> pa.Table | None:
    """A family's rows recomputed by the builder (the `truth` the validators compare against);
    None for a family its registry does not know (a plugin's, not installed here): the validator
    then checks that family's layout and counts and says its content was not checked."""
    from mathbode.builder.oracle import true_rows

    try:
        return true_rows(family)
    except UnknownNameError:
        return None
