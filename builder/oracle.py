"""The exact oracle: the canonical rows (checked against the release's hashes) and exact answers.

The symbolic baseline (the exact answer in the answer format, truncated to six decimals)
calibrates the instrument: run through the same parser and fits, it must score MB-Core 1 with
unity gain and zero phase error at every frequency.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import Any, Iterator, Mapping

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError, UsageError
from mathbode.core.hashing import content_hash
from mathbode.schema.layout import layout
from mathbode.schema.reference import BUILDER_SOURCE, Reference
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES
from mathbode.schema.selection import key_fields

from .families import Family, get_family
from .rows import family_table
from .splits import drawn_family, seed_commitment

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


def exact_digits(row: dict[str, Any], families: Mapping[str, Family] | None = None) -> int:
    """A row's exact answer times 10**decimals of the answer format, truncated toward zero: from its
    family's answer at the rendered p (not the rounded float), exact or certified. `families`: the
    definitions to use (a fresh split's drawn families) instead of the registry's."""
    family = families[row["family"]] if families and row["family"] in families else get_family(row["family"])
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


def baseline_lines(
    rows: list[dict[str, Any]], families: Mapping[str, Family] | None = None, split: str | None = None
) -> Iterator[dict[str, Any]]:
    """The symbolic solver's submission lines for `rows` (any family this installation knows, or
    the drawn `families` of a fresh split; `split`: the split recorded on each line)."""
    lay = layout()
    for row in rows:
        response = f"{lay.answer_start} {digits_text(exact_digits(row, families))} {lay.answer_end}"
        line = {**key_fields(row), "response": response, "model": BASELINE_MODEL}
        if split:
            line["meta"] = {"split": split}
        yield line


def split_families(
    names: list[str], split: Mapping[str, str] | None, seed: str | None = None, questions: int | None = None
) -> dict[str, Family]:
    """The drawn families of a fresh split (empty for the canonical release): from its published
    seed, or, for a private split, from `seed` (which must match the split's commitment); with
    `questions` problems a family (a release of `mathbode-build --questions N`). A surface variant
    is its drawn original renamed, as the build made it (`splits.drawn_family`)."""
    if not split:
        return {}
    if "seed" in split:
        seed = split["seed"]
    elif seed is None:
        raise UsageError(
            "--reference is a private split: its seed is not published. Its keeper gives it with --seed SEED."
        )
    elif seed_commitment(seed) != split.get("seed_sha256"):
        raise UsageError("--seed is not this private split's seed: its sha256 does not match the split's commitment.")
    drawn: dict[str, Family] = {}
    for name in names:
        drawn[name] = drawn_family(get_family(name), seed, drawn, questions)
    return drawn
