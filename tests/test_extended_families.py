"""MathBode-Extended: sixteen families, their certified truth against an independent 60-digit
evaluation on every row, rounding-boundary cases, pins, and the family check."""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest
import sympy as sp

from mathbode.builder.families import EXTENDED
from mathbode.builder.families import FAMILIES as CANONICAL
from mathbode.builder.families.certify import ClosedForm
from mathbode.builder.families.check import check_family
from mathbode.builder.families.extended import AREAS, FAMILIES
from mathbode.builder.rows import family_table
from mathbode.core.hashing import content_hash
from mathbode.schema.layout import layout

NAMES = [f.name for f in FAMILIES]
ANSWER_DECIMALS = 6
#: Digits of the independent evaluation (mpmath, not the builder's python-flint).
DIGITS = 60


@pytest.fixture(scope="module")
def tables() -> dict:
    built, seconds = {}, {}
    for family in FAMILIES:
        start = time.perf_counter()
        built[family.name] = family_table(family)
        seconds[family.name] = time.perf_counter() - start
    print("\nfamily_table seconds: " + ", ".join(f"{n} {s:.2f}" for n, s in seconds.items()))
    return built


def _family(name: str):
    return next(f for f in FAMILIES if f.name == name)


# -- (a) the set of families -----------------------------------------------------------------
def test_sixteen_families_with_unique_valid_names_outside_the_canonical_five():
    assert len(FAMILIES) == 16
    assert len(set(NAMES)) == 16
    assert not set(NAMES) & set(CANONICAL)
    pattern = layout().family_name_pattern
    assert all(re.match(pattern, n) and re.match(r"^[a-z][a-z0-9_]{0,47}$", n) for n in NAMES)


def test_areas_and_answer_kinds_are_spread():
    assert list(AREAS) == NAMES  # FAMILIES is grouped by area in the order of AREAS
    per_area = Counter(AREAS.values())
    assert set(per_area) == {"algebra", "geometry", "finance", "physics", "chemistry", "probability", "calculus"}
    assert sum(1 for n in per_area.values() if n >= 2) >= 4
    kinds = Counter(f.kind for f in FAMILIES)
    assert kinds["rational"] <= 3
    assert kinds["algebraic"] >= 3 and kinds["transcendental"] >= 8
    used = set()
    for f in FAMILIES:
        for node in sp.preorder_traversal(f.question_answer(0)):
            if isinstance(node, sp.Function):
                used.add(type(node).__name__)
            if node.is_Pow and node.args[1].is_Rational and not node.args[1].is_Integer:
                used.add(f"power {node.args[1]}" if node.args[1] != sp.Rational(1, 2) else "sqrt")
            if isinstance(node, sp.exp) and f.parameter in node.free_symbols:
                used.add("driven exponent")
    assert {"sqrt", "exp", "log", "sin", "atan", "erf", "driven exponent"} <= used
    assert any(u.startswith("power") for u in used)


@pytest.mark.parametrize("name", NAMES)
def test_each_family_has_9408_rows_with_the_layouts_ten_columns(tables, name):
    lay = layout()
    table = tables[name]
    assert table.num_rows == 9_408 == lay.rows_per_family
    assert tuple(table.column_names) == lay.column_names and len(lay.column_names) == 10
    assert table.schema == lay.arrow_schema
    assert set(table.column("family").to_pylist()) == {name}
    assert Counter(table.column("question_id").to_pylist()) == {0: 3_136, 1: 3_136, 2: 3_136}


# -- (b) certified truth against an independent 60-digit evaluation ------------------------------
def _rendered(family, p_value: float) -> Decimal:
    # The shortest repr of the float is the rendered text (at most `decimals` decimals).
    text = Decimal(repr(p_value))
    assert text == text.quantize(Decimal(1).scaleb(-family.decimals))
    return text


def _truncated_60(expr, p, p_exact: sp.Rational, value: mpmath.mpf) -> int:
    """The answer times 10**6, truncated toward zero, from the 60-digit value; a value within 1e-40
    of a six-decimal boundary is decided by sympy's exact arithmetic (it is then exactly that number)."""
    scaled = value * 10**ANSWER_DECIMALS
    nearest = int(mpmath.nint(scaled))
    if abs(scaled - nearest) < mpmath.mpf(10) ** -40:
        exact = sp.simplify(expr.subs(p, p_exact) - sp.Rational(nearest, 10**ANSWER_DECIMALS))
        assert exact == 0, f"a value within 1e-40 of {nearest}e-6 that sympy cannot prove equal to it"
        return nearest
    return int(scaled)  # int() of an mpf truncates toward zero


@pytest.mark.parametrize("name", NAMES)
def test_certified_truth_equals_an_independent_60_digit_evaluation_on_every_row(tables, name):
    family = _family(name)
    table = tables[name]
    p = family.parameter
    questions = table.column("question_id").to_pylist()
    p_values = table.column("p_value").to_pylist()
    truths = table.column("ground_truth").to_pylist()
    prompts = table.column("prompt").to_pylist()
    with mpmath.workdps(DIGITS):
        for q in range(3):
            expr = family.question_answer(q)
            evaluate = sp.lambdify(p, expr, "mpmath")
            answer = family.answer_function(q)
            expected: dict[float, float] = {}
            for row in (i for i, qq in enumerate(questions) if qq == q):
                p_value = p_values[row]
                if p_value not in expected:
                    text = _rendered(family, p_value)
                    assert f"{text:f}" in prompts[row]
                    value = evaluate(mpmath.mpf(str(text)))
                    assert isinstance(value, mpmath.mpf), f"{name} q{q} at p = {text}: {value!r} is not real"
                    expected[p_value] = float(mpmath.nstr(value, DIGITS))  # float(str) rounds correctly
                    p_exact = sp.Rational(str(text))
                    assert answer.truncated(Fraction(text), ANSWER_DECIMALS) == _truncated_60(
                        expr, p, p_exact, value
                    ), f"{name} q{q}: six decimals at p = {text}"
                assert truths[row] == expected[p_value], f"{name} q{q} row {row} at p = {p_value!r}"
            assert len(expected) > 50  # every sweep's rendered values, not a handful


