"""The declarative definition of a problem family, and its exact answer.

A family states its problem as sympy equations; sympy solves them for the asked quantity once,
and the solution, with a variant's constants substituted, is a rational function of the driven
parameter p. Its integer coefficients are evaluated in exact rational arithmetic at the
rendered p, so the ground truth is the exact answer to the printed question, correctly rounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import cached_property
from typing import Mapping

import sympy as sp


@dataclass(frozen=True)
class Variant:
    """One question of a family: its constants (exact decimals, as written in the prompt)."""

    constants: Mapping[str, str]

    def exact(self) -> dict[str, sp.Rational]:
        return {name: sp.Rational(value) for name, value in self.constants.items()}


@dataclass(frozen=True)
class RationalFunction:
    """scale * N(p) / D(p) with integer coefficients (highest power first) and a rational scale.

    Integer coefficients let the value at p = n/d be computed in plain integer arithmetic
    (the polynomials homogenized in n and d), and Python's int / int true division is correctly rounded, so no
    Fraction normalization is needed on the hot path.
    """

    numerator: tuple[int, ...]
    denominator: tuple[int, ...]
    scale: Fraction

    @classmethod
    def from_sympy(cls, expr: sp.Expr, p: sp.Symbol) -> "RationalFunction":
        num, den = sp.fraction(sp.cancel(sp.together(expr)))
        num_c, num_scale = cls._integer_coeffs(num, p)
        den_c, den_scale = cls._integer_coeffs(den, p)
        return cls(num_c, den_c, num_scale / den_scale)

    @staticmethod
    def _integer_coeffs(poly: sp.Expr, p: sp.Symbol) -> tuple[tuple[int, ...], Fraction]:
        coeffs = [Fraction(int(c.p), int(c.q)) for c in sp.Poly(poly, p).all_coeffs()]
        common = math.lcm(*(c.denominator for c in coeffs))
        return tuple(int(c * common) for c in coeffs), Fraction(1, common)

    def exact_parts(self, p: Fraction) -> tuple[int, int]:
        """(top, bottom) integers with value(p) = top / bottom exactly."""
        n, d = p.numerator, p.denominator
        top = bottom = 0
        deg_top, deg_bottom = len(self.numerator) - 1, len(self.denominator) - 1
        for i, c in enumerate(self.numerator):
            top += c * n ** (deg_top - i) * d**i
        for i, c in enumerate(self.denominator):
            bottom += c * n ** (deg_bottom - i) * d**i
        # N(n/d) = top / d^deg_top and D(n/d) = bottom / d^deg_bottom.
        top *= self.scale.numerator * d**deg_bottom
        bottom *= self.scale.denominator * d**deg_top
        if bottom == 0:
            raise ZeroDivisionError(f"the answer has a pole at p = {p}")
        return top, bottom

    def __call__(self, p: Fraction) -> Fraction:
        top, bottom = self.exact_parts(p)
        return Fraction(top, bottom)

    def float_at(self, p: Fraction) -> float:
        """The value at p, correctly rounded to float64 (int / int rounds correctly)."""
        top, bottom = self.exact_parts(p)
        return top / bottom


@dataclass(frozen=True)
class Family:
    """A parametric word-problem family: small declarative data, no answer formula by hand."""

    #: Registry name, as in the dataset's `family` column.
    name: str
    #: Bumped whenever the family's rows change.
    version: str
    #: Human title for the dataset card.
    title: str
    #: One sentence on the problem, for the card.
    summary: str
    #: The driven parameter p (a sympy symbol used in `equations`).
    parameter: sp.Symbol
    #: What the parameter means, for the card ("the coefficient a").
    parameter_meaning: str
    #: Unknowns to solve for; the first is the asked quantity.
    unknowns: tuple[sp.Symbol, ...]
    #: The problem, as sympy equations in the parameter, the unknowns and the named constants.
    equations: tuple[sp.Eq, ...]
    #: Inclusive range p is clipped to, as exact decimals.
    p_range: tuple[str, str]
    #: Centre of the drive.
    p0: str
    #: Decimals p is rendered with in the prompt.
    decimals: int
    #: The three question variants (different constants).
    variants: tuple[Variant, ...]
    #: Prompt text with `{p}` for the parameter and `{name}` for each constant.
    template: str
    #: Drive half-amplitude at amplitude_scale 1; default 10% of the half-range.
    epsilon: str | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    # -- the numbers of the drive, exact ----------------------------------------------------
    @property
    def p_bounds(self) -> tuple[Decimal, Decimal]:
        return Decimal(self.p_range[0]), Decimal(self.p_range[1])

    @property
    def p_center(self) -> Decimal:
        return Decimal(self.p0)

    @property
    def eps(self) -> Decimal:
        if self.epsilon is not None:
            return Decimal(self.epsilon)
        lo, hi = self.p_bounds
        return (hi - lo) / 2 / 10

    # -- the answer --------------------------------------------------------------------------
    @cached_property
    def solution(self) -> sp.Expr:
        """The asked unknown as an expression of the parameter and the constants (sympy's solve)."""
        solutions = sp.solve(list(self.equations), list(self.unknowns), dict=True)
        if len(solutions) != 1:
            raise ValueError(f"family {self.name!r}: expected one solution, sympy found {len(solutions)}")
        return solutions[0][self.unknowns[0]]

    def answer_function(self, question_id: int) -> RationalFunction:
        """The exact answer of question `question_id` as a function of p."""
        if question_id not in self._cache:
            expr = self.solution.subs(self.variants[question_id].exact())
            self._cache[question_id] = RationalFunction.from_sympy(expr, self.parameter)
        return self._cache[question_id]

    def render(self, question_id: int, p_text: str) -> str:
        """The question text for one rendered parameter value."""
        return self.template.format(p=p_text, **self.variants[question_id].constants)
