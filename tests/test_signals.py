"""Property tests for the drive signals: bounds, clipping, frequency."""

from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathbode.builder import signals

T = 64
decimals_ = st.decimals(
    min_value=Decimal("-50"), max_value=Decimal("50"), places=3, allow_nan=False, allow_infinity=False
)


@given(
    p0=decimals_,
    eps=st.decimals(min_value=Decimal("0.001"), max_value=Decimal("10"), places=3),
    scale=st.sampled_from([0.5, 1.0, 2.5]),
    f=st.sampled_from([1, 2, 4, 8, 16]),
    phase=st.sampled_from([0, 120, 240]),
    half_width=st.decimals(min_value=Decimal("0"), max_value=Decimal("40"), places=3),
)
@settings(max_examples=150, deadline=None)
def test_sinusoid_stays_in_swing_and_range(p0, eps, scale, f, phase, half_width):
    lo, hi = p0 - half_width, p0 + half_width
    unit = signals.sinusoid_unit(f, phase, T)
    values = signals.drive(unit, p0, eps, scale, (lo, hi))
    swing = Decimal(repr(scale)) * eps
    assert all(lo <= v <= hi for v in values)
    assert all(p0 - swing <= v <= p0 + swing for v in values)
    # Clipping: a value differs from the unclipped one only where it sits on a bound.
    with localcontext(prec=40):  # the drive's working precision
        for u, v in zip(unit, values, strict=True):
            raw = p0 + swing * u
            assert v == raw or v in (lo, hi)


@given(f=st.sampled_from([1, 2, 4, 8, 16]), phase=st.sampled_from([0, 120, 240]))
def test_sinusoid_has_exactly_its_frequency(f, phase):
    unit = np.array([float(u) for u in signals.sinusoid_unit(f, phase, T)])
    spectrum = np.abs(np.fft.rfft(unit))
    assert int(np.argmax(spectrum)) == f
    # A pure tone on the grid: every other bin is numerically zero.
    assert np.all(np.delete(spectrum, f) < 1e-9)
    assert unit[0] == pytest.approx(np.sin(np.radians(phase)), abs=1e-15)


def test_sines_are_exact_at_known_angles():
    assert signals.sinusoid_unit(16, 0, T)[:4] == (Decimal(0), Decimal(1), Decimal(0), Decimal(-1))


def test_chirp_frequency_goes_log_from_1_to_16():
    freqs = signals.chirp_frequencies(1, 16, T)
    assert freqs[0] == 1.0 and freqs[-1] == 16.0
    ratios = np.diff(np.log(freqs))
    assert np.allclose(ratios, np.log(16) / 63, rtol=0, atol=1e-12)


def test_chirp_phase_advances_by_its_instantaneous_frequency():
    # The unwrapped phase increment between steps lies between f(t)/T and f(t+1)/T turns.
    unit = [float(u) for u in signals.chirp_unit(1, 16, T)]
    freqs = signals.chirp_frequencies(1, 16, T)
    assert unit[0] == 0.0
    # Near the start (slow), the sine follows sin(2 pi * f0 t / T) closely.
    assert unit[1] == pytest.approx(np.sin(2 * np.pi * (freqs[0] + freqs[1]) / 2 / T), rel=1e-3)


@given(scale=st.sampled_from([1.0, 2.5]), switch=st.integers(1, 63))
def test_step_switches_once(scale, switch):
    p0, eps = Decimal("3"), Decimal("0.2")
    values = signals.drive(signals.step_unit(switch, T), p0, eps, scale, (Decimal(0), Decimal(10)))
    swing = Decimal(repr(scale)) * eps
    assert values == [p0 - swing] * switch + [p0 + swing] * (T - switch)


@given(
    values=st.lists(
        st.decimals(min_value=-100, max_value=100, allow_nan=False, allow_infinity=False), min_size=1, max_size=20
    )
)
def test_quantize_keeps_fixed_decimals(values):
    for v, q in zip(values, signals.quantize(values, 3), strict=True):
        assert q.as_tuple().exponent == -3
        assert abs(q - v) <= Decimal("0.0005")
