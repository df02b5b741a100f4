"""The declarative definition of a problem family, and its exact answer.

A family states its problem as sympy equations (sympy solves them for the asked quantity once),
or states the answer directly as a closed-form expression. With a variant's constants
substituted, the answer is a function of the driven parameter p of one of three kinds:

- rational (a ratio of polynomials with rational coefficients: every canonical family): its
  integer coefficients are evaluated in exact rational arithmetic at the rendered p, and the
  ground truth is that exact value correctly rounded (int / int rounds correctly);
- algebraic (roots, rational powers) or transcendental (exp, log, trigonometric, ...): the value
  is certified in ball arithmetic (`mathbode.builder.families.certify`) until it provably rounds to one
  float64.

Either way the ground truth is the exact answer to the printed question, correctly rounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import cached_property
from typing import Mapping, Protocol

import sympy as sp

from .certify import CertificationError, ClosedForm, answer_kind
from .draws import Draw
from .roots import ROOT_RULES, RootRuleError, select_root


class FamilyDefinitionError(ValueError):
    """A family whose definition cannot give an answer (said with the family's name)."""


__all__ = [
    "ROOT_RULES",
    "Answer",
    "CertificationError",
    "Draw",
    "Family",
    "FamilyDefinitionError",
    "RationalFunction",
    "RootRuleError",
    "Variant",
]


@dataclass(frozen=True)
class Variant:
    """One question of a family: its constants (exact decimals, as written in the prompt)."""

    constants: Mapping[str, str]

    def exact(self) -> dict[str, sp.Rational]:
        # Through the text: a constant given as the float 0.1 means the 0.1 the prompt prints, not
        # the binary fraction nearest to it.
        return {name: sp.Rational(str(value)) for name, value in self.constants.items()}


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

    def truncated(self, p: Fraction, decimals: int) -> int:
        """The value at p times 10**decimals, truncated toward zero (exact)."""
        top, bottom = self.exact_parts(p)
        if bottom < 0:
            top, bottom = -top, -bottom
        scaled = abs(top) * 10**decimals // bottom
        return -scaled if top < 0 else scaled

    kind = "rational"


class Answer(Protocol):
    """One question's exact answer as a function of the rendered p (a `RationalFunction` or a
    certified `ClosedForm`)."""

    kind: str

    def float_at(self, p: Fraction) -> float:
        """The exact value at p, correctly rounded to float64."""
        ...

    def truncated(self, p: Fraction, decimals: int) -> int:
        """The exact value at p times 10**decimals, truncated toward zero."""
        ...


@dataclass(frozen=True, kw_only=True)
class Family:
    """A parametric word-problem family: small declarative data.

    State the problem as `equations` in `unknowns` (the first unknown is the asked quantity), or
    give the answer directly as `answer`, a closed-form expression in the parameter and the
    constants. Every number in either is exact (integers, `sp.Rational`, the constants, which
    are decimal strings); `mathbode family check` proves the rest.
    """

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
    unknowns: tuple[sp.Symbol, ...] = ()
    #: The problem, as sympy equations in the parameter, the unknowns and the named constants.
    equations: tuple[sp.Eq, ...] = ()
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
    #: The answer as a closed-form expression (instead of `equations` and `unknowns`).
    answer: sp.Expr | None = None
    #: With several solutions: which one is asked (one of `ROOT_RULES`), proven over the p range.
    root: str | None = None
    #: The content hash of the family's rows at each released version ("1.0.0" -> "sha256:...");
    #: the family check refuses rows that changed without a version change.
    pins: Mapping[str, str] = field(default_factory=dict)
    #: The installed package that defines the family ("acme-families 1.2.0"); None: built in.
    origin: str | None = None
    #: How a fresh split draws each constant (`mathbode-build --seed`): constant -> `Draw`. A
    #: family without draws keeps out of fresh splits.
    draws: Mapping[str, "Draw"] = field(default_factory=dict)
    # Not an init field: `dataclasses.replace(family, variants=...)` (a fresh split, a plugin's namespace)
    # then starts with an empty cache instead of the first family's answers.
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    # -- the numbers of the drive, exact ----------------------------------------------------
    @property
    def p_bounds(self) -> tuple[Decimal, Decimal]:
        return Decimal(str(self.p_range[0])), Decimal(str(self.p_range[1]))

    @property
    def p_center(self) -> Decimal:
        return Decimal(str(self.p0))

    @property
    def eps(self) -> Decimal:
        if self.epsilon is not None:
            return Decimal(str(self.epsilon))
        lo, hi = self.p_bounds
        return (hi - lo) / 2 / 10

    # -- the answer --------------------------------------------------------------------------
    @cached_property
    def solutions(self) -> tuple[sp.Expr, ...]:
        """Every solution for the asked quantity, in the parameter and the constants."""
        if self.answer is not None:
            return (sp.sympify(self.answer),)
        if not self.equations or not self.unknowns:
            raise FamilyDefinitionError(f"family {self.name!r}: give `answer`, or `equations` and `unknowns`")
        found = sp.solve(list(self.equations), list(self.unknowns), dict=True)
        return tuple(dict.fromkeys(s[self.unknowns[0]] for s in found if self.unknowns[0] in s))

    @cached_property
    def solution(self) -> sp.Expr:
        """The asked unknown as an expression of the parameter and the constants (sympy's solve),
        when there is exactly one; with a root rule, see `question_answer`."""
        if len(self.solutions) != 1:
            rule = f" ({self.root} root of each question)" if self.root else ""
            raise FamilyDefinitionError(
                f"family {self.name!r}: expected one solution, sympy found {len(self.solutions)}{rule}"
            )
        return self.solutions[0]

    @property
    def formula(self) -> str:
        """The answer's formula, as the card and `mathbode families` show it."""
        if len(self.solutions) == 1:
            return str(self.solutions[0])
        return f"the {self.root} of " + ", ".join(map(str, self.solutions))

    def question_answer(self, question_id: int) -> sp.Expr:
        """The answer of question `question_id`: an expression in the parameter only."""
        constants = self.variants[question_id].exact()
        if not self.solutions:
            raise FamilyDefinitionError(
                f"family {self.name!r}: sympy finds no solution for {self.unknowns[0]}; check the equations"
            )
        if len(self.solutions) == 1:
            return self.solution.subs(constants)
        return select_root(self, [s.subs(constants) for s in self.solutions], question_id)

    @property
    def kind(self) -> str:
        """rational, algebraic or transcendental: the most general answer kind of its questions."""
        order = ("rational", "algebraic", "transcendental")
        return max((answer_kind(self.question_answer(q)) for q in range(len(self.variants))), key=order.index)

    def answer_function(self, question_id: int) -> Answer:
        """The exact answer of question `question_id` as a function of p."""
        if question_id not in self._cache:
            expr = self.question_answer(question_id)
            stray = expr.free_symbols - {self.parameter}
            if stray:
                names = ", ".join(sorted(map(str, stray)))
                raise FamilyDefinitionError(
                    f"family {self.name!r}, question {question_id}: the answer depends on {names}, "
                    "which is neither the parameter nor a constant of the variant"
                )
            if answer_kind(expr) == "rational":
                self._cache[question_id] = RationalFunction.from_sympy(expr, self.parameter)
            else:
                self._cache[question_id] = ClosedForm(expr, self.parameter)
        return self._cache[question_id]

    def render(self, question_id: int, p_text: str) -> str:
        """The question text for one rendered parameter value."""
        return self.template.format(p=p_text, **self.variants[question_id].constants)
