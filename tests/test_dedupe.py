"""The stateless protocol, honest and cheaper (issue #23): one request per distinct prompt with
--dedupe, repeatability measured where repeats were asked, and what a stateless phase can show."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.evaluator.scorer.scoring import score
from mathbode.schema import read_submission
from mathbode.schema.keys import row_key


@pytest.fixture
def stub(truth_stub):
    return truth_stub


def _run(server, out, *args, model="truth"):
    argv = ["--base-url", server.base_url, "--model", model, "-o", str(out), *[str(a) for a in args]]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    return result


def _completions(server) -> int:
    return sum(server.attempts.values())


def _scored(path, reference):
    sub = read_submission(path)
    assert sub.report.valid, sub.report.format_text()
    return sub, score(sub.predictions, reference, path.stem, sub.model, conditions=sub.conditions)


def test_mvp_with_dedupe_costs_85_requests_and_scores_as_a_full_run(stub, tmp_path, reference):
    _run(stub, tmp_path / "d.jsonl", "--preset", "MVP", "--dedupe")
    assert _completions(stub) == 85
    stub.attempts.clear()
    full = _run(stub, tmp_path / "f.jsonl", "--preset", "MVP")
    assert _completions(stub) == 1920
    assert "1,920 rows, 85 distinct prompts: --dedupe would ask 85 instead of 1,920 (22.6x fewer" in full.output
    d_sub, d = _scored(tmp_path / "d.jsonl", reference)
    f_sub, f = _scored(tmp_path / "f.jsonl", reference)
    assert len(d_sub.predictions) == 1920
    assert {p.key: p.response for p in d_sub.predictions} == {p.key: p.response for p in f_sub.predictions}
    assert d.overall == f.overall and d.families == f.families
    lines = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert sum(not line["meta"]["shared"] for line in lines) == 85
    assert {line["meta"]["dedupe"] for line in lines} == {"yes"}
    assert d.extra["repeatability"] == {"measured": False, "note": "deduplicated: each distinct prompt was asked once"}
    record = json.loads((tmp_path / "d.run.json").read_text())
    assert record["counts"]["asked"] == 85 and record["counts"]["answered"] == 1920


def test_a_deduplicated_run_resumes_without_asking_a_prompt_twice(stub, tmp_path):
    out = tmp_path / "d.jsonl"
    _run(stub, out, "--preset", "MVP", "--dedupe", "--limit", "300")
    _run(stub, out, "--preset", "MVP", "--dedupe")
    keys = [row_key(json.loads(line)) for line in out.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 1920
    assert _completions(stub) == 85  # a prompt the output already answered is never asked again


def test_repeatability_is_1_for_a_deterministic_server_and_low_for_a_sampling_one(stub, tmp_path, reference):
    _run(stub, tmp_path / "t.jsonl", "--preset", "SMOKE")
    _run(stub, tmp_path / "n.jsonl", "--preset", "SMOKE", model="noisy")
    _, exact = _scored(tmp_path / "t.jsonl", reference)
    _, noisy = _scored(tmp_path / "n.jsonl", reference)
    assert exact.extra["repeatability"]["overall"] == {
        "repeated_prompts": 85,
        "identical_share": 1.0,
        "spread_mean": 0.0,
    }
    assert noisy.extra["repeatability"]["overall"]["identical_share"] < 0.5
    assert noisy.extra["repeatability"]["overall"]["spread_mean"] > 0
    assert set(exact.extra["repeatability"]["families"]) == set(exact.families)


def test_dedupe_does_not_go_with_the_sequential_protocol(stub, tmp_path):
    argv = ["--base-url", stub.base_url, "--model", "truth", "-o", str(tmp_path / "p.jsonl")]
    result = CliRunner().invoke(run_cli, [*argv, "--dedupe", "--protocol", "sequential"], env={"OPENAI_API_KEY": None})
    assert result.exit_code == 2 and "--dedupe goes with the stateless protocol" in result.output


def test_a_stateless_report_says_what_its_phases_can_show(stub, tmp_path):
    from mathbode.cli.score import main as score_cli

    _run(stub, tmp_path / "t.jsonl", "--preset", "SMOKE")
    out = tmp_path / "r"
    result = CliRunner().invoke(score_cli, [str(tmp_path / "t.jsonl"), "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text()
    assert "phase error of answers that depend only on their prompt is 0 or 180 degrees" in md
    assert "--protocol sequential" in md and "Repeatability: 85 prompts answered more than once" in md


def test_repeatability_compares_parsed_numbers_and_keeps_to_the_preset(reference, tmp_path):
    """A chatty model that words each answer afresh around the same number read '1.2 %
    identical (mean spread 0.000000)'; and --preset SMOKE counted the rows outside it."""
    from mathbode.builder.oracle import baseline_lines
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema.selection import select_rows

    lines = list(baseline_lines(select_rows(reference.table, "MVP_PLUS")))
    chatty = [{**line, "response": f"Step {i}: thinking... {line['response']}"} for i, line in enumerate(lines)]
    write_jsonl(tmp_path / "chatty.jsonl", chatty)
    sub = read_submission(tmp_path / "chatty.jsonl")
    rep = score(sub.predictions, reference, "chatty", sub.model).extra["repeatability"]
    assert rep["overall"]["identical_share"] == 1.0 and rep["overall"]["spread_mean"] == 0.0
    everything = rep["overall"]["repeated_prompts"]
    smoke = score(sub.predictions, reference, "chatty", sub.model, preset="SMOKE").extra["repeatability"]
    assert smoke["overall"]["repeated_prompts"] < everything
