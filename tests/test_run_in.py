"""The sequential run-in (issue #30, section 1): steps asked before step 0 put the scored steps in
steady state, so a model with memory reads its frequency response, not its start-up transient.

Proved through the real `mathbode run` and scorer on a stub that applies a known system to the
truths of its conversation: a pure delay of k steps and a first-order low-pass."""

from __future__ import annotations

import cmath
import json
import math
import shutil

import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.evaluator.scorer.scoring import score
from mathbode.runner.run import record_path
from mathbode.runner.run_in import RunInPlan, run_in_path, sweep_of
from mathbode.schema import layout, read_submission

T = layout().time_steps
FAMILY = "similar_triangles"


def _run(server, out, model, *args, expect=0):
    argv = ["--base-url", server.base_url, "--model", model, "-o", str(out), "--families", FAMILY]
    argv += ["--protocol", "sequential", "--concurrency", "4", *[str(a) for a in args]]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == expect, result.output
    return result


def _scored(out, reference):
    sub = read_submission(out)
    assert sub.report.valid, sub.report.format_text()
    return score(sub.predictions, reference, out.stem, sub.model, conditions=sub.conditions)


def _mid_band(r):
    return {row["frequency_cycles"]: (row["gain"], row["phase_err_deg"]) for row in r.summary.rows()}


def _delay(k: int, f: float) -> float:
    """The phase of a k-step delay at f cycles per 64 steps, wrapped to (-180, 180]."""
    return math.degrees(cmath.phase(cmath.exp(-2j * math.pi * f * k / T)))


def test_a_delay_within_the_run_in_reads_its_exact_phase_and_a_cold_start_does_not(truth_stub, tmp_path, reference):
    """A 4-step delay: -90 degrees at 4 cycles, 180 at 8, gain 1, MB-Core 0.5. Cold, the first 4
    steps repeat step 0 and the fit reads gain 0.92 and MB-Core 0.36."""
    warm, cold = tmp_path / "warm.jsonl", tmp_path / "cold.jsonl"
    _run(truth_stub, warm, "delay-4", "--preset", "SMOKE", "--history", "all", "--run-in", "8")
    _run(truth_stub, cold, "delay-4", "--preset", "SMOKE", "--history", "all", "--run-in", "0")
    steady, start = _scored(warm, reference), _scored(cold, reference)
    for f, (gain, phase) in _mid_band(steady).items():
        # Six-decimal answers of a unit-gain delay: the fit is exact to rounding.
        assert gain == pytest.approx(1.0, abs=1e-5) and abs(abs(phase) - abs(_delay(4, f))) < 1e-3, (f, gain, phase)
    assert steady.families[FAMILY]["mb_core"] == pytest.approx(0.5, abs=1e-5)
    assert start.families[FAMILY]["mb_core"] < 0.45  # the transient the run-in removes
    assert min(g for g, _ in _mid_band(start).values()) < 0.95


def test_a_low_pass_reads_its_analytic_response_within_the_run_ins_bound(truth_stub, tmp_path, reference):
    """y_t = y_{t-1} + a (x_t - y_{t-1}), a = 0.5: after K = 8 run-in steps the start-up transient
    is (1 - a)^8 = 0.004 of the step-0 error and decays by half each step; cold it is the whole
    error. Analytic: gain 0.8756 / 0.6786, phase -19.58 / -28.68 degrees at 4 / 8 cycles."""
    out = tmp_path / "lp.jsonl"
    _run(truth_stub, out, "anchor-0.5", "--preset", "SMOKE", "--history", "8")  # the default run-in
    for f, (gain, phase) in _mid_band(_scored(out, reference)).items():
        h = 0.5 / (1 - 0.5 * cmath.exp(-2j * math.pi * f / T))
        assert gain == pytest.approx(abs(h), abs=2e-4), f
        assert phase == pytest.approx(math.degrees(cmath.phase(h)), abs=0.05), f


def test_run_in_answers_are_kept_apart_and_every_line_names_the_condition(truth_stub, tmp_path, reference):
    out = tmp_path / "p.jsonl"
    result = _run(truth_stub, out, "delay-2", "--preset", "SMOKE", "--run-in", "5")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 256  # 4 sweeps of 64: no run-in line in the submission
    assert {line["meta"]["run_in"] for line in lines} == {"5"}
    run_ins = [json.loads(x) for x in run_in_path(out).read_text().splitlines()]
    assert len(run_ins) == 4 * 5
    for sweep in {json.dumps(r["sweep"]) for r in run_ins}:
        # A sinusoid's run-in is its own last steps, in order.
        lead = [r for r in run_ins if json.dumps(r["sweep"]) == sweep]
        assert [r["position"] for r in lead] == [0, 1, 2, 3, 4]
        assert [r["asked"]["time_step"] for r in lead] == [59, 60, 61, 62, 63]
        assert {json.dumps({k: v for k, v in r["asked"].items() if k != "time_step"}) for r in lead} == {sweep}
    record = json.loads(record_path(out).read_text())
    assert record["parameters"]["run_in"] == 5 and record["counts"]["run_in_answered"] == 20
    assert record["counts"]["asked"] == 256 + 20 and record["run_in_journal"] == "p.run-in.jsonl"
    assert "20 run-in answers (asked before step 0, never scored) in p.run-in.jsonl." in result.output
    assert _scored(out, reference).extra["conditions"]["run_in"] == "5"


