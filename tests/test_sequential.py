"""The sequential protocol (issue #22): a sweep asked as one conversation, where a model that
anchors on its previous answer is a first-order low-pass, and the scorer reads exactly that."""

from __future__ import annotations

import cmath
import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.evaluator.scorer.scoring import score
from mathbode.runner.run import record_path
from mathbode.schema import layout, read_submission
from mathbode.schema.keys import row_key

from .conftest import score_lines
from .fixtures.stub_openai import StubOpenAI

LAY = layout()
ALPHA = 0.5


def low_pass(f: float, alpha: float = ALPHA) -> complex:
    """H(w) = alpha / (1 - (1 - alpha) e^{-jw}), w = 2 pi f / 64: y_t = y_{t-1} + alpha (x_t - y_{t-1})."""
    w = 2 * math.pi * f / LAY.time_steps
    return alpha / (1 - (1 - alpha) * cmath.exp(-1j * w))


@pytest.fixture
def stub(truth_stub):
    return truth_stub


def _run(server, out, *args):
    argv = ["--base-url", server.base_url, "--model", "anchor", "-o", str(out), *[str(a) for a in args]]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    return result


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_anchoring_model_reads_the_analytic_low_pass_through_run_and_score(stub, tmp_path, reference):
    out = tmp_path / "seq.jsonl"
    _run(stub, out, "--preset", "SMOKE", "--protocol", "sequential", "--concurrency", "20")
    sub = read_submission(out)
    r = score(sub.predictions, reference, "seq", sub.model, conditions=sub.conditions)
    assert sub.conditions["protocol"] == "sequential" and r.extra["conditions"]["protocol"] == "sequential"
    for row in r.summary.rows():
        h = low_pass(row["frequency_cycles"])
        # Within the transient of the first steps (the conversation starts at the truth, not in
        # the low-pass's steady state): measured 0.0002 in gain and 1.2 degrees.
        assert row["gain"] == pytest.approx(abs(h), abs=0.03), row["family"]
        assert row["phase_err_deg"] == pytest.approx(math.degrees(cmath.phase(h)), abs=3), row["family"]


def test_the_same_model_asked_statelessly_has_no_dynamics(stub, tmp_path, reference):
    out = tmp_path / "stateless.jsonl"
    _run(stub, out, "--preset", "SMOKE")
    r = score_lines(_lines(out), reference, tmp_path, "stateless")
    assert read_submission(out).conditions["protocol"] == "stateless"
    assert (abs(r.summary["gain"] - 1) < 1e-5).all() and (abs(r.summary["phase_err_deg"]) < 1e-3).all()


def test_chirp_and_step_of_the_anchoring_model_match_the_same_system(stub, tmp_path, reference):
    out = tmp_path / "cs.jsonl"
    _run(stub, out, "--preset", "CHIRP_STEP", "--protocol", "sequential", "--concurrency", "20")
    r = score_lines(_lines(out), reference, tmp_path, "cs")
    chirp = r.extra["diagnostics"]["chirp"]
    for family, c in chirp.items():
        for f in ("4", "8"):
            point, h = c["at"][f], low_pass(float(f))
            # The chirp method's own resolution (docs/chirp-step.md): 0.05 and 5 degrees.
            assert point["gain"] == pytest.approx(abs(h), abs=0.05), family
            assert point["phase_err_deg"] == pytest.approx(math.degrees(cmath.phase(h)), abs=5), family
    expected_rise = math.ceil(math.log(0.1) / math.log(1 - ALPHA)) - 1
    assert all(s["rise_time"] == expected_rise for s in r.extra["diagnostics"]["step"].values())


