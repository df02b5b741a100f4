"""Certified values of a closed-form answer: correctly rounded floats and truncated decimals, proven.

An answer that is not a rational function of p (a square root, a logarithm, an exponential with
a driven exponent, a sine) is evaluated in ball arithmetic (Arb, through python-flint): every
operation returns a ball that provably contains the exact value. The ball is tightened by raising
the working precision until both of its ends round to the same float64 (round-to-nearest is
monotone, so the exact value inside rounds there too), or both ends truncate to the same six-
decimal text. A ball that never separates (the exact value sits on a rounding boundary, as 2.5
sits on a six-decimal truncation boundary) is settled by sympy's exact value at the rendered p
when that value is rational; otherwise the answer is refused, never guessed.

The same balls prove facts over a whole range of p (`prove_over`): a ball for an interval of p
contains every value the answer takes there, so a finite ball proves no pole, no branch cut and
no complex value on it; a ball that is not finite is split in two until each part is decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import sympy as sp
from flint import arb, ctx, fmpq

#: Working precisions tried in turn, in bits (float64 has 53).
PRECISIONS = (80, 160, 320, 640, 1280, 2560)

Ball = Callable[[], arb]


class CertificationError(ValueError):
    """An answer whose value cannot be certified (undefined there, or unsupported)."""


def _rational(value: sp.Rational) -> Ball:
    q = fmpq(int(value.p), int(value.q))
    return lambda: arb(q)  # rounded at the precision current at the call, not at compile time


_UNARY: dict[type, Callable[[arb], arb]] = {
    sp.exp: arb.exp,
    sp.log: arb.log,
    sp.sin: arb.sin,
    sp.cos: arb.cos,
    sp.tan: arb.tan,
    sp.cot: arb.cot,
    sp.sec: arb.sec,
    sp.csc: arb.csc,
    sp.asin: arb.asin,
    sp.acos: arb.acos,
    sp.atan: arb.atan,
    sp.sinh: arb.sinh,
    sp.cosh: arb.cosh,
    sp.tanh: arb.tanh,
    sp.asinh: arb.asinh,
    sp.acosh: arb.acosh,
    sp.atanh: arb.atanh,
    sp.erf: arb.erf,
    sp.erfc: arb.erfc,
    sp.gamma: arb.gamma,
    sp.Abs: abs,
}
_CONSTANTS: dict[object, Callable[[], arb]] = {
    sp.pi: arb.pi,
    sp.E: arb.const_e,
    sp.EulerGamma: arb.const_euler,
}
#: What an answer may be built of, for messages.
SUPPORTED = "+, -, *, /, powers and roots, " + ", ".join(sorted(f.__name__ for f in _UNARY)) + ", pi, E, EulerGamma"


def compile_ball(expr: sp.Expr, p: sp.Symbol) -> Callable[[arb], arb]:
    """`expr` (in p and exact numbers only) as a function from a ball of p to a ball of its value."""
    return _compile(sp.sympify(expr), p)


def _compile(e: sp.Expr, p: sp.Symbol) -> Callable[[arb], arb]:
    if e == p:
        return lambda x: x
    if e.is_Rational:
        ball = _rational(e)
        return lambda _x: ball()
    if e in _CONSTANTS:
        const = _CONSTANTS[e]
        return lambda _x: const()
    if e.is_Float:
        raise CertificationError(
            f"the answer holds the float {e}: write every number exactly "
            "(a Rational, or a constant given as a decimal string)"
        )
    if e.is_Symbol:
        raise CertificationError(
            f"the answer depends on {e}, which is neither the parameter nor a constant with a value"
        )
    if e.is_Add or e.is_Mul:
        parts = [_compile(a, p) for a in e.args]
        if e.is_Add:
            return lambda x: _fold(parts, x, arb.__add__)
        return lambda x: _fold(parts, x, arb.__mul__)
    if e.is_Pow:
        base, exponent = e.args
        b = _compile(base, p)
        if exponent.is_Integer:
            n = int(exponent)
            return lambda x: b(x) ** n
        if exponent == sp.Rational(1, 2):
            return lambda x: b(x).sqrt()
        if exponent == sp.Rational(-1, 2):
            return lambda x: b(x).rsqrt()
        if exponent.is_Rational:
            num, den = int(exponent.p), int(exponent.q)
            return lambda x: b(x).root(den) ** num  # real root of a positive base; nan (refused) below 0
        power = _compile(exponent, p)
        return lambda x: b(x) ** power(x)
    if type(e) in _UNARY and len(e.args) == 1:
        f, inner = _UNARY[type(e)], _compile(e.args[0], p)
        return lambda x: f(inner(x))
    raise CertificationError(
        f"the answer uses {type(e).__name__}, which MathBode cannot certify; it may use {SUPPORTED}"
    )


def _fold(parts: list[Callable[[arb], arb]], x: arb, op: Callable[[arb, arb], arb]) -> arb:
    out = parts[0](x)
    for part in parts[1:]:
        out = op(out, part(x))
    return out


def _fraction(point: arb) -> Fraction:
    """An exact point of a ball (its ends are exact binary numbers) as a Fraction."""
    man, exp = (int(v) for v in point.man_exp())
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def _ends(ball: arb) -> tuple[Fraction, Fraction] | None:
    if not ball.is_finite():
        return None
    return _fraction(ball.lower()), _fraction(ball.upper())


def _float(x: Fraction) -> float:
    try:
        return float(x)  # Fraction -> float is int / int: correctly rounded
    except OverflowError:
        return math.inf if x > 0 else -math.inf


@dataclass(frozen=True)
class ClosedForm:
    """A closed-form answer in p (constants substituted), certified at each rendered p."""

    expr: sp.Expr
    parameter: sp.Symbol

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ball", compile_ball(self.expr, self.parameter))

    @property
    def kind(self) -> str:
        return answer_kind(self.expr)

    def ball(self, p: arb) -> arb:
        return self._ball(p)  # type: ignore[attr-defined]

    def _at(self, p: Fraction, decide: Callable[[Fraction, Fraction], object | None], what: str) -> object:
        point = fmpq(p.numerator, p.denominator)
        saved = ctx.prec
        try:
            for prec in PRECISIONS:
                ctx.prec = prec
                ends = _ends(self.ball(arb(point)))
                if ends is not None and (found := decide(*ends)) is not None:
                    return found
                # A value sympy evaluates to a rational by itself (sqrt(25/4), exp(0)) sits on a
                # boundary forever: settle it early, without simplifying.
                if prec == PRECISIONS[1] and (exact := self.exact(p, simplify=False)) is not None:
                    if (settled := decide(exact, exact)) is not None:
                        return settled
            # Undecided at every precision: only an exact value on the boundary does that. Ask sympy
            # to prove it rational (log(8)/log(2) -> 3); this can be slow, so it comes last.
            exact = self.exact(p)
            if exact is not None and (settled := decide(exact, exact)) is not None:
                return settled
            finite = _ends(self.ball(arb(point))) is not None
        finally:
            ctx.prec = saved
        if not finite:
            raise CertificationError(f"the answer is not a finite real number at p = {p} ({self._where(p)})")
        raise CertificationError(
            f"the {what} of the answer at p = {p} could not be certified at {PRECISIONS[-1]} bits "
            "(it sits on a rounding boundary and sympy cannot simplify it to a rational): simplify the answer"
        )

    def _where(self, p: Fraction) -> str:
        value = self.expr.subs(self.parameter, sp.Rational(p.numerator, p.denominator))
        return f"exactly {value}"

    def exact(self, p: Fraction, simplify: bool = True) -> Fraction | None:
        """The exact value at p when sympy proves it rational: by evaluation alone (sqrt of a
        perfect square, exp(0)), or with `simplify` by exact rewriting (log(8)/log(2) -> 3),
        never by a numeric guess."""
        value = self.expr.subs(self.parameter, sp.Rational(p.numerator, p.denominator))
        if simplify and not value.is_Rational and value.is_number:
            value = sp.simplify(value)
        return Fraction(int(value.p), int(value.q)) if value.is_Rational else None

    def float_at(self, p: Fraction) -> float:
        """The exact value at p, correctly rounded to float64 (certified)."""

        def same(lo: Fraction, hi: Fraction) -> float | None:
            a, b = _float(lo), _float(hi)
            return a if a == b and math.isfinite(a) else None

        return self._at(p, same, "rounding to float64")  # type: ignore[return-value]

    def truncated(self, p: Fraction, decimals: int) -> int:
        """The exact value at p times 10**decimals, truncated toward zero (certified): the answer
        format's digits."""
        scale = 10**decimals

        def same(lo: Fraction, hi: Fraction) -> int | None:
            a, b = math.trunc(lo * scale), math.trunc(hi * scale)
            # Truncation is monotone, but lo < 0 < hi truncates both to 0 while the value may be -0.x.
            return a if a == b and (lo >= 0 or hi <= 0) else None

        return self._at(p, same, f"truncation to {decimals} decimals")  # type: ignore[return-value]


