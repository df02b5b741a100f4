"""Naming the dynamics (issue #30, section 2): an equivalent delay and a first-order fit per family,
proved on analytic systems, synthetic and through the real `mathbode run` and scorer."""

from __future__ import annotations

import cmath
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.evaluator.scorer.dynamics import dynamics, family_dynamics
from mathbode.evaluator.table import Table

FREQUENCIES = (1.0, 2.0, 4.0, 8.0, 16.0)


def _sweeps(response, sweeps_per_cell=6, noise=0.0, seed=0, frequencies=FREQUENCIES):
    """A family's per-sweep gains and phases of the system `response(f) -> complex`, each sweep's
    complex response off by `noise` (relative, complex normal)."""
    rng = np.random.default_rng(seed)
    rows = {"family": [], "frequency_cycles": [], "gain": [], "phase_err_deg": []}
    for f in frequencies:
        for _ in range(sweeps_per_cell):
            h = response(f) * (1 + noise * (rng.standard_normal() + 1j * rng.standard_normal()))
            rows["family"].append("fam")
            rows["frequency_cycles"].append(f)
            rows["gain"].append(abs(h))
            rows["phase_err_deg"].append(math.degrees(cmath.phase(h)))
    return Table({k: np.array(v, dtype=object if k == "family" else float) for k, v in rows.items()})


def delay(k):
    return lambda f: cmath.exp(-2j * math.pi * f * k / 64)


def low_pass(a):
    return lambda f: a / (1 - (1 - a) * cmath.exp(-2j * math.pi * f / 64))


@pytest.mark.parametrize("k", [1, 2, 3, 5, 6.5, 11, 40])
def test_a_pure_delay_is_named_with_its_steps(k):
    d = family_dynamics(_sweeps(delay(k), noise=0.02, seed=k if isinstance(k, int) else 7), "fam", None, 64)
    assert d["verdict"] == f"a delay of {d['delay_steps']:.2f} steps (modulo 64)"
    assert d["delay_steps"] == pytest.approx(k, abs=0.05)
    low, high = d["delay_interval"]
    assert low <= k <= high and high - low < 0.5
    assert d["delay_residual"] < 0.05 < d["low_pass_residual"]


@pytest.mark.parametrize("a", [0.1, 0.3, 0.6, 0.85])
def test_a_first_order_low_pass_is_named_with_its_coefficient_and_time_constant(a):
    d = family_dynamics(_sweeps(low_pass(a), noise=0.01, seed=3), "fam", None, 64)
    assert d["verdict"].startswith("a first-order low-pass, a = ")
    assert d["low_pass_a"] == pytest.approx(a, abs=0.01)
    low, high = d["low_pass_a_interval"]
    assert low <= a <= high
    assert d["time_constant_steps"] == pytest.approx(-1 / math.log(1 - a), rel=0.05)


def test_a_memoryless_model_shows_no_dynamics_even_with_a_gain_error():
    d = family_dynamics(_sweeps(lambda f: 0.9, noise=0.01), "fam", 8, 8)
    assert d["verdict"] == "no dynamics detected" and d["flags"] == []


def test_a_delay_that_aliases_at_high_frequencies_is_unwrapped_from_the_low_ones():
    """4 steps: 0 degrees at 16 cycles and 180 at 8, which alone read as 'perfect' and 'inverted'."""
    d = family_dynamics(_sweeps(delay(4)), "fam", None, 8)
    assert d["delay_steps"] == pytest.approx(4.0, abs=1e-6) and d["delay_period_steps"] == 64
    only_fast = family_dynamics(_sweeps(delay(4), frequencies=(8.0, 16.0)), "fam", None, 8)
    assert only_fast["delay_period_steps"] == 8  # 8 and 16 cycles cannot tell 4 steps from 12


def test_a_lag_at_the_history_window_and_a_memory_beyond_the_run_in_are_flagged():
    at_window = family_dynamics(_sweeps(delay(1)), "fam", 1, 8)
    assert any("reaches the history window (1 exchanges)" in flag for flag in at_window["flags"])
    slow = family_dynamics(_sweeps(low_pass(0.1)), "fam", None, 4)
    assert any("longer than the run-in (4 steps)" in flag for flag in slow["flags"])
    assert family_dynamics(_sweeps(low_pass(0.5)), "fam", None, 8)["flags"] == []


def test_two_sweeps_per_cell_give_no_interval_and_say_why():
    d = family_dynamics(_sweeps(delay(2), sweeps_per_cell=2, noise=0.01), "fam", None, 8)
    assert d["delay_interval"] is None and d["low_pass_a_interval"] is None
    assert d["interval_note"] == "no intervals: 2 sweeps in a cell, 3 needed to show a spread"


def test_a_stateless_file_has_no_dynamics():
    assert dynamics(_sweeps(delay(2)), {"protocol": "stateless"}) is None


def test_run_and_score_name_a_delay_and_flag_the_history_window(truth_stub, tmp_path):
    """A 3-step delay asked with --history all reads 3 steps; a 4-step delay asked with
    --history 1 is a 1-step delay to the model, and the report says the lag reached the window."""
    env = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}
    base = ["--base-url", truth_stub.base_url, "--families", "linear_solve", "--preset", "FULL"]
    base += ["--protocol", "sequential", "--concurrency", "16"]
    for model, history, name in (("delay-3", "all", "d3"), ("delay-4", "1", "d4h1")):
        out = tmp_path / f"{name}.jsonl"
        result = CliRunner().invoke(run_cli, [*base, "--model", model, "--history", history, "-o", str(out)], env=env)
        assert result.exit_code == 0, result.output
        result = CliRunner().invoke(score_cli, [str(out), "--out", str(tmp_path / name), "--no-plots"], env=env)
        assert result.exit_code == 0, result.output
    d3 = json.loads((tmp_path / "d3" / "scores.json").read_text())["dynamics"]["linear_solve"]
    assert d3["verdict"] == "a delay of 3.00 steps (modulo 64)" and d3["flags"] == []
    assert d3["delay_interval"][0] <= 3.0 <= d3["delay_interval"][1]
    d4 = json.loads((tmp_path / "d4h1" / "scores.json").read_text())["dynamics"]["linear_solve"]
    assert d4["verdict"] == "a delay of 1.00 steps (modulo 64)"
    report = (tmp_path / "d4h1" / "report.md").read_text()
    assert "linear_solve: the delay reaches the history window (1 exchanges)" in report


def test_the_delay_and_low_pass_intervals_cover_what_they_say():
    """100 noisy families each (5 % complex noise per sweep, 3 sweeps a cell): the percentile
    bootstrap covered 77 % for a delay; t on Satterthwaite's degrees of freedom covers 94-96 %
    with 200-400 simulations (here 94 and 98 of 100; binomial standard error 2.2 %, so the band
    0.88-0.99 is 0.95 -3.2/+1.8 standard errors: a 100 % would mean intervals too wide)."""
    for response, key, true in ((delay(3), "delay_interval", 3.0), (low_pass(0.3), "low_pass_a_interval", 0.3)):
        hits = 0
        for seed in range(100):
            low, high = family_dynamics(_sweeps(response, 3, 0.05, seed), "fam", None, 64)[key]
            hits += low <= true <= high
        assert 0.88 <= hits / 100 <= 0.99, (key, hits)
