"""Moving between this tool and the paper authors' evaluation code (MathBode-Eval).

That code numbers rows by `row_id` (the five families concatenated in the canonical order),
writes predictions as a parquet keyed by it, and parses answers more leniently than appendix C.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.score import main as score_cli
from mathbode.core.atomic import write_jsonl
from mathbode.core.version import __version__
from mathbode.evaluator.scorer.scoring import score
from mathbode.schema import layout, read_submission
from mathbode.schema.keys import canonical_row_order, row_key
from mathbode.schema.parsing import MATHBODE_EVAL, parse_response, parse_response_eval
from mathbode.schema.release_hashes import release_content_hash
from mathbode.schema.selection import select_rows
from mathbode.schema.validate import detect_kind

from .conftest import COMMITTED_DIST

LAY = layout()


@pytest.fixture(scope="module")
def published():
    """The committed release as that code loads it: families concatenated in layout order, row_id = position."""
    frames = []
    for fam in LAY.families:
        frame = pq.read_table(COMMITTED_DIST / "data" / f"{fam}.parquet").to_pandas()
        frame["family"] = fam
        frames.append(frame)
    full = pd.concat(frames, ignore_index=True)
    full["row_id"] = full.index
    return full


def test_row_id_is_the_position_in_the_published_concatenation(published):
    order = canonical_row_order()
    assert len(order) == len(published) == 5 * 9408
    keys = [row_key(r) for r in published.to_dict("records")]
    assert keys == list(order)


@pytest.fixture(scope="module")
def smoke_answers(reference, published):
    """The exact answers of SMOKE as (row_id, y_hat), every 7th withheld (NaN) as that code writes failures."""
    lines = list(baseline_lines(select_rows(reference.table, "SMOKE")))
    position = {key: n for n, key in enumerate(canonical_row_order())}
    frame = pd.DataFrame(
        {
            "row_id": [position[row_key(line)] for line in lines],
            "y_hat": [parse_response(line["response"]) for line in lines],
        }
    )
    frame.loc[::7, "y_hat"] = math.nan
    frame = frame.merge(published[["row_id", "family", "question_id", "time_step", "phase_deg"]], on="row_id")
    for n, line in enumerate(lines):
        if n % 7 == 0:
            line["response"] = "ERROR: empty_response"
    return lines, frame


def test_a_row_id_parquet_scores_exactly_as_the_same_answers_in_jsonl(reference, smoke_answers, tmp_path):
    lines, frame = smoke_answers
    write_jsonl(tmp_path / "a.jsonl", lines)
    frame.to_parquet(tmp_path / "preds_x.parquet", index=False)
    from_jsonl = read_submission(tmp_path / "a.jsonl")
    from_parquet = read_submission(tmp_path / "preds_x.parquet")
    assert from_parquet.report.valid, from_parquet.report.format_text()
    assert len(from_parquet.predictions) == 1280
    assert detect_kind(tmp_path / "preds_x.parquet") == "submission"
    a = score(from_jsonl.predictions, reference, "a")
    b = score(from_parquet.predictions, reference, "b")
    assert a.sweeps.columns == b.sweeps.columns
    for name in a.sweeps.columns:
        assert np.array_equal(a.sweeps[name], b.sweeps[name], equal_nan=a.sweeps[name].dtype == float), name
    assert a.overall == b.overall
    assert b.extra["num_answers"] == 1280 - len(range(0, 1280, 7))


def test_a_row_id_parquet_made_against_another_order_is_refused(smoke_answers, tmp_path):
    _, frame = smoke_answers
    shifted = frame.copy()
    shifted["row_id"] = shifted["row_id"] + 1  # off by one: every row's key fields now disagree
    shifted.to_parquet(tmp_path / "preds_shift.parquet", index=False)
    report = read_submission(tmp_path / "preds_shift.parquet").report
    assert not report.valid
    first = report.errors[0]
    assert first.code == "row-id-order" and first.where == "row 1"
    assert "row_id counts rows in the canonical order" in first.expected


@pytest.mark.parametrize(
    ("change", "code", "field", "found"),
    [
        (lambda f: f.assign(row_id=f.row_id.where(f.index != 3, 47040)), "unknown-key", "row_id", "47040"),
        (lambda f: f.assign(row_id=f.row_id.where(f.index != 3, f.row_id[2])), "duplicate-key", "row_id", "again"),
        (lambda f: f.assign(row_id=f.row_id.astype(float)), "schema", "row_id", "double"),
        (lambda f: f.assign(y_hat=f.y_hat.astype(str)), "schema", "y_hat", "string"),
        (lambda f: f.drop(columns=["y_hat"]), "schema", "", "none of them"),
    ],
)
def test_a_bad_row_id_parquet_is_named_precisely(smoke_answers, tmp_path, change, code, field, found):
    _, frame = smoke_answers
    change(frame.copy()).to_parquet(tmp_path / "p.parquet", index=False)
    result = CliRunner().invoke(score_cli, [str(tmp_path / "p.parquet"), "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    report = read_submission(tmp_path / "p.parquet").report
    problem = report.errors[0]
    assert (problem.code, problem.field) == (code, field)
    assert found in problem.found


# MathBode-Eval's rules against appendix C's, case by case (docs/scoring.md, "Strict parsing").
EVAL_CASES = [
    ("[answer_start] 1e-3 [answer_end]", 0.001, math.nan),
    ("[answer_start] \u22125.25 [answer_end]", -5.25, math.nan),
    ("[answer_start] 12cm [answer_end]", 12.0, math.nan),
    ("[answer_start] 1,234.5 [answer_end]", 234.5, math.nan),
    ("[answer_start] 2.1234567 [answer_end]", 2.123456, 2.123456),
    ("[answer_start] -2.1234567 [answer_end]", -2.123456, -2.123456),
    ("[answer_start] 1e22 [answer_end]", math.nan, math.nan),  # beyond 28 digits of decimal precision
    ("[answer_start] x = [answer_end]", math.nan, math.nan),
    ("[answer_start] 4.5", math.nan, math.nan),
]


@pytest.mark.parametrize(("response", "lenient", "strict"), EVAL_CASES)
def test_the_mathbode_eval_parser_follows_that_codes_rules(response, lenient, strict):
    for got, want in ((parse_response_eval(response), lenient), (parse_response(response), strict)):
        assert (math.isnan(got) and math.isnan(want)) or got == want


def test_score_parser_option_changes_only_what_the_rules_differ_on(reference, tmp_path):
    lines = list(baseline_lines(select_rows(reference.table, "SMOKE")))
    write_jsonl(tmp_path / "exact.jsonl", lines)
    exact = score(read_submission(tmp_path / "exact.jsonl").predictions, reference, "exact")
    for line in lines[::3]:
        line["response"] = line["response"].replace(" [answer_end]", "cm [answer_end]")  # "8.000000cm"
    write_jsonl(tmp_path / "s.jsonl", lines)
    sub = read_submission(tmp_path / "s.jsonl")
    strict = score(sub.predictions, reference, "s")
    lenient = score(sub.predictions, reference, "s", parser=MATHBODE_EVAL)
    assert strict.extra["num_answers"] == 1280 - len(lines[::3])  # a number glued to a unit is not an answer
    assert strict.overall["mb_core"] < exact.overall["mb_core"]
    assert lenient.extra["num_answers"] == 1280  # that code reads the 8
    assert lenient.overall == exact.overall
    assert lenient.provenance["parser_name"] == "mathbode-eval"
    result = CliRunner().invoke(
        score_cli, [str(tmp_path / "s.jsonl"), "--parser", "mathbode-eval", "--no-plots", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    assert "responses parsed with the mathbode-eval rules" in result.output


def test_python_dash_m_mathbode_is_the_mathbode_command():
    done = subprocess.run([sys.executable, "-m", "mathbode", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"mathbode {__version__} (canonical release content {release_content_hash()})"
