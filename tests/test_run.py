"""mathbode-run end to end against the scripted OpenAI-compatible stub on 127.0.0.1."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines, canonical_reference
from mathbode.cli.run import main as run_cli
from mathbode.runner.run import record_path
from mathbode.schema import layout, read_submission, validate_submission
from mathbode.schema.keys import row_key
from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH
from mathbode.schema.selection import select_rows

from .fixtures.stub_openai import StubOpenAI

LAY = layout()
BIN = Path(sys.executable).parent
SECRET = "sk-test-secret-0123456789"


@pytest.fixture(scope="module")
def smoke_rows(reference):
    return select_rows(reference.table, "SMOKE")


@pytest.fixture(scope="module")
def tables(smoke_rows):
    """prompt -> the exact answer in the answer format (what the `truth` stub says)."""
    return (
        {row["prompt"]: line["response"] for row, line in zip(smoke_rows, baseline_lines(smoke_rows), strict=True)},
    )


@pytest.fixture
def stub(tables):
    server = StubOpenAI(*tables).start()
    yield server
    server.stop()


def invoke(stub, tmp_path, *args, env=None, output="pred.jsonl"):
    argv = ["--base-url", stub.base_url, "-o", str(tmp_path / output), *args]
    return CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None, **(env or {})})


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- whole runs -----------------------------------------------------------------------------------
def test_a_smoke_run_of_the_truth_is_a_valid_submission_scoring_1(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "truth", "--concurrency", "32", "--score")
    assert result.exit_code == 0, result.output
    out = tmp_path / "pred.jsonl"
    report = validate_submission(out)
    assert report.valid and report.summary["coverage"]["presets_complete"] == ["SMOKE"]
    first = lines_of(out)[0]
    assert set(first) == {*LAY.key, "response", "model", "meta"} and first["model"] == "truth"
    assert set(first["meta"]) == {
        "latency_s",
        "attempts",
        "finish_reason",
        "prompt_tokens",
        "completion_tokens",
        "answer_format",
        "prompting",
        "protocol",
        "split",
    }
    assert first["meta"]["split"] == RELEASE_PROMPTS_HASH  # the split it answered: the canonical one
    assert first["meta"]["answer_format"] == "free" and first["meta"]["prompting"] == "zero-shot"
    assert first["meta"]["protocol"] == "stateless"
    scores = json.loads((tmp_path / "pred-report" / "scores.json").read_text())
    assert scores["preset"] == "SMOKE" and round(scores["overall"]["mb_core"], 4) == 1.0
    assert "SMOKE" in result.output and "1.0000" in result.output
    record = json.loads(record_path(out).read_text())
    assert record["status"] == "finished"
    assert record["counts"] == {
        "rows": 1280,
        "already_answered": 0,
        "answered": 1280,
        "compliant": 1280,
        "failed": 0,
        "asked": 1280,
        "run_in_answered": 0,
        "run_in_in_journal": 0,
        "in_output": 1280,
        "compliant_in_output": 1280,
    }
    assert record["parameters"]["model"] == "truth" and record["parameters"]["temperature"] == 0.0
    assert record["reference"]["source"] == "builder" and record["preset"] == "SMOKE"


def test_one_step_late_answers_show_the_lag_the_metrics_predict(stub, tmp_path):
    # Concurrency 1: the stub is late by arrival order (see its docstring).
    result = invoke(stub, tmp_path, "--model", "late", "--concurrency", "1")
    assert result.exit_code == 0, result.output
    sub = read_submission(tmp_path / "pred.jsonl")
    assert sub.report.valid
    from mathbode.evaluator.scorer.scoring import score

    r = score(sub.predictions, canonical_reference(list(LAY.families)), "late")
    expected = -360 * r.summary["frequency_cycles"] / 64  # one step of 64 at f cycles
    assert np.abs(r.summary["phase_err_deg"] - expected).max() < 0.5
    assert (r.summary["compliance"] == 63 / 64).all()  # t = 0 has no previous step: junk


def test_junk_and_empty_completions_are_answers_not_retries(stub, tmp_path):
    for model in ("junk", "empty"):
        result = invoke(stub, tmp_path, "--model", model, "--limit", "5", output=f"{model}.jsonl")
        assert result.exit_code == 0, result.output
        lines = lines_of(tmp_path / f"{model}.jsonl")
        assert len(lines) == 5 and all(line["meta"]["attempts"] == 1 for line in lines)
        assert "0.0% compliant" in result.output


# -- faults -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("model, attempts", [("ratelimited", 2), ("flaky", 3), ("dropping", 2)])
def test_transient_failures_are_retried(stub, tmp_path, model, attempts):
    start = time.monotonic()
    result = invoke(stub, tmp_path, "--model", model, "--limit", "4", "--concurrency", "4")
    assert result.exit_code == 0, result.output
    lines = lines_of(tmp_path / "pred.jsonl")
    assert len(lines) == 4 and {line["meta"]["attempts"] for line in lines} == {attempts}
    assert all(n == attempts for (m, _), n in stub.attempts.items() if m == model)
    if model == "ratelimited":
        assert time.monotonic() - start >= 1.0  # Retry-After: 1 was honoured


def test_rows_that_keep_failing_are_reported_not_written_and_retried_on_resume(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "broken", "--limit", "3", "--max-retries", "1")
    assert result.exit_code == 1
    assert "3 rows failed after 1 retries and were not written" in result.output
    assert "500: The server had an error." in result.output
    assert (tmp_path / "pred.jsonl").read_text() == ""
    record = json.loads(record_path(tmp_path / "pred.jsonl").read_text())
    assert record["counts"]["failed"] == 3 and record["counts"]["answered"] == 0


def test_a_rejected_key_stops_at_once_and_is_never_shown(tables, tmp_path):
    server = StubOpenAI(*tables, api_key="sk-the-right-one").start()
    try:
        result = invoke(server, tmp_path, "--model", "truth", env={"OPENAI_API_KEY": SECRET})
    finally:
        server.stop()
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {server.base_url} rejected the API key (401). Set the key in $OPENAI_API_KEY "
        "(or name another variable with --api-key-env).\n"
    )
    assert server.requests == 1  # the preflight; not one request per row
    for path in tmp_path.iterdir():
        assert SECRET not in path.read_text(), path


def test_the_key_is_sent_but_never_written(tables, tmp_path):
    server = StubOpenAI(*tables, api_key=SECRET).start()
    try:
        result = invoke(server, tmp_path, "--model", "truth", "--limit", "3", env={"OPENAI_API_KEY": SECRET})
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    assert server.auth_headers == {f"Bearer {SECRET}"}
    assert SECRET not in result.output
    for path in tmp_path.iterdir():
        assert SECRET not in path.read_text(), path


def test_an_unknown_model_stops_at_once(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "gpt-nonexistent")
    assert result.exit_code == 1
    # The first request says it (the stub lists models): after the run's opening note, one error line.
    last = result.output.splitlines()[-1]
    assert last.startswith(f"Error: {stub.base_url} does not know model 'gpt-nonexistent' (404).")
    assert "Traceback" not in result.output


def test_an_unreachable_server_stops_at_once(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    result = CliRunner().invoke(run_cli, ["--base-url", closed, "--model", "m", "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: cannot reach {closed}. Is the server running, and is --base-url right (it usually ends in /v1)?\n"
    )


# -- resuming ------------------------------------------------------------------------------------
def test_a_resumed_run_answers_only_the_rest(stub, tmp_path):
    assert invoke(stub, tmp_path, "--model", "truth", "--limit", "100").exit_code == 0
    result = invoke(stub, tmp_path, "--model", "truth", "--concurrency", "16")
    assert result.exit_code == 0, result.output
    assert "1,180 answers" in result.output and "100 already answered" in result.output
    counts = json.loads(record_path(tmp_path / "pred.jsonl").read_text())["counts"]
    assert (counts["in_output"], counts["compliant_in_output"], counts["already_answered"]) == (1280, 1280, 100)
    keys = [row_key(line) for line in lines_of(tmp_path / "pred.jsonl")]
    assert len(keys) == len(set(keys)) == 1280


def test_a_resume_says_what_was_answered_before_and_keeps_the_first_start(stub, tmp_path):
    """Progress read "10/1,173 rows" with no word of the 107 answered earlier."""
    assert invoke(stub, tmp_path, "--model", "truth", "--limit", "100").exit_code == 0
    first = json.loads(record_path(tmp_path / "pred.jsonl").read_text())
    assert first["first_started_at"] == first["started_at"] and first["resumed"] is False
    time.sleep(1.1)  # the record's times have whole seconds
    result = invoke(stub, tmp_path, "--model", "truth")
    assert result.exit_code == 0, result.output
    assert "resuming: 100 rows were answered before; 1,180 to ask in this run" in result.output
    assert "1,180/1,180 rows (and 100 answered before)" in result.output
    record = json.loads(record_path(tmp_path / "pred.jsonl").read_text())
    assert record["first_started_at"] == first["started_at"] < record["started_at"] and record["resumed"] is True


def test_the_run_record_counts_follow_the_run(tables, tmp_path, monkeypatch):
    """The record read 0 answered with 100 rows in the output."""
    import threading

    from mathbode.runner import run as run_module

    monkeypatch.setattr(run_module, "CHECKPOINT_SECONDS", 0.0)
    server = StubOpenAI(*tables, latency=0.01).start()
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        path = record_path(tmp_path / "pred.jsonl")
        while not done.is_set():
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if record["status"] == "running":
                seen.append(record["counts"]["answered"])
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = invoke(server, tmp_path, "--model", "truth", "--limit", "60", "--concurrency", "1")
    finally:
        done.set()
        watcher.join()
        server.stop()
    assert result.exit_code == 0, result.output
    assert max(seen) > 10 and seen == sorted(seen)


def test_other_parameters_on_resume_are_refused_unless_overwriting(stub, tmp_path):
    assert invoke(stub, tmp_path, "--model", "truth", "--limit", "10").exit_code == 0
    result = invoke(stub, tmp_path, "--model", "truth", "--temperature", "0.7")
    assert result.exit_code == 2
    assert "holds answers of a run with other parameters (temperature 0.0 -> 0.7)" in result.output
    result = invoke(stub, tmp_path, "--model", "truth", "--temperature", "0.7", "--limit", "3", "--overwrite")
    assert result.exit_code == 0, result.output
    assert len(lines_of(tmp_path / "pred.jsonl")) == 3


def test_a_file_not_written_by_the_runner_is_not_resumed(stub, tmp_path):
    (tmp_path / "pred.jsonl").write_text('{"some": "thing"}\n')
    result = invoke(stub, tmp_path, "--model", "truth")
    assert result.exit_code == 2
    assert "has no run record (pred.run.json), so it was not written by mathbode-run" in result.output


def _start_run(stub, out: Path, *extra: str) -> subprocess.Popen:
    argv = [str(BIN / "mathbode-run"), "--base-url", stub.base_url, "--model", "truth", "-o", str(out), *extra]
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    # A terminal's process starts with SIGINT at its default; a child inherits its parent's
    # disposition, and whatever this test process has at this moment must not decide the test.
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_lines(path: Path, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {n} lines")


def test_a_run_killed_with_sigkill_resumes_without_losing_or_repeating_a_row(tables, tmp_path):
    server = StubOpenAI(*tables, latency=0.01).start()
    out = tmp_path / "pred.jsonl"
    try:
        proc = _start_run(server, out, "--concurrency", "4")
        _wait_for_lines(out, 200)
        proc.kill()
        proc.wait(30)
        with open(out, "ab") as f:  # the torn line a kill in mid-write leaves
            f.write(b'{"family": "linear_solve", "question_id": 0, "signal_ty')
        resumed = _start_run(server, out, "--concurrency", "16")
        _, err = resumed.communicate(timeout=120)
    finally:
        server.stop()
    assert resumed.returncode == 0, err
    assert "cut off a torn last line" in err
    keys = [row_key(line) for line in lines_of(out)]
    assert len(keys) == len(set(keys)) == 1280
    assert validate_submission(out).valid


def test_ctrl_c_stops_cleanly_and_prints_the_command_that_resumes(tables, tmp_path):
    server = StubOpenAI(*tables, latency=0.02).start()
    # No more than 40 answers until the run is stopped: it is surely running when Ctrl-C comes,
    # however late a loaded machine wakes this test after the 20th line.
    server.answer_at_most = 40
    out = tmp_path / "pred.jsonl"
    try:
        proc = _start_run(server, out, "--concurrency", "2")
        _wait_for_lines(out, 20)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        server.answer_at_most = None
        server.stop()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert f"Interrupted. Resume with:\n  mathbode-run --base-url {server.base_url} --model truth -o {out}" in err
    assert json.loads(record_path(out).read_text())["status"] == "interrupted"
    assert all(not math.isnan(len(line)) for line in lines_of(out))  # every written line is whole


# -- constrained answers, one-shot prompting, zero compliance -------------------------------------
def test_a_constrained_run_sends_the_grammar_and_is_marked(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "truth", "--constrain-format", "gbnf", "--limit", "300", "--score")
    assert result.exit_code == 0, result.output
    grammar = stub.constraints["grammar"]
    assert grammar.startswith('root ::= "[answer_start] " "-"? [0-9] [0-9]?')
    assert grammar.endswith('"." [0-9] [0-9] [0-9] [0-9] [0-9] [0-9] " [answer_end]"\n')
    line = lines_of(tmp_path / "pred.jsonl")[0]
    assert line["meta"]["answer_format"] == "constrained (gbnf)" and line["meta"]["prompting"] == "zero-shot"
    scores = json.loads((tmp_path / "pred-report" / "scores.json").read_text())
    assert scores["conditions"] == {
        "answer_format": "constrained (gbnf)",
        "prompting": "zero-shot",
        "protocol": "stateless",
    }
    assert "answer format constrained (gbnf) by the server: this measures the model" in result.output
    record = json.loads(record_path(tmp_path / "pred.jsonl").read_text())
    assert record["parameters"]["constrain_format"] == "gbnf"


def test_a_json_schema_answer_is_unwrapped_into_the_tags(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "truth", "--constrain-format", "json-schema", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert stub.constraints["response_format"]["type"] == "json_schema"
    for line in lines_of(tmp_path / "pred.jsonl"):
        assert line["response"].startswith("[answer_start] ") and line["response"].endswith(" [answer_end]")
    assert "100.0% compliant" in result.output


def test_regex_mechanisms_send_the_answer_pattern(stub, tmp_path):
    pattern = r"\[answer_start\] -?[0-9]{1,9}\.[0-9]{6} \[answer_end\]"
    assert invoke(stub, tmp_path, "--model", "truth", "--constrain-format", "vllm-regex", "--limit", "1").exit_code == 0
    assert stub.constraints["guided_regex"] == pattern
    out = "sg.jsonl"
    result = invoke(
        stub, tmp_path, "--model", "truth", "--constrain-format", "sglang-regex", "--limit", "1", output=out
    )
    assert result.exit_code == 0 and stub.constraints == {"regex": pattern}


def test_one_shot_prepends_a_worked_example(stub, tmp_path, monkeypatch):
    from mathbode.runner.formats import one_shot_messages

    messages = one_shot_messages()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == "[answer_start] 4.375000 [answer_end]"
    result = invoke(stub, tmp_path, "--model", "truth", "--one-shot", "--limit", "2")
    assert result.exit_code == 0, result.output
    assert lines_of(tmp_path / "pred.jsonl")[0]["meta"]["prompting"] == "one-shot"


def test_zero_compliance_is_said_first_with_reasons_and_examples(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "junk", "--concurrency", "32", "--score")
    assert result.exit_code == 0, result.output
    assert "junk: 0 of 1,280 answers were compliant: 1,280 had no answer tags at all." in result.output
    assert 'e.g. "I think the answer is probably around forty-two, give or take."' in result.output
    assert "note: junk: every family: n/a: no compliant answers." in result.output
    md = (tmp_path / "pred-report" / "report.md").read_text()
    assert "**0 of 1,280 answers were compliant: 1,280 had no answer tags at all.**" in md
    assert (tmp_path / "pred-report" / "bode.png").read_bytes()[:4] == b"\x89PNG"


def test_a_server_that_refuses_the_constraint_says_so(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "plain", "--constrain-format", "gbnf")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"Error: {stub.base_url} refused the request (400): Unknown parameter: grammar. The server may not "
        "support --constrain-format gbnf; try another mechanism."
    )


def test_a_server_echoing_the_key_does_not_get_it_printed(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "echo", env={"OPENAI_API_KEY": SECRET})
    assert result.exit_code == 1 and SECRET not in result.output
    assert result.output.splitlines()[-1] == (
        f"Error: {stub.base_url} refused the request (400): bad request from Authorization: Bearer [redacted]."
    )


def test_redaction_covers_bearer_values_and_hub_tokens():
    from mathbode.core.redact import redact

    assert redact("Authorization: Bearer abc.def-123, then hf_AbCdEf123456 and s3cr3t-key", "s3cr3t-key") == (
        "Authorization: Bearer [redacted], then [redacted] and [redacted]"
    )


def test_the_instruction_can_be_sent_as_the_system_message(stub, tmp_path):
    result = invoke(stub, tmp_path, "--model", "truth", "--instruction-as-system", "--limit", "3")
    assert result.exit_code == 0, result.output
    instruction = LAY.answer_instruction()
    system, user = stub.last_messages
    assert system == {"role": "system", "content": instruction}
    assert user["role"] == "user" and instruction not in user["content"]
    assert "100.0% compliant" in result.output
    assert json.loads(record_path(tmp_path / "pred.jsonl").read_text())["parameters"]["instruction_as_system"]
