"""What a reader of the console table and report.md is told (issue #20): custom scoring named,
a preset's coverage in rows, chirp and step files reported for what they hold, leaderboards
ranked like with like, every column explained."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.score import main as score_cli
from mathbode.core.atomic import write_jsonl
from mathbode.schema.selection import select_rows


@pytest.fixture(scope="module")
def files(reference, tmp_path_factory):
    folder = tmp_path_factory.mktemp("files")
    for preset in ("SMOKE", "CHIRP_STEP", "ALL"):
        write_jsonl(folder / f"{preset.lower()}.jsonl", baseline_lines(select_rows(reference.table, preset)))
    smoke = list(baseline_lines(select_rows(reference.table, "SMOKE")))
    constrained = [{**line, "meta": {"answer_format": "constrained (gbnf)"}} for line in smoke]
    write_jsonl(folder / "constrained.jsonl", constrained)
    write_jsonl(folder / "zero.jsonl", [{**line, "response": "[answer_start] 0.000000 [answer_end]"} for line in smoke])
    return folder


def _score(*args):
    result = CliRunner().invoke(score_cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_custom_settings_are_called_custom_where_a_person_reads(files, tmp_path):
    out = tmp_path / "r"
    args = ["--gain-scale", "0.5", "--gain-weight", "1", "--phase-weight", "0", "--no-plots", "--out", out]
    text = _score(files / "smoke.jsonl", *args)
    assert "custom scoring (gain scale 0.5, phase scale 45 deg, weights 1 and 0" in text
    md = (out / "report.md").read_text()
    assert "custom scoring, not the paper's" in md and "(the paper's;" not in md
    assert "not comparable with published numbers" in md
    assert json.loads((out / "scores.json").read_text())["method"] == "custom"
    paper = _score(files / "smoke.jsonl", "--no-plots", "--out", tmp_path / "p")
    assert "custom scoring" not in paper and "(the paper's;" in (tmp_path / "p" / "report.md").read_text()


def test_a_preset_larger_than_the_file_says_how_much_it_answered(files, tmp_path):
    text = _score(files / "smoke.jsonl", "--preset", "FULL", "--no-plots", "--out", tmp_path / "r")
    said = "answered 1,280 of the 9,600 FULL rows; the 8,320 unanswered rows count as not compliant"
    assert said in text
    assert said in (tmp_path / "r" / "report.md").read_text()
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    assert scores["preset_rows"] == {"preset": "FULL", "answered": 1280, "rows": 9600}


def test_a_chirp_and_step_file_is_reported_for_what_it_holds(files, tmp_path):
    _score(files / "chirp_step.jsonl", "--no-plots", "--out", tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "Compliant answers: 0" not in md and "mean over 0 families" not in md
    assert "1,280 of 1,280 chirp and step rows compliant" in md
    assert "No sinusoid rows" in md and "| family | MB-Core" not in md and "Per frequency" not in md
    # No header-only table: every divider row is followed by a row of data.
    tables = [i for i, line in enumerate(md.splitlines()) if line.startswith("|---")]
    assert all(md.splitlines()[i + 1].startswith("| ") for i in tables)


def test_an_all_file_says_where_its_chirp_and_step_rows_went(files, tmp_path):
    text = _score(files / "all.jsonl", "--no-plots", "--bootstrap", "0", "--out", tmp_path / "r")
    assert "43,200 of 43,200 sinusoid rows compliant (MB-Core, MB-Plus)" in text
    assert "3,840 of 3,840 chirp and step rows compliant" in text


def test_a_file_without_sinusoids_is_not_ranked_or_tested(files, tmp_path):
    out = tmp_path / "r"
    text = _score(files / "chirp_step.jsonl", files / "smoke.jsonl", "--no-plots", "--out", out)
    assert "chirp_step: not ranked: it has no sinusoid rows" in text
    assert "shared rows" not in text and "compared only on" not in text
    board = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert [(b["label"], b["rank"]) for b in board] == [("smoke", "1"), ("chirp_step", "")]
    md = (out / "report.md").read_text()
    assert "| 1 | smoke |" in md and "| chirp_step |" not in md.split("## smoke")[0].split("## Leaderboard")[1]


def test_runs_under_different_conditions_are_ranked_apart_and_never_tested(files, tmp_path):
    out = tmp_path / "r"
    text = _score(files / "smoke.jsonl", files / "constrained.jsonl", files / "zero.jsonl", "--no-plots", "--out", out)
    assert "-- answer format constrained (gbnf), prompting zero-shot, protocol stateless (ranked apart) --" in text
    assert "-- answer format free, prompting zero-shot, protocol stateless (ranked apart) --" in text
    tested = [line for line in text.splitlines() if line.startswith("test:")]
    assert tested and all("constrained" not in line for line in tested)
    assert any("smoke - zero" in line for line in tested)
    board = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert {b["label"]: (b["group"], b["rank"]) for b in board} == {
        "smoke": ("answer format free, prompting zero-shot, protocol stateless", "1"),
        "zero": ("answer format free, prompting zero-shot, protocol stateless", "2"),
        "constrained": ("answer format constrained (gbnf), prompting zero-shot, protocol stateless", "1"),
    }
    comparisons = json.loads((out / "comparisons.json").read_text())
    assert [(c["first"], c["second"]) for c in comparisons] == [("smoke", "zero")]
    md = (out / "report.md").read_text()
    assert "ranked apart and never tested against each other" in md


def test_a_wilson_bound_of_zero_prints_as_zero(files, tmp_path):
    text = _score(files / "zero.jsonl", "--no-plots", "--out", tmp_path / "r")
    assert "0 of 85 distinct prompts of 5 problems = 0.0000 [0.0000, " in text
    assert "0 of 1,280 sinusoid rows)" in text
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    assert scores["accuracy"]["wilson_95"][0] == 0.0  # was 2.17e-19


def test_report_md_explains_every_name_it_uses(files, tmp_path):
    _score(files / "all.jsonl", "--no-plots", "--bootstrap", "0", "--out", tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    guide = md.split("## How to read this report")[1]
    for name in ("mid-band", "MB-Core", "MB-Plus", "cal. MB-Core", "|G-1|", "phase error", "lag", "R2", "ACF(1)"):
        assert name in guide, name
    for name in ("H2/H1", "compliance", "spread", "flat", "n/a", "rise_time", "settling_time", "chirp"):
        assert name in guide, name
    # The console's family table uses the report's names.
    text = _score(files / "smoke.jsonl", "--no-plots", "--out", tmp_path / "s")
    assert "cal. MB-Core" in text and "|phase| mid (deg)" in text
