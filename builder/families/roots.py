"""Which of several solutions a family asks for, proven over the whole range of p.

A quadratic has two roots; a family names the one its question means with a rule, and the rule
must single out one candidate on every p of the range, not only at the centre. Each candidate is
compiled to ball arithmetic (`certify`) and the rule is proven piece by piece over the range:
a candidate that is not real at the centre is not a root of the question; of the others exactly
one must be proven to satisfy the rule everywhere and every other proven to fail it somewhere.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Protocol

import sympy as sp
from flint import arb, ctx, fmpq

from .certify import compile_ball, prove_over

ROOT_RULES = ("positive", "negative", "largest", "smallest")


class RootRuleError(ValueError):
    """No rule, an unknown rule, or a rule that does not single out one solution."""


class AskedRoot(Protocol):
    """What a rule is proven with: the family's rule, name, driven parameter and its range.

    A `Family` is one; the rule needs only these, so this module does not import the family type
    (which calls `select_root`): the type depends on its roots, never the other way round.
    """

    @property
    def name(self) -> str: ...
    @property
    def root(self) -> str | None: ...
    @property
    def parameter(self) -> sp.Symbol: ...
    @property
    def p_range(self) -> tuple[str, str]: ...
    @property
    def p0(self) -> str: ...


def _positive(ball: arb) -> bool | None:
    return True if ball > 0 else False if ball <= 0 else None


def select_root(family: AskedRoot, candidates: list[sp.Expr], question_id: int) -> sp.Expr:
    """The candidate `family.root` names for question `question_id`, proven on all of the p range."""
    rule = family.root
    where = f"family {family.name!r}, question {question_id}"
    shown = "; ".join(str(c) for c in candidates)
    if rule not in ROOT_RULES:
        said = f"root={rule!r} is not a rule" if rule else "no root rule is given"
        raise RootRuleError(
            f"{where}: sympy finds {len(candidates)} solutions ({shown}) and {said}. "
            f"Set root= to one of {', '.join(ROOT_RULES)}, or state the answer with answer=."
        )
    p = family.parameter
    lo, hi = (Fraction(str(b)) for b in family.p_range)
    centre = Fraction(str(family.p0))
    balls = [compile_ball(c, p) for c in candidates]
    saved = ctx.prec
    ctx.prec = 80
    try:
        real = [i for i, b in enumerate(balls) if b(arb(fmpq(centre.numerator, centre.denominator))).is_finite()]
    finally:
        ctx.prec = saved
    tests: dict[int, Callable[[arb], arb]] = {}
    for i in real:
        if rule == "positive":
            tests[i] = balls[i]
        elif rule == "negative":
            tests[i] = _negated(balls[i])
        else:
            others = [balls[j] for j in real if j != i]
            tests[i] = _margin(balls[i], others, 1 if rule == "largest" else -1)
    if len(real) == 1 and rule in ("largest", "smallest"):
        chosen = real  # the only real solution is the largest and the smallest
    else:
        chosen = [i for i in real if _proven(tests[i], lo, hi)]
    if len(chosen) != 1:
        found = "none of them" if not chosen else f"{len(chosen)} of them"
        raise RootRuleError(
            f"{where}: the rule root={rule!r} picks {found} on every p in [{family.p_range[0]}, {family.p_range[1]}] "
            f"among the real solutions ({'; '.join(str(candidates[i]) for i in real) or 'none'}). "
            "Choose a rule that holds for exactly one solution on the whole range, or narrow p_range."
        )
    return candidates[chosen[0]]


def _negated(ball_of: Callable[[arb], arb]) -> Callable[[arb], arb]:
    return lambda x: -ball_of(x)


def _margin(ball_of: Callable[[arb], arb], others: list[Callable[[arb], arb]], sign: int) -> Callable[[arb], arb]:
    """The smallest of sign * (candidate - other) over the others: positive where the candidate is
    the largest (sign 1) or the smallest (sign -1)."""
    return lambda x: _least([sign * (ball_of(x) - other(x)) for other in others])


def _least(balls: list[arb]) -> arb:
    out = balls[0]
    for b in balls[1:]:
        out = out.min(b)
    return out


def _proven(ball_of: Callable[[arb], arb], lo: Fraction, hi: Fraction) -> bool:
    return prove_over(ball_of, lo, hi, _positive).proven