def answer_kind(expr: sp.Expr) -> str:
    """rational, algebraic (roots and rational powers) or transcendental."""
    if any(isinstance(node, (sp.Function, sp.NumberSymbol)) for node in sp.preorder_traversal(expr)):
        return "transcendental"
    for node in sp.preorder_traversal(expr):
        if node.is_Pow and not node.args[1].is_Integer:
            return "transcendental" if not node.args[1].is_Rational else "algebraic"
    return "rational"


# -- facts over a range of p ----------------------------------------------------------------
#: How many times a range is halved at most to decide a fact on it (2**14 pieces).
MAX_DEPTH = 14


@dataclass(frozen=True)
class RangeProof:
    """The outcome of `prove_over`: proven, or the piece of the range that could not be decided."""

    proven: bool
    #: Smallest and largest value the balls allow over the range (when proven finite).
    low: float | None = None
    high: float | None = None
    #: Where the proof failed: (lo, hi) of the undecided piece.
    failed_at: tuple[Fraction, Fraction] | None = None


def prove_over(
    ball_of: Callable[[arb], arb],
    lo: Fraction,
    hi: Fraction,
    holds: Callable[[arb], bool | None] | None = None,
    prec: int = 80,
) -> RangeProof:
    """Prove that the answer is finite and real on all of [lo, hi] (and, with `holds`, that
    `holds(ball)` is True on every piece; False on a piece disproves it there).

    The range is split in halves where a piece's ball is not finite or `holds` is undecided
    (None), at most `MAX_DEPTH` times; a piece still undecided then is where it fails.
    """
    saved = ctx.prec
    ctx.prec = prec
    low, high = math.inf, -math.inf
    try:
        pending = [(lo, hi, 0)]
        while pending:
            a, b, depth = pending.pop()
            ball = ball_of(_closed(a, b))
            verdict = holds(ball) if holds and ball.is_finite() else None
            if ball.is_finite() and (holds is None or verdict is True):
                ends = _ends(ball)
                assert ends is not None
                low, high = min(low, _float(ends[0])), max(high, _float(ends[1]))
                continue
            if verdict is False or depth >= MAX_DEPTH:
                return RangeProof(False, failed_at=(a, b))
            mid = (a + b) / 2
            pending += [(mid, b, depth + 1), (a, mid, depth + 1)]
        return RangeProof(True, low, high)
    finally:
        ctx.prec = saved


def _closed(a: Fraction, b: Fraction) -> arb:
    """A ball containing [a, b] (its midpoint and half-width, rounded outward by Arb)."""
    mid, half = (a + b) / 2, (b - a) / 2
    return arb(fmpq(mid.numerator, mid.denominator)) + arb(0, arb(fmpq(half.numerator, half.denominator)))
