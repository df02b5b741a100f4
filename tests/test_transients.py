"""Chirp and step measurements, proved on models with known answers applied to the real truth series.

Models: a pure delay of d steps (phase -360 d f / 64 degrees, gain 1), a gain g about the sweep
mean, and the first-order low-pass y_t = y_{t-1} + alpha (x_t - y_{t-1}), whose response is
H(w) = alpha / (1 - (1 - alpha) e^{-jw}), w = 2 pi f / 64.

Tolerances. The sinusoid method sees a periodic input in steady state and recovers H to
rounding (1e-6 in gain, 1e-4 degrees). The chirp method reads a 16-step window in which the
frequency changes by an octave, so a delayed or filtered chirp is only locally a phase shift:
measured errors at 4 and 8 cycles are under 0.035 in gain and 4 degrees for delays of 1 and 2
steps, under 0.025 and 0.6 degrees for the low-pass; the tests allow 0.05 and 5 degrees.
"""

from __future__ import annotations

import cmath
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.builder.signals import chirp_unit
from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.score import main as score_cli
from mathbode.core.atomic import write_jsonl
from mathbode.evaluator.presentation.plots import bode_figure
from mathbode.evaluator.scorer.metrics import sweep_metrics
from mathbode.evaluator.scorer.scoring import score
from mathbode.evaluator.scorer.transients import chirp_curve, chirp_phase, curve_at, step_response
from mathbode.schema import layout, read_submission
from mathbode.schema.selection import select_rows

LAY = layout()
T = LAY.time_steps


def _series(reference, family: str, signal: str, **key) -> np.ndarray:
    table = reference.table.to_pandas()
    rows = table[(table.family == family) & (table.signal_type == signal) & (table.question_id == 0)]
    for name, value in key.items():
        rows = rows[rows[name] == value]
    rows = rows[rows.amplitude_scale == rows.amplitude_scale.iloc[0]].sort_values("time_step")
    assert len(rows) == T
    return rows.ground_truth.to_numpy()


def delay(x: np.ndarray, d: int) -> np.ndarray:
    return np.concatenate([np.full(d, np.nan), x[:-d]])


def lowpass(x: np.ndarray, alpha: float, y0: float | None = None) -> np.ndarray:
    y = np.empty_like(x)
    prev = x[0] if y0 is None else y0
    for t, value in enumerate(x):
        prev = prev + alpha * (value - prev)
        y[t] = prev
    return y


def H(alpha: float, f: float) -> complex:
    return alpha / (1 - (1 - alpha) * cmath.exp(-2j * math.pi * f / T))


def test_the_chirp_phase_is_the_builders():
    theta = chirp_phase(T, LAY.chirp_start_cycles, LAY.chirp_end_cycles)
    unit = np.array([float(u) for u in chirp_unit(LAY.chirp_start_cycles, LAY.chirp_end_cycles, T)])
    assert np.abs(np.sin(theta) - unit).max() < 1e-12


@pytest.mark.parametrize("family", LAY.families)
def test_the_sinusoid_method_recovers_delay_gain_and_low_pass_exactly(reference, family):
    for f in (4.0, 8.0):
        x = _series(reference, family, "sinusoid", frequency_cycles=f, phase_deg=0.0)
        shifted = sweep_metrics(x, np.roll(x, 2), f, T)  # a periodic input: the delay is a circular shift
        assert shifted["gain"] == pytest.approx(1, abs=1e-9)
        assert shifted["phase_err_deg"] == pytest.approx(-360 * 2 * f / T, abs=1e-6)
        scaled = sweep_metrics(x, x.mean() + 0.8 * (x - x.mean()), f, T)
        assert scaled["gain"] == pytest.approx(0.8, abs=1e-9) and scaled["phase_err_deg"] == pytest.approx(0, abs=1e-9)
        steady = lowpass(np.tile(x, 4), 0.5)[-T:]  # the periodic steady state
        filtered = sweep_metrics(x, steady, f, T)
        assert filtered["gain"] == pytest.approx(abs(H(0.5, f)), abs=1e-6)
        assert filtered["phase_err_deg"] == pytest.approx(math.degrees(cmath.phase(H(0.5, f))), abs=1e-4)


