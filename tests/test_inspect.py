"""MathBode inside inspect-ai (issue #24): the tasks by name, the Bode metric through our scorer,
both protocols, and the log converted into a submission that `mathbode score` reads the same way.

Offline: models are inspect's `mockllm` (every output carries its usage, so inspect never asks
tiktoken for an encoding) or inspect's OpenAI-compatible provider against the stub on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH

inspect_ai = pytest.importorskip("inspect_ai")  # the `inspect` extra; CI installs it

from inspect_ai import Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from mathbode.cli.convert import main as convert_cli  # noqa: E402
from mathbode.integrations.inspect_tasks import smoke  # noqa: E402
from mathbode.schema import read_submission  # noqa: E402
from mathbode.schema.parsing import truncate  # noqa: E402

from .conftest import convert_and_score  # noqa: E402
from .test_sequential import ALPHA, low_pass  # noqa: E402

TWO = "linear_solve,similar_triangles"
#: 6-decimal truncation moves an answer by at most 1e-6, against sweep swings of 0.04 and more:
#: a gain or MB-Core differs from the exact value by less than 1e-4.
TRUNCATION = 1e-4


@pytest.fixture(scope="module")
def truth_by_prompt(reference):
    table = reference.table
    return dict(zip(table.column("prompt").to_pylist(), table.column("ground_truth").to_pylist(), strict=True))


def _output(text: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm", content=text)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken (offline)
    return out


def scaled_model(truth_by_prompt, gain: float, fail_on: str | None = None):
    """A memoryless model answering `gain` x the truth (a pure gain: Bode gain `gain`, phase 0)."""

    def answer(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        if fail_on and fail_on in prompt:
            raise RuntimeError("the model is down")
        return _output(f"[answer_start] {truncate(truth_by_prompt[prompt] * gain):.6f} [answer_end]")

    return get_model("mockllm/model", custom_outputs=answer)


def _eval(task, model, tmp_path, **kw):
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", log_realtime=False, **kw)
    assert log.status == "success", log.error
    scores = log.results.scores if log.results else []
    metrics = {name: m.value for name, m in scores[0].metrics.items()} if scores else {}
    return log, metrics


def test_an_exact_model_scores_1_by_task_name_and_its_log_scores_the_same(truth_by_prompt, tmp_path):
    log, metrics = _eval(smoke(families=TWO), scaled_model(truth_by_prompt, 1.0), tmp_path)
    assert log.eval.dataset.samples == 512
    assert metrics["accuracy"] == 1.0
    assert metrics["mb_core_calibrated"] == 1.0 and metrics["mb_plus_calibrated"] == 1.0
    assert metrics["mb_core"] == pytest.approx(1.0, abs=TRUNCATION)
    assert metrics["gain_4"] == pytest.approx(1.0, abs=TRUNCATION) and abs(metrics["phase_deg_4"]) < 1e-9
    out, said, scores = convert_and_score(tmp_path, [log.location])
    assert "1,280" not in said and "512 samples, 512 rows" in said
    sub = read_submission(out)
    assert len(sub.predictions) == 512 and sub.model == "mockllm/model"
    assert sub.conditions["protocol"] == "stateless"
    # The metric's overall is the mean over the task's two families; `mathbode score` reports the
    # same number as the named subset (its own overall needs all five, and stays n/a).
    assert scores["overall"]["mb_core"] is None
    assert scores["overall"]["subset"]["families"] == TWO.split(",")
    assert scores["overall"]["subset"]["mb_core"] == metrics["mb_core"]


def test_a_pure_gain_of_0_9_reads_gain_0_9_and_phase_0(truth_by_prompt, tmp_path):
    _, metrics = _eval(smoke(families=TWO), scaled_model(truth_by_prompt, 0.9), tmp_path)
    assert metrics["accuracy"] == 0.0 and metrics["compliance"] == 1.0
    for f in ("4", "8"):
        assert metrics[f"gain_{f}"] == pytest.approx(0.9, abs=TRUNCATION)
        assert abs(metrics[f"phase_deg_{f}"]) < 1e-9
    # MB-Core = 1 - 0.5 |G - 1| / 0.25 - 0.5 |phase| / 45 = 0.8 (the paper's scales).
    assert metrics["mb_core"] == pytest.approx(0.8, abs=TRUNCATION)
    assert metrics["mb_core_calibrated"] == pytest.approx(0.8, abs=TRUNCATION)


def test_a_task_of_some_families_scores_those_families_and_refuses_unknown_names(truth_by_prompt, tmp_path):
    task = smoke(families="similar_triangles")
    assert len(task.dataset) == 256
    assert len(smoke(families=["similar_triangles", "linear_solve"]).dataset) == 512  # -T families=a,b
    assert {s.metadata["family"] for s in task.dataset} == {"similar_triangles"}
    with pytest.raises(Exception, match="Unknown family 'linear_slove'. Did you mean 'linear_solve'"):
        smoke(families="linear_slove")
    with pytest.raises(ValueError, match="protocol='chat': choose 'stateless'"):
        smoke(protocol="chat")
    with pytest.raises(ValueError, match="history='0': give a positive number"):
        smoke(protocol="sequential", history="0")


def test_the_sequential_protocol_asks_what_mathbode_run_asks(truth_stub, tmp_path, reference):
    """Against one server, inspect's sweep conversation and `mathbode run --protocol sequential`
    get the same answers, run-in included: the anchoring stub's low-pass, read by both scorers alike."""
    from mathbode.cli.run import main as run_cli

    model = get_model("openai-api/local/anchor", base_url=truth_stub.base_url, api_key="x")
    task = smoke(families="similar_triangles", protocol="sequential", history=8)
    log, metrics = _eval(task, model, tmp_path)
    assert log.eval.dataset.samples == 4  # one sample per sweep
    for f in (4, 8):
        h = low_pass(f, ALPHA)
        # The default run-in of 8 leaves at most (1 - a)^8 = 0.004 of the start-up transient at step 0,
        # decaying by half a step: the fitted gain is within 1e-3 of the analytic one.
        assert metrics[f"gain_{f}"] == pytest.approx(abs(h), abs=1e-3)
    ours = tmp_path / "run.jsonl"
    argv = ["--base-url", truth_stub.base_url, "--model", "anchor", "-o", str(ours), "--preset", "SMOKE"]
    argv += ["--families", "similar_triangles", "--protocol", "sequential", "--history", "8"]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    converted, _, _ = convert_and_score(tmp_path, [log.location])
    theirs = {p.key: p.response for p in read_submission(converted).predictions}
    assert theirs == {p.key: p.response for p in read_submission(ours).predictions}
    assert read_submission(converted).conditions == {
        "answer_format": "free",
        "prompting": "zero-shot",
        "protocol": "sequential",
        "history": "8",
        "run_in": "8",
        "split": RELEASE_PROMPTS_HASH,  # the task's split, recorded by the task and carried by convert
    }
    assert read_submission(converted).conditions == read_submission(ours).conditions