def test_a_step_settles_at_its_initial_level_and_a_chirp_continues_its_slow_start(reference):
    rows = reference.table.to_pylist()
    plan = RunInPlan.of(rows, 4)
    step = next(r for r in rows if r["signal_type"] == "step")
    chirp = next(r for r in rows if r["signal_type"] == "chirp" and r["amplitude_scale"] == 2.5)
    lead = plan.rows(sweep_of(step))
    assert [r["time_step"] for r in lead] == [0, 0, 0, 0] and {r["prompt"] for r in lead} == {step["prompt"]}
    lead = plan.rows(sweep_of(chirp))
    assert [(r["signal_type"], r["frequency_cycles"], r["phase_deg"], r["time_step"]) for r in lead] == [
        ("sinusoid", 1.0, 0.0, t) for t in (60, 61, 62, 63)
    ]
    assert {(r["question_id"], r["amplitude_scale"]) for r in lead} == {(chirp["question_id"], 2.5)}
    assert RunInPlan.of(rows, 0).rows(sweep_of(chirp)) == []


def test_a_run_killed_inside_the_run_in_resumes_to_the_same_answers(truth_stub, tmp_path):
    """Concurrency 1: --limit stops after 70 rows, inside the second sweep; the run-in journal is
    then cut inside the third sweep's run-in, as a kill there leaves it. The resumed files equal
    an uninterrupted run's, run-in included."""
    whole, part = tmp_path / "whole.jsonl", tmp_path / "part.jsonl"
    _run(truth_stub, whole, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1")
    _run(truth_stub, part, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1", "--limit", "70")
    journal = run_in_path(part).read_text().splitlines()
    assert len(journal) == 16  # two sweeps' run-ins
    shutil.copy(run_in_path(whole), run_in_path(part))
    kept = run_in_path(whole).read_text().splitlines()[:19]  # the third sweep's run-in: 3 of 8 steps
    run_in_path(part).write_text("\n".join(kept) + "\n" + kept[-1][:10])  # and a torn line
    _run(truth_stub, part, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1")

    def answers(path):
        return sorted((json.dumps(line, sort_keys=True) for line in _without_timing(path)), key=str)

    assert answers(part) == answers(whole)
    assert answers(run_in_path(part)) == answers(run_in_path(whole))


def _without_timing(path):
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        line["meta"] = {k: v for k, v in line["meta"].items() if k not in ("latency_s", "attempts")}
        yield line


def test_a_resume_whose_run_in_is_gone_is_refused(truth_stub, tmp_path):
    out = tmp_path / "p.jsonl"
    _run(truth_stub, out, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1", "--limit", "70")
    run_in_path(out).write_text("")
    result = _run(truth_stub, out, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1", expect=1)
    assert "a sweep has answered steps but 0 of its 8 run-in steps" in result.output


def test_a_damaged_run_in_journal_is_refused_with_its_line(truth_stub, tmp_path):
    out = tmp_path / "p.jsonl"
    _run(truth_stub, out, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1", "--limit", "70")
    lines = run_in_path(out).read_text().splitlines()
    run_in_path(out).write_text("\n".join([lines[0], lines[2], *lines[3:]]) + "\n")
    result = _run(truth_stub, out, "anchor-0.5", "--preset", "SMOKE", "--concurrency", "1", expect=1)
    assert "p.run-in.jsonl, line 2: run-in step 2 of a sweep whose run-in has 1 of 8 steps answered" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--protocol", "stateless", "--run-in", "4"], "--run-in goes with --protocol sequential"),
        (["--run-in", "65"], "65 is not in the range 0<=x<=64"),
    ],
)
def test_a_run_in_that_cannot_be_asked_is_refused(tmp_path, args, message):
    argv = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "p.jsonl")]
    argv += ["--protocol", "sequential", *args] if args[0] != "--protocol" else args
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None})
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "p.jsonl").exists()


def test_a_stateless_run_asks_no_run_in(truth_stub, tmp_path):
    out = tmp_path / "p.jsonl"
    argv = ["--base-url", truth_stub.base_url, "--model", "truth", "-o", str(out), "--families", FAMILY]
    result = CliRunner().invoke(run_cli, [*argv, "--preset", "SMOKE"], env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.output
    assert not run_in_path(out).exists()
    assert all("run_in" not in json.loads(x)["meta"] for x in out.read_text().splitlines())


@pytest.mark.parametrize("kind", ["symlink", "fifo", "foreign"])
def test_the_run_in_journals_name_is_never_written_through(truth_stub, tmp_path, kind):
    """The run-in journal's name is mathbode's: a link planted there is not followed (the file it
    points to stays as it was), a pipe does not hang the run, a file of other content is not emptied."""
    import os

    out, victim = tmp_path / "p.jsonl", tmp_path / "precious.txt"
    victim.write_text("precious\n")
    if kind == "symlink":
        run_in_path(out).symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(run_in_path(out))
    else:
        run_in_path(out).write_text("my own notes\n")
    result = _run(truth_stub, out, "anchor-0.5", "--preset", "SMOKE", expect=1)
    assert victim.read_text() == "precious\n"
    if kind == "foreign":
        assert run_in_path(out).read_text() == "my own notes\n"
        assert "p.run-in.jsonl, line 1: not a run-in line written by mathbode-run, so the file is left as it is" in (
            result.output
        )
    else:
        assert "the run-in journal's name holds something that is not a plain file" in result.output
