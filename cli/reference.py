"""The builder's rows as the truth a release is checked against (`validate`, `push`).

The builder (and sympy with it, about 1.7 s of imports) loads only when its rows are needed: to
name the wrong rows of a release that is not canonical. Scoring and running resolve their
reference with `mathbode.hub.reference.resolve_reference` (the packaged canonical rows by default).
"""

from __future__ import annotations

import pyarrow as pa


def builder_truth(family: str) -> pa.Table:
    """A family's rows recomputed by the builder (the `truth` the validators compare against)."""
    from mathbode.builder.oracle import true_rows

    return true_rows(family)