@pytest.mark.parametrize("family", LAY.families)
def test_the_chirp_method_recovers_delay_gain_and_low_pass_at_mid_band(reference, family):
    x = _series(reference, family, "chirp")
    f0, f1 = LAY.chirp_start_cycles, LAY.chirp_end_cycles
    for d in (1, 2):
        curve = chirp_curve(x, delay(x, d), f0, f1)
        for f in (4.0, 8.0):
            point = curve_at(curve, f)
            assert point["gain"] == pytest.approx(1, abs=0.05), (d, f)
            assert point["phase_err_deg"] == pytest.approx(-360 * d * f / T, abs=5), (d, f)
    curve = chirp_curve(x, x.mean() + 0.8 * (x - x.mean()), f0, f1)
    assert all(p["gain"] == pytest.approx(0.8, abs=1e-6) and abs(p["phase_err_deg"]) < 1e-6 for p in curve)
    curve = chirp_curve(x, lowpass(x, 0.5), f0, f1)
    for f in (4.0, 8.0):
        point = curve_at(curve, f)
        assert point["gain"] == pytest.approx(abs(H(0.5, f)), abs=0.05)
        assert point["phase_err_deg"] == pytest.approx(math.degrees(cmath.phase(H(0.5, f))), abs=5)


@pytest.mark.parametrize("alpha", [0.2, 0.3, 0.5, 0.8])
def test_the_step_method_recovers_the_low_pass_rise_time(reference, alpha):
    x = _series(reference, "linear_solve", "step")
    r = step_response(x, lowpass(x, alpha), LAY.step_switch)
    # r_k = 1 - (1 - alpha)^(k + 1) after the switch: r_0 = alpha >= 0.1 (no dead time), and it
    # first reaches 0.9 at this k.
    assert r["dead_time"] == 0.0
    assert r["rise_time"] == math.ceil(math.log(0.1) / math.log(1 - alpha) - 1e-12) - 1
    assert r["overshoot"] == 0 and r["pre_error"] == pytest.approx(0, abs=1e-12)


def test_the_step_method_reads_delay_gain_and_the_exact_answer(reference):
    x = _series(reference, "ratio_saturation", "step")
    exact = step_response(x, x, LAY.step_switch)
    assert exact == {
        "pre_error": 0.0,
        "steady_state_error": 0.0,
        "overshoot": 0.0,
        "dead_time": 0.0,
        "rise_time": 0.0,
        "settling_time": 0.0,
        "delay": 0.0,
        "compliance": 1.0,
    }
    # A pure delay is all dead time and no rise (a 0-90 % rise time read 3 = the delay before).
    late = step_response(x, delay(x, 3), LAY.step_switch)
    assert (late["dead_time"], late["rise_time"], late["delay"], late["settling_time"]) == (3, 0, 3, 3)
    assert late["overshoot"] == 0
    scaled = step_response(x, x.mean() + 0.8 * (x - x.mean()), LAY.step_switch)
    assert scaled["steady_state_error"] == pytest.approx(-0.2, abs=1e-9)
    assert math.isnan(scaled["settling_time"])  # it never comes within 5 % of the new level


