"""Certified truth: the float64 a ball provably rounds to, the six decimals it provably truncates to.

Hand-made cases sit exactly on, or within far less than a float64's precision of, a rounding
boundary: a float evaluation gets them wrong, the certificate must not. Each expected value is
derived here by exact reasoning (stated next to it), not by another evaluator.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from mathbode.builder.families.certify import CertificationError, ClosedForm, answer_kind, compile_ball, prove_over

p = sp.Symbol("p")
ULP1 = Fraction(1, 2**52)  # the gap between 1.0 and the next float64
TIE = 1 + ULP1 / 2  # halfway between 1.0 and 1 + 2**-52: round-half-even gives 1.0


def test_an_exact_square_root_is_exact():
    answer = ClosedForm(sp.sqrt(p), p)
    assert answer.float_at(Fraction(25, 4)) == 2.5
    assert answer.truncated(Fraction(25, 4), 6) == 2_500_000  # exactly 2.5, not 2.499999


def test_a_value_on_a_float64_tie_is_settled_exactly_by_round_half_even():
    # sqrt(p**2) at a rational p is exactly p: sympy proves it; the ball straddles the tie forever.
    answer = ClosedForm(sp.sqrt(p**2 + 0 * p), p)
    assert answer.kind == "algebraic"
    assert answer.float_at(TIE) == 1.0
    assert answer.float_at(1 + ULP1 + ULP1 / 2) == float(1 + 2 * ULP1)  # odd neighbour: the tie goes up


@pytest.mark.parametrize("sign, expected", [(1, 1 + 2**-52), (-1, 1.0)])
def test_a_value_within_2_to_the_minus_120_of_a_tie_rounds_the_right_way(sign, expected):
    # 1 + 2**-53 + sign * sqrt(2) * 2**-120: above the tie rounds up, below it rounds down. A float
    # evaluation gives 1.0 both times; the ball needs about 125 bits to tell.
    tiny = sign * sp.sqrt(2) * sp.Rational(1, 2**120)
    answer = ClosedForm(p + sp.Rational(1, 2**53) + tiny, p)
    assert answer.float_at(Fraction(1)) == expected


@pytest.mark.parametrize(
    "offset, expected",
    [(Fraction(1, 10**30), 2_500_000), (-Fraction(1, 10**30), 2_499_999), (Fraction(0), 2_500_000)],
)
def test_six_decimals_next_to_a_truncation_boundary(offset, expected):
    # sqrt(6.25 +- 1e-30) = 2.5 +- 2e-31: truncated to six decimals, 2.500000 or 2.499999.
    assert ClosedForm(sp.sqrt(p), p).truncated(Fraction(625, 100) + offset, 6) == expected


def test_negative_values_truncate_toward_zero():
    assert ClosedForm(-sp.sqrt(p), p).truncated(Fraction(2), 6) == -1_414_213  # -1.41421356...
    assert ClosedForm(sp.sqrt(p) - 1, p).truncated(Fraction(1, 4), 6) == -500_000  # exactly -0.5


def test_a_value_that_simplifies_to_a_rational_is_exact():
    # log(8p)/log(2) at p = 1 is 3 exactly: sympy's simplification proves it, no digits are trusted.
    answer = ClosedForm(sp.log(8 * p) / sp.log(2), p)
    assert answer.kind == "transcendental"
    assert (answer.float_at(Fraction(1)), answer.truncated(Fraction(1), 6)) == (3.0, 3_000_000)


@pytest.mark.parametrize(
    "expr, at, message",
    [
        (sp.sqrt(p), Fraction(-1), "not a finite real number at p = -1"),
        (1 / (p - 2), Fraction(2), "not a finite real number at p = 2"),
        (sp.log(p), Fraction(0), "not a finite real number at p = 0"),
    ],
)
def test_an_undefined_value_is_refused_not_guessed(expr, at, message):
    with pytest.raises(CertificationError, match=message):
        ClosedForm(expr, p).float_at(at)


@pytest.mark.parametrize(
    "expr, message",
    [
        (sp.Float("0.1") * p, "holds the float 0.1"),
        (sp.zeta(p), "uses zeta, which MathBode cannot certify"),
        (p + sp.Symbol("k"), "depends on k"),
    ],
)
def test_what_cannot_be_certified_is_said(expr, message):
    with pytest.raises(CertificationError, match=message):
        compile_ball(expr, p)


def test_answer_kinds():
    assert answer_kind(p**2 / (p + 1)) == "rational"
    assert answer_kind(sp.sqrt(p) + p ** sp.Rational(2, 3)) == "algebraic"
    assert answer_kind(sp.exp(p)) == answer_kind(p * sp.pi) == answer_kind(2**p) == "transcendental"


def test_range_proofs_find_poles_and_branch_points_and_prove_the_rest():
    assert not prove_over(compile_ball(1 / (p - 3), p), Fraction(1), Fraction(9)).proven
    failed = prove_over(compile_ball(sp.sqrt(p - 2), p), Fraction(1), Fraction(9))
    assert not failed.proven and failed.failed_at is not None and failed.failed_at[0] < 2
    proof = prove_over(compile_ball(sp.sqrt(p), p), Fraction(1), Fraction(9))
    assert proof.proven and proof.low <= 1.0 and proof.high >= 3.0  # the balls enclose sqrt on [1, 9]
    # A pole just outside the range does not stop the proof.
    assert prove_over(compile_ball(1 / (p - 9), p), Fraction(1), Fraction(8999, 1000)).proven


def test_independent_60_digit_evaluation_agrees_on_a_grid():
    import mpmath

    expr = sp.sqrt(p**2 + 3) * sp.exp(-p / 7) + sp.atan(p) - sp.log(p, 10)
    answer = ClosedForm(expr, p)
    f = sp.lambdify(p, expr, "mpmath")
    with mpmath.workdps(60):
        for k in range(1, 400):
            at = Fraction(k, 37)
            exact = f(mpmath.mpf(at.numerator) / at.denominator)
            assert answer.float_at(at) == float(mpmath.nstr(exact, 60)), at
