"""Evidence counted in units (issue #48): rows asking one prompt are one unit, many tests are
adjusted together, and a multi-tone claim is judged against the noise it measures.

Each test reads a model with a known answer through the real scorer on a real release's rows.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mathbode.cli.build import main as build_cli
from mathbode.evaluator.scorer.multitone import INCONSISTENCY, UNDECIDED
from mathbode.evaluator.scorer.scoring import score
from mathbode.evaluator.scorer.uncertainty import holm, wilson_interval
from mathbode.evaluator.scorer.variants import exact_mcnemar
from mathbode.hub.reference import resolve_reference
from mathbode.schema.answers import Prediction
from mathbode.schema.keys import row_key
from mathbode.schema.selection import select_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from calibration import MODELS, Prepared, Structure, binomial_bound, calibrate  # noqa: E402


def _build(tmp_path_factory, name, *args):
    out = tmp_path_factory.mktemp(name) / "release"
    result = CliRunner().invoke(build_cli, [*args, "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return resolve_reference(None, str(out))


@pytest.fixture(scope="module")
def gap(tmp_path_factory):
    return _build(tmp_path_factory, "gap", "--variants", "gap", "--families", "linear_solve")


@pytest.fixture(scope="module")
def multitone(tmp_path_factory):
    return _build(tmp_path_factory, "mt", "--drives", "multitone", "--families", "linear_solve,ratio_saturation")


def _score(reference, rows, values, preset, **conditions):
    predictions = [
        Prediction(row_key(r), i + 1, None, float(v), False) for i, (r, v) in enumerate(zip(rows, values, strict=True))
    ]
    return score(predictions, reference, "m", preset=preset, conditions=conditions or None)


def test_holm_adjusts_as_the_step_down_procedure_does():
    # Sorted 0.01, 0.02, 0.03, 0.5: 4 x 0.01, max(3 x 0.02, 0.04), max(2 x 0.03, 0.06), 0.5.
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06], abs=1e-15)
    assert holm([0.9, 0.8]) == [1.0, 1.0] and holm([]) == []


def test_one_wrong_prompt_asked_in_many_rows_is_one_discordant_unit(gap):
    # The case: the exact answers everywhere, but ONE distinct GS prompt answered 0.001 off
    # in every row that asks it, under --dedupe (asked once, copied). Counted in rows it was 28
    # discordant pairs and p = 7.5e-9; counted in distinct prompts it is one pair and p = 1.
    rows = select_rows(gap.table, "MVP")
    gs = [r for r in rows if r["family"] == "linear_solve__gs"]
    counts: dict[str, int] = {}
    for r in gs:
        counts[r["prompt"]] = counts.get(r["prompt"], 0) + 1
    wrong = max(counts, key=lambda p: (counts[p], p))
    values = [r["ground_truth"] + (0.001 if r["prompt"] == wrong else 0.0) for r in rows]
    result = _score(gap, rows, values, "MVP", dedupe="yes")
    entry = result.extra["variants"]["linear_solve"]["GS"]
    assert counts[wrong] >= 20 and entry["shared_rows"] == len(gs)
    assert entry["unit"] == "distinct prompt" and entry["problems"] == [0]
    assert entry["n_units"] == entry["distinct_prompts"] == len(counts)
    assert (entry["only_original_exact"], entry["only_variant_exact"]) == (1, 0)
    assert entry["mcnemar_p"] == 1.0 == entry["mcnemar_p_holm"] and entry["mcnemar_tests"] == 5
    # What counting rows said (kept here as the before): 28 rows all one way.
    assert exact_mcnemar(counts[wrong], 0) == pytest.approx(2 * 0.5 ** counts[wrong])


def test_the_wilson_interval_counts_distinct_prompts_not_rows():
    reference = resolve_reference(None)
    rows = select_rows(reference.table, "SMOKE")
    accuracy = _score(reference, rows, [r["ground_truth"] for r in rows], "SMOKE").extra["accuracy"]
    assert (accuracy["rows"], accuracy["correct"]) == (1280, 1280)
    assert (accuracy["unit"], accuracy["n_units"], accuracy["units_exact"], accuracy["problems"]) == (
        "distinct prompt",
        len({r["prompt"] for r in rows}),
        len({r["prompt"] for r in rows}),
        5,
    )
    assert accuracy["n_units"] == 85
    assert accuracy["wilson_95"] == wilson_interval(85, 85)
    assert accuracy["wilson_95"][0] == pytest.approx(85 / (85 + 1.959964**2), abs=1e-6)  # 0.9568, not 0.9970


def test_a_unit_is_exact_when_most_of_its_rows_are(gap):
    # A distinct prompt asked in several rows, answered exactly in all but one of them, is exact.
    rows = select_rows(gap.table, "MVP")
    original = [i for i, r in enumerate(rows) if r["family"] == "linear_solve"]
    prompt = rows[original[0]]["prompt"]
    asked = [i for i in original if rows[i]["prompt"] == prompt]
    assert len(asked) >= 3
    values = [r["ground_truth"] for r in rows]
    values[asked[0]] += 0.5
    accuracy = _score(gap, rows, values, "MVP").extra["accuracy"]
    assert accuracy["correct"] == accuracy["rows"] - 1 and accuracy["units_exact"] == accuracy["n_units"]


def _noisy(reference, rows, level, rng, dedupe=False):
    prompts: dict[str, int] = {}
    prompt = np.array([prompts.setdefault(r["prompt"], len(prompts)) for r in rows])
    request = prompt if dedupe else np.arange(len(rows))
    draws = rng.standard_normal(int(request.max()) + 1)
    return [r["ground_truth"] * (1 + level * draws[request[i]]) for i, r in enumerate(rows)]


@pytest.mark.parametrize("level", [0.01, 0.0001])
def test_noise_is_read_as_linear_within_the_noise_not_as_inconsistency(multitone, level):
    # The finding 1: `noisy` (fresh noise on every request) over the multi-tone release,
    # stateless, read "per-prompt inconsistency" in every family, its detection lines holding its
    # noise (-23.7 dB against -21.7 to -25.8 dB measured; at 1e-4: -63.7 against -64.3).
    rows = select_rows(multitone.table, "ALL")
    result = _score(multitone, rows, _noisy(multitone, rows, level, np.random.default_rng(3)), None)
    families = result.extra["multitone"]["families"]
    assert set(families) == {"linear_solve", "ratio_saturation"}
    for m in families.values():
        assert m["verdict"] == "linear within the noise; memory not read (stateless protocol)"
        assert m["distortion_detected"] is False and m["noise"]["measured"] is True
        # The added levels sit at the measured noise (within 3 dB: 2 periods, 12 experiments).
        assert (
            abs(m["even_added_db"] - m["noise"]["level_db"]) < 3 and abs(m["odd_added_db"] - m["noise"]["level_db"]) < 3
        )
        assert m["distortion_tests"]["tests"] == 4 and m["distortion_tests"]["claim_rate"] == 0.001


def test_noise_not_measured_under_dedupe_is_said_and_not_called_inconsistency(multitone):
    rows = select_rows(multitone.table, "ALL")
    values = _noisy(multitone, rows, 0.01, np.random.default_rng(4), dedupe=True)
    families = _score(multitone, rows, values, None, dedupe="yes").extra["multitone"]["families"]
    for m in families.values():
        assert m["noise"] == {
            "measured": False,
            "level_db": None,
            "why": "noise not measured: each distinct prompt was asked once (--dedupe), so the periods are copies",
        }
        assert m["distortion_detected"] is None and m["verdict"].startswith(UNDECIDED)
        assert INCONSISTENCY not in m["verdict"]


def test_errors_that_repeat_across_periods_are_still_per_prompt_inconsistency(multitone):
    # A fixed error per prompt (the same in every period) is what per-prompt inconsistency means.
    rows = select_rows(multitone.table, "ALL")
    rng = np.random.default_rng(5)
    errors = {p: rng.standard_normal() for p in sorted({r["prompt"] for r in rows})}
    values = [r["ground_truth"] * (1 + 0.01 * errors[r["prompt"]]) for r in rows]
    for m in _score(multitone, rows, values, None).extra["multitone"]["families"].values():
        assert m["distortion_detected"] is True and m["verdict"].startswith(INCONSISTENCY)
        assert m["distortion_tests"]["even_p_holm"] < 1e-6 and m["noise"]["level_db"] is None


def test_a_memoryless_noisy_model_finds_no_memory_and_a_delay_is_named(multitone):
    rows = select_rows(multitone.table, "ALL")
    result = _score(
        multitone, rows, _noisy(multitone, rows, 0.01, np.random.default_rng(6)), None, protocol="sequential"
    )
    for m in result.extra["multitone"]["families"].values():
        assert m["memory"]["found"] is False and m["memory"]["model"] is None
        assert m["memory"]["tests"] == 2 and 0 <= m["memory"]["p_value"] <= m["memory"]["p_value_holm"] <= 1
        assert m["verdict"] == "linear within the noise"


def test_calibration_structure_asks_what_the_runner_asks(multitone):
    # One draw per request: every row without --dedupe, each distinct prompt once with it.
    rows = select_rows(multitone.table, "ALL")
    stateless = Prepared.of(Structure("s", multitone, "ALL"))
    deduped = Prepared.of(Structure("d", multitone, "ALL", dedupe=True))
    assert stateless.requests == len(rows) == 3840
    assert deduped.requests == len({r["prompt"] for r in rows})


@pytest.mark.parametrize(
    ("structure", "model", "claim"),
    [
        (dict(preset="ALL"), "noise 5 %", "distortion"),
        (dict(preset="ALL"), "noise 5 %", "inconsistency"),
        (dict(preset="ALL", protocol="sequential"), "noise 5 %", "memory"),
    ],
)
def test_a_null_model_claims_at_its_nominal_rate(multitone, structure, model, claim):
    # 60 runs x 2 families = 120 readings at a nominal 0.001: a correct rule claims 0 (or, rarely,
    # 1); the bound (nominal + 3 binomial standard errors, with the floor of 1/n) allows 1, never 3.
    # benchmarks/bench_calibration.py measures the same over 200 runs for docs/calibration.md.
    prepared = Prepared.of(Structure("t", multitone, **structure))
    claimed, readings = calibrate(prepared, {model: MODELS[model]}, 60)[model][claim]
    assert readings == 120
    assert claimed / readings <= binomial_bound(0.001, readings), (claimed, readings)


def test_the_report_says_what_the_evidence_counts(gap, tmp_path):
    from mathbode.evaluator.presentation.report import variants_lines

    rows = select_rows(gap.table, "MVP")
    result = _score(gap, rows, [r["ground_truth"] for r in rows], "MVP")
    text = "\n".join(variants_lines(result))
    n = result.extra["variants"]["linear_solve"]["GS"]["n_units"]
    assert f"{n} distinct prompts of 1 problem" in text
    assert "All of it lies within problem 0" in text and "5 McNemar tests, Holm-adjusted" in text
    assert math.isfinite(result.extra["variants"]["linear_solve"]["GS"]["mcnemar_p_holm"])
    json.dumps(result.extra["variants"], allow_nan=False)


def test_gap_tests_hold_their_rates_on_the_release_rows(gap):
    # Replaces a simulation that drew every row independently (which cannot see copies): a model
    # with no surface effect, each distinct prompt exact or 1 % off (half and half, the same each
    # time it is asked), on the paired release's own MVP rows (17 distinct prompts of one problem a
    # family, repeated). 60 runs x 5 pairs = 300 readings at a nominal 0.05 (exact McNemar is
    # conservative): within 3 binomial standard errors, a 1-in-700 band for a correct method.
    prepared = Prepared.of(Structure("gap", gap, "MVP"))
    counts = calibrate(prepared, {"fixed per-prompt error": MODELS["fixed per-prompt error"]}, 60)
    found = counts["fixed per-prompt error"]
    for claim in ("McNemar, one pair (raw p < 0.05)", "paired MB-Core interval excludes 0"):
        claimed, readings = found[claim]
        assert readings == 300 and claimed / readings <= binomial_bound(0.05, readings), (claim, claimed)
    claimed, readings = found["McNemar, any pair of a submission (Holm p < 0.05)"]
    assert readings == 60 and claimed / readings <= binomial_bound(0.05, readings)
    claimed, readings = found["Wilson interval misses the share of exact prompts"]
    assert readings == 60 and claimed / readings <= binomial_bound(0.05, readings)


@pytest.fixture(scope="module")
def many_problems(tmp_path_factory):
    return _build(tmp_path_factory, "paired", "--variants", "gap", "--questions", "12", "--families", "linear_solve")


def test_on_paired_a_gs_hurt_model_is_found_on_gs_alone_over_problems(many_problems):
    # PAIRED asks one sweep of each of the 12 problems. A model exact on every original and DL/DLC/DLM
    # row and 1 % off on every GS row: every problem is a discordant unit on GS (12 of 12, exact
    # McNemar p = 2 / 2^12), none on the others (p = 1); the MB-Core interval is over the 12 problems.
    rows = select_rows(many_problems.table, "PAIRED", many_problems.universe)
    assert len(rows) == 6 * 12 * 64
    values = [r["ground_truth"] * (1.01 if r["family"] == "linear_solve__gs" else 1.0) for r in rows]
    result = _score(many_problems, rows, values, "PAIRED")
    assert result.preset == "PAIRED"
    by_kind = result.extra["variants"]["linear_solve"]
    gs = by_kind["GS"]
    assert (gs["unit"], gs["n_units"], gs["problems"]) == ("problem", 12, list(range(12)))
    assert (gs["only_original_exact"], gs["only_variant_exact"]) == (12, 0)
    assert gs["mcnemar_p"] == 2 / 2**12 and gs["mcnemar_p_holm"] == pytest.approx(5 * 2 / 2**12)
    assert (gs["mb_core_diff_unit"], gs["mb_core_diff_n_units"]) == ("problem", 12)
    for kind in ("DL", "DLC", "DLM"):
        entry = by_kind[kind]
        assert entry["unit"] == "problem" and entry["n_units"] == 12
        assert entry["only_original_exact"] == entry["only_variant_exact"] == 0 and entry["mcnemar_p"] == 1.0
        assert entry["mb_core_diff"] == 0.0
    assert result.extra["accuracy"]["problems"] == 6 * 12


@pytest.mark.parametrize("case", ["one shared sweep", "one row a sweep", "null", "1e300", "garbage"])
def test_a_gap_submission_of_few_or_bad_answers_scores_and_renders(gap, tmp_path, case):
    # Issue #49: these ended in "TypeError: 'float' object is not iterable" (an interval of null,
    # read back from the results document as NaN, printed as a pair).
    from mathbode.cli.main import mathbode

    rows = select_rows(gap.table, "MVP", gap.universe)
    first = rows[0]
    same = [r for r in rows if r["family"] in ("linear_solve", "linear_solve__gs")]
    same = [r for r in same if all(r[k] == first[k] for k in ("question_id", "amplitude_scale", "frequency_cycles"))]
    same = [r for r in same if r["phase_deg"] == first["phase_deg"]]
    if case == "one row a sweep":
        same = [r for r in same if r["time_step"] == 0]
    lines = []
    for r in same:
        key = {k: r[k] for k in ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles")}
        key |= {"phase_deg": r["phase_deg"], "time_step": r["time_step"]}
        gs = r["family"] == "linear_solve__gs"
        if case == "garbage" and gs:
            lines.append(key | {"response": "zz"})
        elif case == "null" and gs:
            lines.append(key | {"prediction": None})
        elif case == "1e300" and gs:
            lines.append(key | {"prediction": 1e300})
        else:
            lines.append(key | {"prediction": r["ground_truth"]})
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    release = str(gap.source) if Path(str(gap.source)).is_dir() else None
    assert release
    out = tmp_path / "r"
    result = CliRunner().invoke(mathbode, ["score", str(path), "--reference", release, "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "1 McNemar test (nothing to adjust)" in result.output
    again = CliRunner().invoke(mathbode, ["report", str(out)])
    assert again.exit_code == 0, again.output
