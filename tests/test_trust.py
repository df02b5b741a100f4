"""Scores a leaderboard can trust: the calibrated MB-Plus, bootstrap intervals, paired tests."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.score import main as score_cli
from mathbode.core.atomic import write_jsonl
from mathbode.evaluator.scorer.aggregate import PAPER_CONFIG, family_scores, frequency_summary
from mathbode.evaluator.scorer.scoring import score
from mathbode.evaluator.scorer.uncertainty import Cells, intervals, mcnemar, wilson_interval
from mathbode.schema import layout, read_submission
from mathbode.schema.selection import key_fields, select_rows

from .conftest import by_sweep, score_lines

LAY = layout()
HEADLINE = ("mb_core", "mb_plus", "mb_core_calibrated", "mb_plus_calibrated")


def _answers(rows, transform):
    """Prediction lines: `transform(sweep truths as an array) -> answers` applied per sweep."""
    lines = []
    for sweep in by_sweep(rows):
        truth = np.array([r["ground_truth"] for r in sweep])
        for r, y in zip(sweep, transform(truth), strict=True):
            lines.append({**key_fields(r), "prediction": None if y is None or not math.isfinite(y) else float(y)})
    return lines


@pytest.fixture(scope="module")
def exact(reference, full_rows, tmp_path_factory):
    lines = list(baseline_lines(full_rows))
    return score_lines(lines, reference, tmp_path_factory.mktemp("exact"), "exact", resamples=200)


def test_the_exact_solver_scores_exactly_one_calibrated(exact):
    for family, s in exact.families.items():
        assert s["mb_core_calibrated"] == pytest.approx(1.0, abs=1e-9), family
        assert s["mb_plus_calibrated"] == pytest.approx(1.0, abs=1e-9), family
    assert exact.overall["mb_plus_calibrated"] == pytest.approx(1.0, abs=1e-9)
    # The paper's MB-Plus reads below 1 for the same answers (kept unchanged, for comparison).
    assert exact.overall["mb_plus"] == pytest.approx(0.7636, abs=1e-4)
    assert exact.families["similar_triangles"]["mb_plus"] == pytest.approx(0.5720, abs=1e-4)


def test_noise_lowers_the_calibrated_score_monotonically(reference, full_rows, tmp_path):
    """Independent noise on every answer (the same draws at every level, scaled), 0 to 20 % of the amplitude."""
    scores = []
    for level in (0.0, 1e-5, 1e-4, 1e-3, 1e-2, 5e-2, 0.2):
        rng = np.random.default_rng(11)

        def noisy(truth, level=level, rng=rng):
            amplitude = (truth.max() - truth.min()) / 2
            return truth + level * amplitude * rng.standard_normal(len(truth))

        r = score_lines(_answers(full_rows, noisy), reference, tmp_path, f"noise{level}")
        scores.append(r.overall["mb_plus_calibrated"])
    assert scores[0] == pytest.approx(1.0, abs=1e-9)
    assert all(a > b for a, b in zip(scores, scores[1:], strict=False)), scores
    assert all(0 <= s <= 1 for s in scores)


@pytest.mark.parametrize(
    "name, transform",
    [
        ("delay-1", lambda t: np.concatenate([[None], t[:-1]]).astype(float)),
        ("delay-2", lambda t: np.concatenate([[None, None], t[:-2]]).astype(float)),
        ("gain-0.8", lambda t: t.mean() + 0.8 * (t - t.mean())),
        ("gain-1.3", lambda t: t.mean() + 1.3 * (t - t.mean())),
    ],
)
def test_a_delay_or_a_gain_error_costs_no_less_than_in_the_papers_score(
    reference, full_rows, exact, tmp_path, name, transform
):
    r = score_lines(_answers(full_rows, transform), reference, tmp_path, name)
    paper_drop = exact.overall["mb_plus"] - r.overall["mb_plus"]
    calibrated_drop = exact.overall["mb_plus_calibrated"] - r.overall["mb_plus_calibrated"]
    assert paper_drop > 0
    assert calibrated_drop >= paper_drop, (name, calibrated_drop, paper_drop)
    assert r.overall["mb_plus_calibrated"] <= 1


@pytest.mark.parametrize("value", [0.0, 5.0])
def test_an_answer_that_does_not_move_scores_zero_calibrated(reference, full_rows, tmp_path, value):
    r = score_lines(_answers(full_rows, lambda t: np.full_like(t, value)), reference, tmp_path, "constant")
    assert r.overall["mb_core_calibrated"] == 0.0 and r.overall["mb_plus_calibrated"] == 0.0
    # The paper's code reads atan2(0, 0) as a phase of 0 degrees (MB-Core 0.30 for answering 0):
    # a flat answer has no phase, so the paper's MB-Core is n/a and says why.
    assert math.isnan(r.overall["mb_core"])
    assert np.isnan(r.sweeps["phase_err_deg"]).all() and (r.sweeps["flat"] == 1).all()
    assert (r.summary["num_flat"] == r.summary["num_sweeps"]).all()
    assert "do not move" in r.families["linear_solve"]["note"]


def test_intervals_are_deterministic_and_hold_the_point_estimate(exact, reference, full_rows, tmp_path):
    noisy = score_lines(
        _answers(
            full_rows, lambda t: t * (1 + 0.03 * np.random.default_rng(int(t[0] * 1000) % 2**32).standard_normal(64))
        ),
        reference,
        tmp_path,
        "noisy",
        resamples=300,
    )
    again = intervals(noisy.sweeps, PAPER_CONFIG, tuple(LAY.families))
    assert again == intervals(noisy.sweeps, PAPER_CONFIG, tuple(LAY.families))
    # The scorer's intervals are built about its own reported floats (the same statistic summed
    # in another order): equal to the last bits.
    for name, bounds in again["overall"].items():
        assert bounds == pytest.approx(noisy.extra["intervals"]["overall"][name], abs=1e-12), name
    for name in HEADLINE:
        low, high = noisy.extra["intervals"]["overall"][name]
        assert low <= noisy.overall[name] <= high, name
        assert high - low > 0, name
    assert exact.extra["intervals"]["overall"]["mb_plus_calibrated"] == [1.0, 1.0]
    assert "intervals" not in score(read_submission(tmp_path / "noisy.jsonl").predictions, reference, "x").extra


def test_the_vectorised_scores_equal_the_point_estimates(exact):
    noisy = exact.sweeps.copy()
    noisy["gain"] = noisy["gain"] * np.linspace(0.8, 1.2, len(noisy))
    point = family_scores(frequency_summary(noisy), PAPER_CONFIG)
    replicated = Cells.of(noisy).point(PAPER_CONFIG)["families"]
    for family, s in point.items():
        for name in HEADLINE:
            assert replicated[family][name][0] == pytest.approx(s[name], abs=1e-12), (family, name)


def test_the_95_percent_interval_covers_the_true_score_about_95_percent_of_the_time(exact):
    """200 synthetic models on the FULL grid (6 sweeps per mid-band cell): each sweep's gain and
    phase error are drawn around a known truth (gain 0.9 +- 0.08, phase -10 +- 8 degrees), so the
    true MB-Core is 1 - 0.5 (0.1 / 0.25) - 0.5 (10 / 45). Measured: 188 of 200 (0.94)."""
    true_core = 1 - 0.5 * (0.1 / 0.25) - 0.5 * (10 / 45)
    rng = np.random.default_rng(2025)
    covered = 0
    for _ in range(200):
        sweeps = exact.sweeps.copy()
        sweeps["gain"] = rng.normal(0.9, 0.08, len(sweeps))
        sweeps["phase_err_deg"] = rng.normal(-10, 8, len(sweeps))
        low, high = intervals(sweeps, PAPER_CONFIG, tuple(LAY.families))["overall"]["mb_core"]
        covered += low <= true_core <= high
    assert 0.90 <= covered / 200 <= 0.99, covered


def test_wilson_and_mcnemar_match_known_values():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) is None
    assert mcnemar(10, 2) == pytest.approx(2 * sum(math.comb(12, i) for i in range(3)) / 2**12)
    assert mcnemar(40, 20) == pytest.approx(math.erfc(math.sqrt(((20 - 1) ** 2 / 60) / 2)))
    assert mcnemar(0, 0) == 1.0


def test_two_files_get_paired_tests_on_the_sweeps_they_share(reference, full_rows, tmp_path):
    write_jsonl(tmp_path / "exact.jsonl", baseline_lines(full_rows))
    smoke = [line for line in baseline_lines(select_rows(reference.table, "SMOKE"))]
    for line in smoke[::2]:
        line["response"] = "[answer_start] 0.5 [answer_end]"
    write_jsonl(tmp_path / "half.jsonl", smoke)
    out = tmp_path / "report"
    result = CliRunner().invoke(
        score_cli, [str(tmp_path / "exact.jsonl"), str(tmp_path / "half.jsonl"), "--no-plots", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "test: exact vs half: compared only on the 20 sweeps both were scored on (150 and 20)." in result.output
    assert "test: exact - half, mb_core: +0.5000 [+0.5000, +0.5000], p = " in result.output
    assert "p < 1e-16 (paired t test)" in result.output
    tests = json.loads((out / "comparisons.json").read_text())
    assert [(t["first"], t["second"], t["shared_sweeps"]) for t in tests] == [("exact", "half", 20)]
    # Counted in distinct prompts, not rows: SMOKE's 1,280 rows are 85 prompts; every other line of
    # "half" is wrong, so 640 rows, but a prompt is one unit, wrong where most of its rows are: 25.
    correctness = tests[0]["correctness"]
    assert (correctness["unit"], correctness["n_units"], correctness["shared_rows"]) == ("distinct prompt", 85, 1280)
    assert correctness["only_first_correct"] == 25 and correctness["only_second_correct"] == 0
    board = pd.read_csv(out / "leaderboard.csv")
    assert list(board["label"]) == ["exact", "half"]
    assert board.loc[0, "mb_plus_calibrated_low"] == 1.0
    assert "![Bode plot]" not in (out / "report.md").read_text()  # --no-plots: no image link
    off = CliRunner().invoke(
        score_cli,
        [str(tmp_path / "exact.jsonl"), "--bootstrap", "0", "--json", "--no-plots", "--out", str(tmp_path / "r2")],
    )
    assert "intervals" not in json.loads(off.output)[0]
