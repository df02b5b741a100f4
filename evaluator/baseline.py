"""The symbolic baseline: the exact answer in the answer format, truncated to six decimals.

It calibrates the instrument: run through the same parser and fits, it must score MB-Core ~ 1
with unity gain and zero phase error at every frequency.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Iterator

from mathbode.builder import get_family

from .parsing import END, START, truncate_fraction
from .selection import key_fields

MODEL = "symbolic-baseline"


def exact_answer(row: dict) -> Fraction:
    """The exact answer of a row, from its family's solution at the rendered p (not the rounded float)."""
    family = get_family(row["family"])
    p = Decimal(repr(row["p_value"]))  # the shortest repr of a 3-decimal float is the rendered text
    return family.answer_function(row["question_id"])(Fraction(p))


def baseline_lines(rows: list[dict]) -> Iterator[dict]:
    for row in rows:
        yield {**key_fields(row), "response": f"{START} {truncate_fraction(exact_answer(row))} {END}", "model": MODEL}
