"""The numeric core: the fit recovers known gain and phase; metrics behave at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mathbode.evaluator.scorer.aggregate import ScoreConfig, family_scores, frequency_summary
from mathbode.evaluator.scorer.metrics import MIN_POINTS, fit_first_harmonic, sweep_metrics, wrap_pi
from mathbode.evaluator.table import Table

T = 64
t = np.arange(T, dtype=float)


def tone(f, amp, phase, offset=0.0):
    return offset + amp * np.sin(2 * np.pi * f * t / T + phase)


@given(
    f=st.sampled_from([1, 2, 4, 8]),
    amp=st.floats(0.01, 100),
    phase=st.floats(-math.pi, math.pi - 1e-9),
    offset=st.floats(-50, 50),
)
@settings(max_examples=200, deadline=None)
def test_fit_recovers_amplitude_and_phase(f, amp, phase, offset):
    fit = fit_first_harmonic(t, tone(f, amp, phase, offset), 2 * math.pi * f / T)
    assert fit.amplitude == pytest.approx(amp, rel=1e-9)
    assert abs(wrap_pi(fit.phase - phase)) < 1e-9
    assert fit.c == pytest.approx(offset, abs=1e-9 * max(1, amp))
    assert fit.r2 == pytest.approx(1.0, abs=1e-12)


@given(
    f=st.sampled_from([1, 2, 4, 8, 16]),
    gain=st.floats(0.05, 5),
    lag=st.floats(-170, 170),
    dropped=st.sets(st.integers(0, T - 1), max_size=T - MIN_POINTS),
)
@settings(max_examples=200, deadline=None)
def test_sweep_gain_and_phase_error_are_recovered_with_missing_answers(f, gain, lag, dropped):
    truth = tone(f, 2.0, 0.3, 10)
    model = tone(f, 2.0 * gain, 0.3 + math.radians(lag), 10)
    # At Nyquist/4 with gaps the sin/cos columns can nearly coincide: no recovery is promised there.
    assume(not (f == 16 and dropped))
    model[list(dropped)] = np.nan
    m = sweep_metrics(truth, model, f, T)
    assert m["gain"] == pytest.approx(gain, rel=1e-6)
    assert m["phase_err_deg"] == pytest.approx(lag, abs=1e-6)
    assert m["compliance"] == (T - len(dropped)) / T


def test_too_few_answers_give_nan_metrics_but_count_compliance():
    truth = tone(4, 1, 0)
    model = np.full(T, np.nan)
    model[: MIN_POINTS - 1] = truth[: MIN_POINTS - 1]
    m = sweep_metrics(truth, model, 4, T)
    assert math.isnan(m["gain"]) and math.isnan(m["r2"]) and math.isnan(m["res_acf1"])
    assert m["compliance"] == (MIN_POINTS - 1) / T


def test_zero_truth_amplitude_gives_nan_gain_and_phase():
    m = sweep_metrics(np.full(T, 3.0), tone(4, 1, 0, 3), 4, T)
    assert math.isnan(m["gain"]) and math.isnan(m["phase_err_deg"])
    assert m["r2"] == pytest.approx(1.0)


def test_constant_model_counts_sstot_as_one():
    m = sweep_metrics(tone(4, 1, 0), np.full(T, 5.0), 4, T)
    assert m["gain"] == pytest.approx(0.0, abs=1e-12)
    assert m["r2"] == pytest.approx(1.0)


def test_second_harmonic_distortion_shows_in_h2_over_h1():
    truth = tone(4, 1, 0)
    model = truth + 0.25 * np.sin(2 * 2 * np.pi * 4 * t / T)
    m = sweep_metrics(truth, model, 4, T)
    assert m["h2_over_h1"] == pytest.approx(0.25, rel=1e-9)
    assert m["h1"] == pytest.approx(1.0, rel=1e-9)


def test_phase_error_wraps_to_minus_pi_pi():
    assert wrap_pi(math.pi) == pytest.approx(-math.pi)
    assert wrap_pi(-math.pi) == pytest.approx(-math.pi)
    m = sweep_metrics(tone(4, 1, 0), tone(4, 1, math.radians(200)), 4, T)
    assert m["phase_err_deg"] == pytest.approx(-160)


def test_family_scores_follow_the_formulas():
    rows = []
    for f, gain, phase, r2, acf, comp in [
        (4, 0.9, -9.0, 0.8, 0.2, 1.0),
        (8, 0.8, -27.0, 0.6, -0.4, 0.5),
        (16, 0.1, -90, 0.1, 0.9, 0.0),
    ]:
        rows.append(
            {
                "family": "linear_solve",
                "frequency_cycles": float(f),
                "gain": gain,
                "phase_err_deg": phase,
                "r2": r2,
                "res_acf1": acf,
                "compliance": comp,
            }
        )
    s = family_scores(Table.from_rows(rows), ScoreConfig())["linear_solve"]
    gain_err = (0.1 + 0.2) / 2
    phase_err = (9 + 27) / 2
    assert s["gain_abs_err_mid"] == pytest.approx(gain_err)
    assert s["phase_abs_deg_mid"] == pytest.approx(phase_err)
    core = 1 - (0.5 * gain_err / 0.25 + 0.5 * phase_err / 45)
    assert s["mb_core"] == pytest.approx(core)
    assert s["r2_mean"] == pytest.approx(0.7)
    assert s["acf1_abs_mean"] == pytest.approx(0.3)
    assert s["compliance_mean"] == pytest.approx(0.5)
    assert s["mb_plus"] == pytest.approx(core * math.sqrt(0.7) * math.sqrt(0.7) * math.sqrt(0.5))


def test_frequency_summary_means_skip_nan():
    sweeps = Table(
        {
            "family": ["a", "a", "a"],
            "frequency_cycles": [4.0, 4.0, 8.0],
            "gain": [1.0, np.nan, 0.5],
            "compliance": [1.0, 0.0, 1.0],
        }
    )
    summary = frequency_summary(sweeps)
    assert summary["gain"].tolist() == [1.0, 0.5]
    assert summary["compliance"].tolist() == [0.5, 1.0]
    assert summary["num_sweeps"].tolist() == [2, 1]


def test_the_sweeps_mean_is_numpys_to_the_bit():
    """`calibration.mean` skips numpy's Python wrapper, not its arithmetic: the same pairwise sum
    and division, so every per-sweep metric keeps its floats (sizes across numpy's 8- and
    128-element summation blocks, strided views as a lag's slices are)."""
    from mathbode.evaluator.scorer.calibration import mean

    rng = np.random.default_rng(7)
    for size in [1, 2, 7, 8, 9, 16, 63, 64, 127, 128, 129, 300, 1025]:
        x = rng.standard_normal(size) * 10.0 ** rng.integers(-8, 9, size)
        for view in (x, x[1:], x[:-1], x[::2]):
            if view.size:
                assert mean(view) == view.mean() and isinstance(mean(view), float)
