"""The exact oracle: the canonical rows (checked against the release's hashes) and exact answers.

The symbolic baseline (the exact answer in the answer format, truncated to six decimals)
calibrates the instrument: run through the same parser and fits, it must score MB-Core 1 with
unity gain and zero phase error at every frequency.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import Any, Iterator

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError
from mathbode.core.hashing import content_hash
from mathbode.schema.layout import layout
from mathbode.schema.reference import BUILDER_SOURCE, Reference
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES
from mathbode.schema.selection import key_fields

from .families import get_family
from .rows import family_table

BASELINE_MODEL = "symbolic-baseline"


def canonical_rows(families: list[str]) -> pa.Table:
    """The builder's rows for `families`, checked against the release's content hashes."""
    return canonical_reference(families).table


def canonical_reference(families: list[str]) -> Reference:
    """The builder's rows for `families` as a reference, checked against the release's content hashes."""
    tables = []
    for name in families:
        table = family_table(get_family(name))
        if content_hash(table) != RELEASE_CONTENT_HASHES.get(name):
            raise ReferenceMismatchError(
                f"the builder's rows for {name!r} do not match the release's content hash; "
                "this installation is not the canonical builder. Score with --reference DIR instead."
            )
        tables.append(table)
    return Reference(
        pa.concat_tables(tables), BUILDER_SOURCE, {name: RELEASE_CONTENT_HASHES[name] for name in families}
    )


@cache
def true_rows(family: str) -> pa.Table:
    """A family's rows recomputed from its definition: what a release's rows are checked against."""
    return family_table(get_family(family))


def exact_digits(row: dict[str, Any]) -> int:
    """A row's exact answer times 10**decimals of the answer format, truncated toward zero: from its
    family's answer at the rendered p (not the rounded float), exact or certified."""
    family = get_family(row["family"])
    p = Decimal(repr(row["p_value"]))  # the shortest repr of a float of few decimals is the rendered text
    return family.answer_function(row["question_id"]).truncated(Fraction(p), layout().answer_decimals)


def digits_text(scaled: int) -> str:
    """Truncated digits (value * 10**decimals) as the answer format's payload."""
    decimals = layout().answer_decimals
    sign = "-" if scaled < 0 else ""
    whole, part = divmod(abs(scaled), 10**decimals)
    return f"{sign}{whole}.{part:0{decimals}d}"


def answer_text(value: Fraction) -> str:
    """An exact value as the answer format's payload: truncated toward zero to the format's decimals."""
    decimals = layout().answer_decimals
    scaled = abs(value.numerator) * 10**decimals // value.denominator
    return digits_text(-scaled if value < 0 else scaled)


def baseline_lines(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The symbolic solver's submission lines for `rows` (any family this installation knows)."""
    lay = layout()
    for row in rows:
        response = f"{lay.answer_start} {digits_text(exact_digits(row))} {lay.answer_end}"
        yield {**key_fields(row), "response": response, "model": BASELINE_MODEL}