# -- (c) hand-made cases next to a rounding boundary -----------------------------------------------
x = sp.Symbol("x")
#: The midpoint between 1 and the next float64: exactly halfway, it rounds to even (1.0).
MIDPOINT = Fraction(1) + Fraction(1, 2**53)
ONE_UP = math.nextafter(1.0, 2.0)


def test_exactly_representable_values_are_exact():
    root = ClosedForm(sp.sqrt(x), x)
    assert root.float_at(Fraction(9, 4)) == 1.5
    assert root.float_at(Fraction("6.25")) == 2.5
    # 2.5 sits on a six-decimal truncation boundary: the ball never separates, sympy's exact value decides.
    assert root.truncated(Fraction("6.25"), 6) == 2_500_000
    assert root.truncated(Fraction("1.5625"), 6) == 1_250_000
    assert ClosedForm(-sp.sqrt(x), x).truncated(Fraction("6.25"), 6) == -2_500_000
    # A logarithm that is a whole number only sympy's simplification shows.
    ratio = ClosedForm(sp.log(x) / sp.log(2), x)
    assert ratio.float_at(Fraction(8)) == 3.0 and ratio.truncated(Fraction(8), 6) == 3_000_000
    assert ClosedForm(-sp.log(x, 10), x).truncated(Fraction(1, 1000), 6) == 3_000_000
    assert ClosedForm(sp.atan(x) * 180 / sp.pi, x).truncated(Fraction(1), 6) == 45_000_000


def test_a_value_exactly_on_a_float64_midpoint_rounds_to_even():
    on_midpoint = ClosedForm(sp.sqrt(x**2), x)  # not simplified to x without assumptions: certified
    assert on_midpoint.float_at(MIDPOINT) == 1.0
    above = MIDPOINT + Fraction(1, 2**52)  # the midpoint between 1 + 2**-52 and 1 + 2**-51: even is 1 + 2**-51
    assert on_midpoint.float_at(above) == math.nextafter(ONE_UP, 2.0)


@pytest.mark.parametrize(
    "expr, expected",
    [
        (x + sp.sqrt(2) / 10**21, ONE_UP),  # 1.4e-21 above the midpoint
        (x - sp.sqrt(2) / 10**21, 1.0),  # 1.4e-21 below
        (sp.sqrt(x**2 + sp.Rational(1, 10**40)), ONE_UP),  # 5e-41 above: a hypotenuse with a tiny leg
        (sp.sqrt(x**2 - sp.Rational(1, 10**40)), 1.0),
        (x + sp.exp(-100), ONE_UP),  # 3.7e-44 above
        (x - sp.log(1 + sp.Rational(1, 10**30)), 1.0),  # 1e-30 below
    ],
    ids=["sqrt-above", "sqrt-below", "hypot-above", "hypot-below", "exp-above", "log-below"],
)
def test_values_within_1e20_of_a_float64_midpoint_round_the_right_way(expr, expected):
    answer = ClosedForm(expr, x)
    assert answer.float_at(MIDPOINT) == expected
    with mpmath.workdps(80):  # the same decision at 80 digits
        value = sp.lambdify(x, expr, "mpmath")(mpmath.mpf(MIDPOINT.numerator) / MIDPOINT.denominator)
        assert float(mpmath.nstr(value, 80)) == expected
        assert abs(value - mpmath.mpf(MIDPOINT.numerator) / MIDPOINT.denominator) < mpmath.mpf(10) ** -20


@pytest.mark.parametrize(
    "expr, expected",
    [
        (sp.Rational(5, 2) - sp.sqrt(2) / 10**25, 2_499_999),
        (sp.Rational(5, 2) + sp.sqrt(2) / 10**25, 2_500_000),
        (-sp.Rational(5, 2) - sp.sqrt(2) / 10**25, -2_500_000),  # toward zero
        (-sp.Rational(5, 2) + sp.sqrt(2) / 10**25, -2_499_999),
        (-sp.sqrt(2) / 10**25, 0),  # -1.4e-25: every digit 0 (the ball is below 0, both ends truncate to 0)
    ],
)
def test_truncation_next_to_a_six_decimal_boundary(expr, expected):
    answer = ClosedForm(expr, x)  # a constant answer: p does not matter
    assert answer.truncated(Fraction(1), 6) == expected


# -- (d) pins ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_every_family_pins_its_rows_content_hash(tables, name):
    family = _family(name)
    assert family.version in family.pins
    assert family.pins[family.version] == content_hash(tables[name])


# -- (e) the family check ------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_every_family_passes_the_family_check_without_warnings(tables, name):
    report = check_family(_family(name), tables[name])
    assert report.passed, report.format_text()
    assert not report.warnings, report.format_text()  # the truth's own distortion is under 10 % at amplitude 2.5
    assert report.facts["content hash"] == _family(name).pins["1.0.0"]


def test_the_registry_serves_mathbode_extended_in_its_order():
    assert list(EXTENDED) == NAMES
    assert all(EXTENDED[n] is f for n, f in zip(NAMES, FAMILIES, strict=True))
