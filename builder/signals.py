"""Drive signals: the parameter trajectory p_t of one sweep, computed exactly.

The trajectory is computed in high-precision decimal arithmetic (sines from mpmath at 40
significant digits) rather than with numpy's float sin, so the rounded value that is rendered
into a prompt is the same on every machine: libm implementations may differ in the last bit,
and a last-bit difference can flip the rounding of a rendered number.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from functools import cache
from typing import Sequence

import mpmath

from mathbode.schema.drives import MultitonePlan

_DIGITS = 40
_CTX = Context(prec=_DIGITS)
_MP = mpmath.MPContext()
_MP.dps = _DIGITS + 5


def _to_decimal(x) -> Decimal:
    return _CTX.create_decimal(_MP.nstr(x, _DIGITS + 5, strip_zeros=False))


@cache
def sin_turns(turns: Fraction) -> Decimal:
    """sin(2*pi*turns), to 40 significant digits. Exact fractions of a turn repeat, hence the cache."""
    return _to_decimal(_MP.sinpi(2 * _MP.mpf(turns.numerator) / turns.denominator))


@cache
def sinusoid_unit(frequency_cycles: float, phase_deg: float, time_steps: int) -> tuple[Decimal, ...]:
    """sin(2*pi*f*t/T + phi0) for t = 0..T-1 (every family drives the same sweeps, hence the cache)."""
    f = Fraction(frequency_cycles)
    phase = Fraction(phase_deg) / 360
    return tuple(sin_turns((f * t / time_steps + phase) % 1) for t in range(time_steps))


@cache
def _chirp(start_cycles: float, end_cycles: float, time_steps: int) -> tuple[tuple[Decimal, ...], tuple[float, ...]]:
    # Logarithmic sweep whose instantaneous frequency goes from start to end cycles per T steps,
    # reaching the end exactly at the last step: f(t) = f0 * (f1/f0) ** (t / (T - 1)).
    # The phase (in turns) is the integral of f(t)/T: f0 (T-1) / (T ln(f1/f0)) ((f1/f0)**(t/(T-1)) - 1).
    f0, f1 = _MP.mpf(start_cycles), _MP.mpf(end_cycles)
    k = f1 / f0
    span = time_steps - 1
    scale = f0 * span / (time_steps * _MP.log(k))
    sines, freqs = [], []
    for t in range(time_steps):
        growth = _MP.power(k, _MP.mpf(t) / span)
        sines.append(_to_decimal(_MP.sinpi(2 * scale * (growth - 1))))
        freqs.append(float(f0 * growth))
    return tuple(sines), tuple(freqs)


def chirp_unit(start_cycles: float, end_cycles: float, time_steps: int) -> tuple[Decimal, ...]:
    """sin of a logarithmic chirp's phase for t = 0..T-1 (start phase 0)."""
    return _chirp(start_cycles, end_cycles, time_steps)[0]


def chirp_frequencies(start_cycles: float, end_cycles: float, time_steps: int) -> list[float]:
    """The chirp's instantaneous frequency (cycles per T steps) at each step, correctly rounded."""
    return list(_chirp(start_cycles, end_cycles, time_steps)[1])


def step_unit(switch_step: int, time_steps: int) -> tuple[Decimal, ...]:
    """-1 before `switch_step`, +1 from it on."""
    return tuple(Decimal(-1) if t < switch_step else Decimal(1) for t in range(time_steps))


def drive(
    unit: Sequence[Decimal],
    p0: Decimal,
    epsilon: Decimal,
    amplitude_scale: float,
    p_range: tuple[Decimal, Decimal],
) -> list[Decimal]:
    """p_t = clip(p0 + s * epsilon * unit_t) to p_range, unrounded."""
    lo, hi = p_range
    swing = _CTX.multiply(Decimal(repr(amplitude_scale)), epsilon)
    return [min(hi, max(lo, _CTX.add(p0, _CTX.multiply(swing, u)))) for u in unit]


def quantize(values: Sequence[Decimal], decimals: int) -> list[Decimal]:
    """Round to the fixed number of decimals the prompt shows (round half to even)."""
    step = Decimal(1).scaleb(-decimals)
    return [v.quantize(step, rounding=ROUND_HALF_EVEN, context=_CTX) for v in values]


@cache
def multisine_unit(plan: MultitonePlan, realization: int) -> tuple[Decimal, ...]:
    """One realization of the odd random-phase multisine: sum over the excited lines k of
    a cos(2 pi k t / T + phi_k), a = 1/sqrt(N) so that its RMS is a unit sinusoid's (1/sqrt 2)."""
    T = plan.time_steps
    a = _CTX.divide(Decimal(1), _CTX.sqrt(Decimal(len(plan.excited_lines))))
    out = []
    for t in range(T):
        total = Decimal(0)
        for k in plan.excited_lines:
            turns = (Fraction(k * t, T) + plan.phase_turns(realization, k) + Fraction(1, 4)) % 1  # cos = sin(+1/4 turn)
            total = _CTX.add(total, sin_turns(turns))
        out.append(_CTX.multiply(a, total))
    return tuple(out)


@cache
def two_tone_unit(plan: MultitonePlan) -> tuple[Decimal, ...]:
    """a (cos(2 pi f1 t / T) + cos(2 pi f2 t / T)), a = 1/sqrt(2): the RMS of a unit sinusoid."""
    T = plan.time_steps
    a = _CTX.divide(Decimal(1), _CTX.sqrt(Decimal(2)))
    f1, f2 = plan.two_tone_lines
    return tuple(
        _CTX.multiply(
            a,
            _CTX.add(
                sin_turns((Fraction(f1 * t, T) + Fraction(1, 4)) % 1),
                sin_turns((Fraction(f2 * t, T) + Fraction(1, 4)) % 1),
            ),
        )
        for t in range(T)
    )