def test_the_chirp_step_preset_selects_1280_rows(tmp_path):
    result = CliRunner().invoke(prompts_cli, ["--preset", "chirp_step", "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(lines) == 4 * 64 * 5 == 1280
    assert {(line["signal_type"], line["question_id"]) for line in lines} == {("chirp", 0), ("step", 0)}


@pytest.fixture(scope="module")
def all_lines(reference):
    return list(baseline_lines(select_rows(reference.table, "ALL")))


def _filtered(lines, alpha):
    """The low-pass applied to the exact answers of every sweep (sinusoids in periodic steady state)."""
    sweeps: dict[tuple, list[dict]] = {}
    for line in lines:
        sinusoid = line["signal_type"] == "sinusoid"
        key = (line["family"], line["question_id"], line["signal_type"], line["amplitude_scale"])
        key += (line["frequency_cycles"], line["phase_deg"]) if sinusoid else ()
        sweeps.setdefault(key, []).append(line)
    out = []
    for key, sweep in sweeps.items():
        sweep.sort(key=lambda line: line["time_step"])
        x = np.array([float(line["response"].split()[1]) for line in sweep])
        y = lowpass(np.tile(x, 4), alpha)[-T:] if key[2] == "sinusoid" else lowpass(x, alpha)
        out += [{**line, "response": f"[answer_start] {v:.6f} [answer_end]"} for line, v in zip(sweep, y, strict=True)]
    return out


def test_the_three_measurements_agree_for_a_linear_model(reference, all_lines, tmp_path):
    write_jsonl(tmp_path / "lp.jsonl", _filtered(all_lines, 0.5))
    r = score(read_submission(tmp_path / "lp.jsonl").predictions, reference, "lp")
    agreement = r.extra["diagnostics"]["agreement"]
    assert set(agreement) == set(LAY.families)
    for family, a in agreement.items():
        for f in ("4", "8"):
            assert abs(a[f"chirp_minus_sinusoid_at_{f}"]["gain"]) < 0.03, family
            assert abs(a[f"chirp_minus_sinusoid_at_{f}"]["phase_err_deg"]) < 1.0, family
        assert abs(a["step_final_minus_sinusoid_gain_at_1"]) < 0.02, family
        assert abs(a["step_delay_minus_sinusoid_delay_steps"]) < 1.0, family
    assert len(r.chirp) == 5 * 3 * 2 * 49 and len(r.step) == 5 * 3 * 2


def test_the_exact_answers_are_ideal_on_every_new_measure_and_the_paper_scores_do_not_change(reference, tmp_path):
    lines = list(baseline_lines(select_rows(reference.table, "ALL")))
    write_jsonl(tmp_path / "all.jsonl", lines)
    write_jsonl(tmp_path / "sines.jsonl", [line for line in lines if line["signal_type"] == "sinusoid"])
    out = tmp_path / "report"
    result = CliRunner().invoke(score_cli, [str(tmp_path / "all.jsonl"), "--out", str(out), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert "chirp: gain / phase error (deg) against instantaneous frequency" in result.output
    scores = json.loads((out / "scores.json").read_text())
    for family in LAY.families:
        points = scores["diagnostics"]["chirp"][family]["at"]
        # The 1- and 2-cycle windows hold under a cycle: n/a, with the reason.
        assert [k for k, p in points.items() if p["gain"] is None] == ["1", "2"]
        assert points["2"]["note"].startswith("n/a: the 16-step window holds 0.50 of a cycle here")
        for point in (points[k] for k in ("4", "8", "16")):
            assert point["gain"] == pytest.approx(1, abs=1e-5) and point["phase_err_deg"] == pytest.approx(0, abs=1e-3)
        step = scores["diagnostics"]["step"][family]
        # Zero to the format's resolution: 1e-6 over the smallest jump of a step sweep (about 0.09).
        assert abs(step["steady_state_error"]) < 1e-4 and step["overshoot"] < 1e-4
        assert step["rise_time"] <= 1 and abs(step["pre_error"]) < 1e-4
    for name in ("chirp.csv", "step.csv", "chirp.png", "step.png", "fit_quality.png", "compliance.png"):
        assert (out / name).is_file(), name
    sines = score(read_submission(tmp_path / "sines.jsonl").predictions, reference, "s")
    assert scores["overall"]["mb_core"] == sines.overall["mb_core"]
    assert scores["overall"]["mb_plus"] == sines.overall["mb_plus"]


def test_a_one_family_figure_keeps_its_axis_titles_and_tick_labels(reference, tmp_path):
    lines = [line for line in baseline_lines(select_rows(reference.table, "SMOKE")) if line["family"] == "linear_solve"]
    write_jsonl(tmp_path / "one.jsonl", lines)
    r = score(read_submission(tmp_path / "one.jsonl").predictions, reference, "one")
    fig = bode_figure([r])
    ax = fig.axes[0]
    assert ax.get_ylabel() and fig.get_figwidth() >= 5.5
    left_inches = ax.get_position().x0 * fig.get_figwidth()
    assert left_inches >= 0.8  # room for the y label and the tick labels