def test_rows_the_model_failed_are_unanswered_lines_and_a_foreign_task_with_extra_fields_converts(
    truth_by_prompt, tmp_path, reference
):
    rows = [r for r in reference.table.to_pylist() if r["family"] == "linear_solve"][:64]
    keys = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")
    samples = [
        Sample(
            input=r["prompt"],
            target=str(r["ground_truth"]),
            id=i,
            metadata={**{k: r[k] for k in keys}, "difficulty": "easy", "source": "someone else's task"},
        )
        for i, r in enumerate(rows)
    ]
    samples.append(Sample(input="What is 2 + 2?", target="4", id="not-a-row"))
    failing = rows[5]["prompt"].split("where ")[1][:14]  # this p value's prompts fail
    task = Task(dataset=samples, solver=generate())
    log, _ = _eval(task, scaled_model(truth_by_prompt, 1.0, fail_on=failing), tmp_path, fail_on_error=False)
    failed = sum(1 for r in rows if failing in r["prompt"])
    assert 0 < failed < 64
    out, said, _ = convert_and_score(tmp_path, [log.location])
    assert f"65 samples, 64 rows; {failed} with no answer (written as prediction null)" in said
    assert "1 samples skipped: no MathBode key fields" in said
    sub = read_submission(out)
    assert sum(1 for p in sub.predictions if not p.has_response and p.prediction is None) == failed


