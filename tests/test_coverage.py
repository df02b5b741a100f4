"""Intervals that cover what they say (issue #30, section 3).

Simulated submissions with known population values (the scheme of `benchmarks/bench_coverage.py`,
smaller): each sweep's metrics are drawn around fixed means, so the population value of a cell is
its mean and that of a score is the scorer's formula on the cells' means. Seeds are fixed, so
every count below is the same on every run; the bands are the nominal 0.95 -+ 3 binomial
standard errors, sqrt(0.95 x 0.05 / n) for n independent intervals (intervals of different cells
and families are independent), so a correct method passes them with any seed but one in about
400, and a method as far off as the bootstrap (0.61 per cell with 2 sweeps, 0.88 with 6) fails
them by many standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mathbode.evaluator.presentation.report import interval_notes, interval_text
from mathbode.evaluator.results import HEADLINE
from mathbode.evaluator.scorer.aggregate import PAPER_CONFIG, SWEEP_COLUMNS
from mathbode.evaluator.scorer.uncertainty import (
    INPUTS,
    family_headline,
    paired_difference,
    score_intervals,
    t_cdf,
    t_quantile,
)
from mathbode.evaluator.table import Table
from mathbode.schema import layout
from mathbode.schema.selection import key_fields, select_rows

from .conftest import by_sweep, score_lines

FAMILIES = tuple(layout().families)
#: A typical model: gain 0.9 +- 0.08 and phase error -10 +- 8 degrees per sweep (correlated 0.5).
GAIN, GAIN_SD, PHASE, PHASE_SD = 0.9, 0.08, -10.0, 8.0


def _band(n: int) -> tuple[float, float]:
    se = math.sqrt(0.95 * 0.05 / n)
    return 0.95 - 3 * se, 0.95 + 3 * se


def _means(sizes: dict[float, int], gain: float = GAIN, phase: float = PHASE) -> dict[str, dict[float, np.ndarray]]:
    """family -> frequency -> population means of INPUTS, shifted a little per family and frequency."""
    out: dict[str, dict[float, np.ndarray]] = {}
    for j, family in enumerate(FAMILIES):
        out[family] = {}
        for f in sizes:
            g = gain + 0.01 * (j - 2) - 0.005 * math.log2(f)
            p = phase - math.log2(f)
            values = {"gain": g, "phase_err_deg": p, "r2": 0.85, "res_acf1": 0.3, "compliance": 0.96}
            values |= {"gain_cal": g, "phase_err_cal_deg": p, "r2_cal": 0.8, "acf1_cal": -0.15}
            out[family][f] = np.array([[values[name] for name in INPUTS]])
    return out


def _draw(rng: np.random.Generator, means: dict[str, dict[float, np.ndarray]], sizes: dict[float, int]) -> Table:
    rows: dict[str, list] = {c: [] for c in [*SWEEP_COLUMNS, *INPUTS]}
    col = {name: i for i, name in enumerate(INPUTS)}
    for family, cells in means.items():
        for f, m in cells.items():
            n, m = sizes[f], m[0]
            z1, z2 = rng.standard_normal(n), rng.standard_normal(n)
            gain = m[col["gain"]] + GAIN_SD * z1
            phase = m[col["phase_err_deg"]] + PHASE_SD * (0.5 * z1 + math.sqrt(0.75) * z2)
            values = {"gain": gain, "phase_err_deg": phase, "gain_cal": gain, "phase_err_cal_deg": phase}
            for name in ("r2", "res_acf1", "compliance", "r2_cal", "acf1_cal"):
                sd = 0.02 if name in ("r2", "r2_cal", "compliance") else 0.1
                values[name] = m[col[name]] + sd * rng.standard_normal(n)
            for name in INPUTS:
                rows[name] += values[name].tolist()
            rows["family"] += [family] * n
            rows["question_id"] += list(range(n))
            rows["amplitude_scale"] += [1.0] * n
            rows["frequency_cycles"] += [f] * n
            rows["phase_deg"] += [0.0] * n
    data = {c: np.array(v, dtype=object if c == "family" else float) for c, v in rows.items()}
    data["question_id"] = data["question_id"].astype(np.int64)
    return Table(data, length=len(rows["family"]))


def _truth(means: dict[str, dict[float, np.ndarray]]) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    families = {f: {n: float(v[0]) for n, v in family_headline(m, PAPER_CONFIG).items()} for f, m in means.items()}
    return families, {n: float(np.mean([s[n] for s in families.values()])) for n in HEADLINE}


def _covered(bounds, value) -> bool:
    return bounds[0] <= value <= bounds[1]


def test_t_quantiles_and_distribution_match_the_tables():
    assert t_quantile(0.975, 1.0) == pytest.approx(12.706205, abs=1e-5)
    assert t_quantile(0.975, 2.0) == pytest.approx(4.302653, abs=1e-5)
    assert t_quantile(0.975, 5.0) == pytest.approx(2.570582, abs=1e-5)
    assert t_quantile(0.975, 30.0) == pytest.approx(2.042272, abs=1e-5)
    assert t_quantile(0.975, 1e9) == pytest.approx(1.959964, abs=1e-5)
    for df in (1.3, 2.5, 7.7):  # Satterthwaite's degrees of freedom are not whole
        assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-12)
    assert t_cdf(-1.7, 1.0) == pytest.approx(0.5 + math.atan(-1.7) / math.pi, abs=1e-12)  # Cauchy


def test_two_sweeps_per_cell_cover_95_percent_and_the_overall_gets_none_with_the_reason():
    """SMOKE's shape (frequencies 4 and 8, 2 sweeps per cell), 300 simulations: 3,000 bars each
    for gain and phase, band 0.950 -+ 0.012 (the bootstrap's bars covered 0.61); 1,500 family
    MB-Core intervals, from 0.950 - 0.017 to 0.99: t on 1 to 2 degrees of freedom makes them
    wide and a little conservative (measured here 0.979; the benchmark's 0.966)."""
    sizes = {4.0: 2, 8.0: 2}
    means = _means(sizes)
    true_families, _ = _truth(means)
    rng = np.random.default_rng(30)
    hits = {"gain": 0, "phase": 0, "family": 0}
    n = n_family = 0
    for _ in range(300):
        headline, bars = score_intervals(_draw(rng, means, sizes), PAPER_CONFIG, FAMILIES)
        for row in bars.rows():
            m = means[row["family"]][float(row["frequency_cycles"])][0]
            hits["gain"] += _covered([row["gain_low"], row["gain_high"]], m[INPUTS.index("gain")])
            hits["phase"] += _covered([row["phase_err_low_deg"], row["phase_err_high_deg"]], m[1])
            n += 1
        for f in FAMILIES:
            hits["family"] += _covered(headline["families"][f]["mb_core"], true_families[f]["mb_core"])
            n_family += 1
    low, high = _band(n)
    assert low <= hits["gain"] / n <= high, hits
    assert low <= hits["phase"] / n <= high, hits
    assert _band(n_family)[0] <= hits["family"] / n_family <= 0.99, hits
    # No overall interval: with 2 sweeps none covers 93-97 %; the reason says so.
    assert all(headline["overall"][name] is None for name in HEADLINE)
    why = headline["no_interval"]["overall.mb_core"]
    assert why.startswith("2 sweeps in 10 cells it depends on") and "cannot be told from noise" in why


def test_six_sweeps_per_cell_cover_95_percent_per_cell_per_family_and_overall():
    """FULL's shape (five frequencies, 6 sweeps per cell), 200 simulations: bars 5,000 (band
    0.950 -+ 0.009), family MB-Core 1,000 (-+ 0.021), overall 200 (-+ 0.046). Measured here:
    bars 0.948 (gain) and 0.951 (phase), family MB-Core 0.955, overall MB-Core 0.950 and
    calibrated MB-Plus 0.955 (the bootstrap's bars covered 0.89)."""
    sizes = {f: 6 for f in (1.0, 2.0, 4.0, 8.0, 16.0)}
    means = _means(sizes)
    true_families, true_overall = _truth(means)
    rng = np.random.default_rng(31)
    gain_hit = phase_hit = n_bars = family_hit = n_family = overall_hit = plus_hit = 0
    sims = 200
    for _ in range(sims):
        headline, bars = score_intervals(_draw(rng, means, sizes), PAPER_CONFIG, FAMILIES)
        for row in bars.rows():
            m = means[row["family"]][float(row["frequency_cycles"])][0]
            gain_hit += _covered([row["gain_low"], row["gain_high"]], m[INPUTS.index("gain")])
            phase_hit += _covered([row["phase_err_low_deg"], row["phase_err_high_deg"]], m[1])
            n_bars += 1
        for f in FAMILIES:
            family_hit += _covered(headline["families"][f]["mb_core"], true_families[f]["mb_core"])
            n_family += 1
        overall_hit += _covered(headline["overall"]["mb_core"], true_overall["mb_core"])
        plus_hit += _covered(headline["overall"]["mb_plus_calibrated"], true_overall["mb_plus_calibrated"])
    for hits in (gain_hit, phase_hit):
        assert _band(n_bars)[0] <= hits / n_bars <= _band(n_bars)[1], (gain_hit, phase_hit)
    assert _band(n_family)[0] <= family_hit / n_family <= _band(n_family)[1], family_hit
    assert _band(sims)[0] <= overall_hit / sims <= _band(sims)[1], overall_hit
    assert _band(sims)[0] <= plus_hit / sims <= _band(sims)[1], plus_hit


@pytest.mark.parametrize("per_cell", [2, 6])
def test_a_paired_test_of_a_model_with_itself_rejects_at_most_5_percent(per_cell):
    """Two independent submissions of one model (same population): 200 tests each of MB-Core
    and calibrated MB-Plus; the rejection rate at p < 0.05 is at most 0.05 + 3 x 0.0154.
    Measured here: 3 and 3 of 200 with 2 sweeps per cell (conservative: t on few degrees of
    freedom), 10 and 9 of 200 with 6."""
    sizes = {4.0: per_cell, 8.0: per_cell, 16.0: per_cell}
    means = _means(sizes)
    rng = np.random.default_rng(32 + per_cell)
    rejected = {"mb_core": 0, "mb_plus_calibrated": 0}
    sims = 200
    for _ in range(sims):
        a, b = _draw(rng, means, sizes), _draw(rng, means, sizes)
        for name in rejected:
            test = paired_difference(a, b, PAPER_CONFIG, name)
            assert test["interval"] is not None and test["interval"][0] <= test["difference"] <= test["interval"][1]
            rejected[name] += test["p_value"] < 0.05
    limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims)
    assert all(r / sims <= limit for r in rejected.values()), rejected


def test_near_the_clips_2_sweeps_per_cell_still_cover_95_percent_per_family():
    """Gain 0.72 and phase -42 degrees: the gain part of MB-Core clipped (|G - 1| > 0.25), the
    phase part at its clip (45 degrees), MB-Core near 0. With 2 sweeps a cell the secants look
    12.7 standard errors away (the standard error is a guess from 1 degree of freedom): with 2
    they saw no slope and the interval was [0, 0], covering 23 % on the simulation. 150
    simulations x 5 families: from 0.950 - 0.024 to 0.99 (conservative, as above; measured here
    0.984, the benchmark's "poor" model 0.963)."""
    sizes = {4.0: 2, 8.0: 2}
    means = _means(sizes, gain=0.72, phase=-42.0)
    true_families, _ = _truth(means)
    rng = np.random.default_rng(35)
    covered = n = 0
    for _ in range(150):
        headline, _ = score_intervals(_draw(rng, means, sizes), PAPER_CONFIG, FAMILIES)
        for f in FAMILIES:
            covered += _covered(headline["families"][f]["mb_core"], true_families[f]["mb_core"])
            n += 1
    assert _band(n)[0] <= covered / n <= 0.99, covered


def test_a_cell_of_one_sweep_gets_no_bar_and_its_scores_no_interval():
    sizes = {1.0: 6, 2.0: 6, 4.0: 6, 8.0: 6, 16.0: 6}
    sweeps = _draw(np.random.default_rng(33), _means(sizes), sizes)
    # Keep one sweep of linear_solve at 16 cycles: MB-Plus depends on it (compliance), MB-Core does not.
    at_16 = np.flatnonzero((sweeps["family"] == FAMILIES[0]) & (sweeps["frequency_cycles"] == 16.0))
    sweeps = sweeps.take([i for i in range(len(sweeps)) if i not in set(at_16[1:].tolist())])
    headline, bars = score_intervals(sweeps, PAPER_CONFIG, FAMILIES)
    assert headline["families"][FAMILIES[0]]["mb_core"] is not None
    assert headline["families"][FAMILIES[0]]["mb_plus"] is None and headline["overall"]["mb_plus"] is None
    assert headline["no_interval"]["overall.mb_plus"] == (
        f"one sweep in a cell it depends on ({FAMILIES[0]} at 16 cycles): the spread of one sweep cannot be measured"
    )
    row = [r for r in bars.rows() if r["family"] == FAMILIES[0] and r["frequency_cycles"] == 16.0][0]
    assert math.isnan(row["gain_low"]) and math.isnan(row["phase_err_high_deg"])


def test_a_smoke_file_says_in_words_why_its_overall_has_no_interval(reference, tmp_path):
    rng = np.random.default_rng(34)
    lines = []
    for sweep in by_sweep(select_rows(reference.table, "SMOKE")):
        truth = np.array([r["ground_truth"] for r in sweep])
        noisy = truth * (1 + 0.02 * rng.standard_normal(truth.size))
        lines += [{**key_fields(r), "prediction": float(y)} for r, y in zip(sweep, noisy, strict=True)]
    r = score_lines(lines, reference, tmp_path, "smoke", resamples=1)
    assert r.extra["intervals"]["overall"]["mb_core"] is None
    assert all(r.extra["intervals"]["families"][f]["mb_core"] is not None for f in FAMILIES)
    assert interval_text(r, "mb_core").endswith(" [no interval]")
    (note,) = interval_notes(r)
    assert note.startswith("no 95 % interval for MB-Core, MB-Plus, cal. MB-Core, cal. MB-Plus: 2 sweeps in 10 cells")
    # Each frequency's bars are still given (t on 1 degree of freedom), and hold the reported means.
    assert np.isfinite(r.summary["gain_low"]).all()
    assert (r.summary["gain_low"] <= r.summary["gain"]).all() and (r.summary["gain"] <= r.summary["gain_high"]).all()