def test_each_turn_carries_the_kept_history_and_every_line_says_how_it_was_asked(stub, tmp_path):
    out = tmp_path / "h.jsonl"
    _run(stub, out, "--preset", "SMOKE", "--families", "linear_solve", "--protocol", "sequential")
    _run(
        stub, tmp_path / "h2.jsonl", "--preset", "SMOKE", "--protocol", "sequential", "--history", "2", "--limit", "64"
    )
    messages = stub.last_messages
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2 + ["user"]
    assert all(m["content"].endswith(LAY.answer_instruction()) for m in messages if m["role"] == "user")
    lines = _lines(out)
    assert {(line["meta"]["protocol"], line["meta"]["history"]) for line in lines} == {("sequential", "8")}
    record = json.loads(record_path(out).read_text())
    assert record["parameters"]["protocol"] == "sequential" and record["parameters"]["history"] == 8
    # A sweep's steps are written in time order (one conversation each).
    sweeps: dict = {}
    for line in lines:
        sweeps.setdefault(row_key(line)[:-1], []).append(line["time_step"])
    assert all(steps == sorted(steps) for steps in sweeps.values())


def test_resuming_with_another_protocol_is_refused(stub, tmp_path):
    out = tmp_path / "p.jsonl"
    _run(stub, out, "--preset", "SMOKE", "--protocol", "sequential", "--limit", "10")
    argv = ["--base-url", stub.base_url, "--model", "anchor", "-o", str(out), "--preset", "SMOKE"]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 2 and "protocol 'sequential' -> 'stateless'" in result.output


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_history_takes_a_positive_number_or_all(stub, tmp_path, value):
    argv = ["--base-url", stub.base_url, "--model", "anchor", "-o", str(tmp_path / "p.jsonl")]
    argv += ["--protocol", "sequential", "--history", value]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 2 and "a number of exchanges (1 or more) or 'all'" in result.output
    stateless = CliRunner().invoke(run_cli, [*argv[:6], "--history", "4"], env={"OPENAI_API_KEY": None})
    assert stateless.exit_code == 2 and "--history goes with --protocol sequential" in stateless.output


def test_kill_9_and_resume_give_the_uninterrupted_answers(truth_answers, tmp_path):
    """Every row exactly once, each sweep one consistent conversation: the recorded answers are
    replayed as the conversation so far, so a deterministic server answers as if never stopped."""
    server = StubOpenAI(truth_answers, latency=0.004).start()
    env = {**os.environ, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    base = [sys.executable, "-m", "mathbode", "run", "--base-url", server.base_url, "--model", "anchor"]
    base += ["--preset", "SMOKE", "--protocol", "sequential", "--history", "3", "--concurrency", "4"]
    try:
        whole = tmp_path / "whole.jsonl"
        subprocess.run([*base, "-o", str(whole)], env=env, check=True, capture_output=True, timeout=300)
        cut = tmp_path / "cut.jsonl"
        for answers in (200, 400):  # killed twice, once that many more completions are answered
            # The stub answers no more than that until released: the kill lands inside the run
            # however loaded the machine (a poll of the file's lines could wake after the run ended).
            server.answered, server.answer_at_most = 0, answers
            proc = subprocess.Popen([*base, "-o", str(cut)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if server.answered >= answers and cut.exists() and cut.read_bytes().count(b"\n"):
                    break
                time.sleep(0.005)
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        server.answer_at_most = None
        assert 0 < len(cut.read_text().splitlines()) < 1280
        subprocess.run([*base, "-o", str(cut)], env=env, check=True, capture_output=True, timeout=300)
    finally:
        server.stop()
    got = {row_key(line): line["response"] for line in _lines(cut)}
    want = {row_key(line): line["response"] for line in _lines(whole)}
    assert len(_lines(cut)) == len(got) == 1280
    assert got == want


def test_protocols_are_ranked_apart_and_never_compared(stub, tmp_path):
    _run(stub, tmp_path / "seq.jsonl", "--preset", "SMOKE", "--protocol", "sequential", "--concurrency", "20")
    _run(stub, tmp_path / "sta.jsonl", "--preset", "SMOKE")
    out = tmp_path / "r"
    files = [str(tmp_path / "seq.jsonl"), str(tmp_path / "sta.jsonl")]
    result = CliRunner().invoke(score_cli, [*files, "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "protocol sequential" in result.output and "protocol stateless" in result.output
    assert not (out / "comparisons.json").exists()