def test_a_log_without_mathbode_rows_or_of_another_kind_is_refused_with_what_to_do(tmp_path, truth_by_prompt):
    task = Task(dataset=[Sample(input="What is 2 + 2?", target="4", id=1)], solver=generate())
    log, _ = _eval(task, get_model("mockllm/model", custom_outputs=[_output("4")]), tmp_path)
    result = CliRunner().invoke(convert_cli, [log.location, "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2
    assert "no MathBode rows in" in result.output and "in its metadata (inspect) or doc (lm-eval)" in result.output
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = CliRunner().invoke(convert_cli, [str(notes), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2 and "not a log this command reads" in result.output
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    result = CliRunner().invoke(convert_cli, [str(bad), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2 and "not a readable inspect-ai log" in result.output
    assert not (tmp_path / "p.jsonl").exists()


def test_inspect_eval_on_the_command_line_then_convert_and_score_gives_1280_rows_and_mb_core_1(truth_stub, tmp_path):
    """The issue's acceptance: `inspect eval mathbode/smoke` against an OpenAI-compatible server
    that answers the truth, then `mathbode convert` and `mathbode score`. The task is found by its
    registered name (the `inspect_ai` entry point), run from a folder of the user's."""
    env = {**os.environ, "LOCAL_BASE_URL": truth_stub.base_url, "LOCAL_API_KEY": "x"}
    logs = tmp_path / "logs"
    command = ["inspect", "eval", "mathbode/smoke", "--model", "openai-api/local/truth", "--log-dir", str(logs)]
    inspect = Path(sys.executable).with_name("inspect")
    run = subprocess.run(
        [str(inspect), *command[1:], "--max-connections", "32", "--display", "none"], env=env, cwd=tmp_path
    )
    assert run.returncode == 0
    (log,) = logs.glob("*.eval")
    out = tmp_path / "p.jsonl"
    converted = subprocess.run(
        [sys.executable, "-m", "mathbode", "convert", str(log), "-o", str(out)], capture_output=True, text=True
    )
    assert converted.returncode == 0, converted.stderr
    scored = subprocess.run(
        [sys.executable, "-m", "mathbode", "score", str(out), "--json", "--no-plots", "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
    )
    assert scored.returncode == 0, scored.stderr
    (scores,) = json.loads(scored.stdout)
    assert scores["num_rows"] == 1280 and scores["preset"] == "SMOKE" and scores["model"] == "openai-api/local/truth"
    assert scores["overall"]["mb_core"] == pytest.approx(1.0, abs=TRUNCATION)  # prints as 1.0000
    assert scores["overall"]["mb_core_calibrated"] == 1.0


def test_an_inspect_log_without_the_inspect_extra_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if inspect-ai were not installed
    log = tmp_path / "run.eval"
    log.write_bytes(b"PK\x03\x04")
    result = CliRunner().invoke(convert_cli, [str(log), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {log}: reading an inspect-ai log needs inspect-ai. Install it with: pip install 'mathbode[inspect]'\n"
    )


def test_convert_says_when_a_logs_requests_could_not_have_been_greedy(truth_stub, tmp_path):
    """inspect's openai/ provider drops temperature for a model it takes for a reasoning model,
    while the log still records 0.0: the answers are sampled, and convert says so."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from mathbode.cli.convert import main as convert_cli

    model = get_model("openai-api/local/truth", base_url=truth_stub.base_url, api_key="x")
    log, _ = _eval(smoke(families="similar_triangles"), model, tmp_path)
    greedy = CliRunner().invoke(convert_cli, [log.location, "-o", str(tmp_path / "a.jsonl")])
    assert greedy.exit_code == 0 and "not greedy" not in greedy.output, greedy.output
    full = read_eval_log(log.location)
    for sample in full.samples or []:
        for event in sample.events:
            if event.event == "model" and event.call is not None:
                event.call.request.pop("temperature", None)
    dropped = tmp_path / "dropped.eval"
    write_eval_log(full, str(dropped))
    result = CliRunner().invoke(convert_cli, [str(dropped), "-o", str(tmp_path / "b.jsonl")])
    assert result.exit_code == 0, result.output
    assert "its requests were sent without temperature 0" in result.output
    assert "the answers were sampled, not greedy" in result.output


def test_a_failed_log_beside_a_good_one_does_not_count_as_a_second_model(truth_by_prompt, tmp_path):
    """`inspect eval` without --model left a failed log of no samples; `convert logs/*.eval` then
    refused '2 models', and its hint (--model) renames rather than selects."""
    from inspect_ai.log import write_eval_log

    from mathbode.cli.convert import main as convert_cli

    log, _ = _eval(smoke(families="similar_triangles"), scaled_model(truth_by_prompt, 1.0), tmp_path)
    failed = log.model_copy(deep=True)
    failed.samples, failed.status = [], "error"
    failed.eval.model = "none/none"
    write_eval_log(failed, str(tmp_path / "failed.eval"))
    result = CliRunner().invoke(
        convert_cli, [log.location, str(tmp_path / "failed.eval"), "-o", str(tmp_path / "p.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert read_submission(tmp_path / "p.jsonl").model == "mockllm/model"
    assert "failed.eval: 0 samples, 0 rows" in result.output
