"""Numbers that mean what they say (issue #20): intervals that hold their estimates, phases
averaged on the circle, no phase for answers that do not move, harmonics that missing answers do
not inflate, and a Wilson bound of exactly 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mathbode.builder.oracle import baseline_lines
from mathbode.evaluator.scorer.aggregate import PAPER_CONFIG
from mathbode.evaluator.scorer.angles import angle_mean, angle_spread
from mathbode.evaluator.scorer.compare import neighbour_tests
from mathbode.evaluator.scorer.metrics import measurable_harmonics, sweep_metrics
from mathbode.evaluator.scorer.uncertainty import wilson_interval
from mathbode.schema import layout
from mathbode.schema.selection import key_fields, select_rows

from .conftest import by_sweep, score_lines

LAY = layout()
T = LAY.time_steps


def _answers(rows, transform, seed=0):
    """Prediction lines: transform(truth array, rng) -> answers (NaN: no answer) per sweep."""
    rng = np.random.default_rng(seed)
    lines = []
    for sweep in by_sweep(rows):
        truth = np.array([r["ground_truth"] for r in sweep])
        for r, y in zip(sweep, transform(truth, rng), strict=True):
            lines.append({**key_fields(r), "prediction": float(y) if math.isfinite(y) else None})
    return lines


def _delay(truth, rng):
    return np.concatenate([[truth[0]], truth[:-1]])


def _partial(truth, rng):
    return np.where(rng.random(truth.size) < 0.3, np.nan, truth * (1 + 0.02 * rng.standard_normal(truth.size)))


MODELS = {
    "exact": lambda truth, rng: truth,
    "constant 0": lambda truth, rng: np.zeros_like(truth),
    "constant mean": lambda truth, rng: np.full_like(truth, truth.mean()),
    "noisy": lambda truth, rng: truth * (1 + 0.01 * rng.standard_normal(truth.size)),
    "very noisy": lambda truth, rng: truth * (1 + 0.2 * rng.standard_normal(truth.size)),
    "delayed": _delay,
    "partial": _partial,
    "inverted": lambda truth, rng: 2 * truth.mean() - truth,
}


def _inside(estimate, bounds):
    return bounds is None or math.isnan(estimate) or bounds[0] <= estimate <= bounds[1]


@pytest.mark.parametrize("name", MODELS)
def test_every_interval_holds_its_estimate(reference, full_rows, tmp_path, name):
    r = score_lines(_answers(full_rows, MODELS[name]), reference, tmp_path, name.replace(" ", "_"), resamples=300)
    iv = r.extra["intervals"]
    for score_name, bounds in iv["overall"].items():
        assert _inside(r.overall[score_name], bounds), (name, score_name, r.overall[score_name], bounds)
    for family, scores in iv["families"].items():
        for score_name, bounds in scores.items():
            assert _inside(r.families[family][score_name], bounds), (name, family, score_name, bounds)
    low, high = r.extra["accuracy"]["wilson_95"]
    assert low <= r.extra["accuracy"]["unit_rate"] <= high


def test_a_paired_difference_lies_inside_its_interval(reference, full_rows, tmp_path):
    a = score_lines(_answers(full_rows, MODELS["exact"]), reference, tmp_path, "a")
    b = score_lines(_answers(full_rows, MODELS["constant mean"]), reference, tmp_path, "b")
    c = score_lines(_answers(full_rows, MODELS["noisy"]), reference, tmp_path, "c")
    for test in neighbour_tests([a, b, c], PAPER_CONFIG):
        for t in test["scores"].values():
            if t["difference"] is not None and t["interval"] is not None:
                assert t["interval"][0] <= t["difference"] <= t["interval"][1], t


def test_the_constant_answer_no_longer_earns_the_papers_0_30(reference, full_rows, tmp_path):
    """Before: `const0 FULL 0.3000 [0.0078, 0.2296]`; a flat answer has no phase."""
    r = score_lines(_answers(full_rows, MODELS["constant 0"]), reference, tmp_path, "zero", resamples=200)
    assert math.isnan(r.overall["mb_core"]) and r.overall["mb_core_calibrated"] == 0.0
    assert r.extra["intervals"]["overall"]["mb_core"] is None
    assert r.extra["intervals"]["overall"]["mb_core_calibrated"] == [0.0, 0.0]


def test_phases_of_plus_and_minus_180_average_to_180_not_0():
    """A real SmolLM2 run: two sweeps at +180 and -180 were averaged to 0."""
    assert abs(float(angle_mean(np.array([180.0, -180.0])))) == 180.0
    assert abs(float(angle_mean(np.array([179.0, -179.0])))) == 180.0
    assert float(angle_mean(np.array([170.0, -160.0]))) == pytest.approx(-175.0)
    # Clustered phases away from the cut: the plain mean, bit for bit (the paper's numbers).
    values = np.array([-12.25, -3.5, 7.0, 1.125e-3])
    assert float(angle_mean(values)) == float(np.mean(values))
    # No mean direction (equally spread): the plain mean is kept.
    assert float(angle_mean(np.array([0.0, 120.0, -120.0]))) == 0.0
    assert float(angle_spread(np.array([5.0, 5.0]))) == pytest.approx(0.0, abs=1e-6)
    assert float(angle_spread(np.array([170.0, -170.0]))) == pytest.approx(10.03, abs=0.01)  # sqrt(-2 ln cos 10 deg)


def test_the_mid_band_phase_of_an_inverted_answer_reads_180(reference, full_rows, tmp_path):
    """Every sweep 180 degrees off, at +180 or -180 by rounding: the mid-band phase is 180, not 90."""
    r = score_lines(_answers(full_rows, MODELS["inverted"]), reference, tmp_path, "inverted")
    for family, s in r.families.items():
        assert s["phase_abs_deg_mid"] == pytest.approx(180.0, abs=1e-3), family
    assert (abs(r.summary["phase_err_deg"]) > 179.99).all()


def test_a_flat_sweep_has_no_phase_and_is_counted(reference):
    rows = by_sweep(select_rows(reference.table, "SMOKE"))[0]
    truth = np.array([r["ground_truth"] for r in rows])
    m = sweep_metrics(truth, np.full(T, truth.mean()), 4.0, T)
    assert m["flat"] == 1.0 and math.isnan(m["phase_err_deg"]) and math.isnan(m["phase_model_deg"])
    assert m["gain"] == pytest.approx(0.0, abs=1e-9) and m["phase_err_cal_deg"] == 180.0
    moving = sweep_metrics(truth, truth, 4.0, T)
    assert moving["flat"] == 0.0 and moving["phase_err_deg"] == pytest.approx(0.0, abs=1e-9)


def test_missing_answers_do_not_inflate_h2_over_h1(reference, full_rows):
    """A pure 0.9 gain about the sweep's mean: median H2/H1 was 0.014 with every answer and 0.652
    with 4 % missing (the mean leaked into harmonics fitted without a constant)."""
    rng = np.random.default_rng(5)
    whole, gaps = [], []
    for sweep in by_sweep(full_rows):
        f = sweep[0]["frequency_cycles"]
        truth = np.array([r["ground_truth"] for r in sweep])
        model = truth.mean() + 0.9 * (truth - truth.mean())
        holed = np.where(rng.random(T) < 0.04, np.nan, model)
        whole.append(sweep_metrics(truth, model, f, T)["h2_over_h1"])
        gaps.append(sweep_metrics(truth, holed, f, T)["h2_over_h1"])
    median_whole, median_gaps = np.nanmedian(whole), np.nanmedian(gaps)
    assert median_whole < 0.03
    assert abs(median_gaps - median_whole) < 0.005, (median_whole, median_gaps)


def test_a_pure_second_harmonic_is_measured_with_gaps_and_an_offset():
    t = np.arange(T, dtype=float)
    w = 2 * math.pi * 4 / T
    truth = 10 + np.sin(w * t)
    model = 10 + np.sin(w * t) + 0.25 * np.cos(2 * w * t + 0.3)
    model[[3, 17, 40, 41]] = np.nan
    m = sweep_metrics(truth, model, 4.0, T)
    assert m["h2_over_h1"] == pytest.approx(0.25, rel=1e-9)


def test_harmonics_that_alias_are_not_measured():
    assert measurable_harmonics(4.0, 64) == (1, 2, 3)
    assert measurable_harmonics(8.0, 64) == (1, 2, 3)
    # 16 cycles: the 2nd harmonic is the Nyquist frequency, the 3rd folds onto the 1st.
    assert measurable_harmonics(16.0, 64) == (1,)


def test_a_wilson_bound_at_zero_successes_is_exactly_zero():
    """Printed as 2.17e-19 before."""
    assert wilson_interval(0, 9600)[0] == 0.0
    assert wilson_interval(9600, 9600)[1] == 1.0
    low, high = wilson_interval(3, 10)
    assert 0 < low < 0.3 < high < 1


def test_exact_answers_keep_their_scores(reference, full_rows, tmp_path):
    r = score_lines(list(baseline_lines(full_rows)), reference, tmp_path, "exact")
    assert r.overall["mb_core"] == pytest.approx(1.0, abs=1e-5)  # the paper's: six-decimal truncation shows
    assert r.overall["mb_core_calibrated"] == pytest.approx(1.0, abs=1e-12)
    assert r.overall["mb_plus"] == pytest.approx(0.7636, abs=1e-4)
    assert (r.summary["num_flat"] == 0).all()


def test_the_readme_says_what_the_exact_answers_score_on_mb_plus(reference, tmp_path):
    """The README said MB-Core and MB-Plus "(1 is ideal)"; the exact answers score the paper's MB-Plus
    0.79, and only the calibrated scores reach 1. The numbers it quotes are the baseline's, to 4 places."""
    from .conftest import REPO

    readme = " ".join((REPO / "README.md").read_text().split())
    assert "1 is ideal" not in readme
    quoted = {}
    for preset in ("SMOKE", "MVP", "FULL"):
        lines = list(baseline_lines(select_rows(reference.table, preset)))
        quoted[preset] = score_lines(lines, reference, tmp_path, name=preset.lower(), preset=preset).overall
        assert quoted[preset]["mb_plus_calibrated"] == 1.0 and quoted[preset]["mb_core_calibrated"] == 1.0
    smoke, mvp, full = (f"{quoted[p]['mb_plus']:.4f}" for p in ("SMOKE", "MVP", "FULL"))
    assert smoke == mvp
    assert f"score MB-Plus {smoke} on SMOKE and MVP and {full} on FULL" in readme
