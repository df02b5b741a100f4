"""Every command on a multi-tone release (issue 42): prompts, batch write/read, the inspect and
lm-eval tasks, convert and push --dry-run, each the cheapest run that shows it works end to end:
a model that answers the exact answers reads linear within the floor through each of them."""

from __future__ import annotations

import json
import re
import socket

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release
from mathbode.cli.batch import main as batch_cli
from mathbode.cli.convert import main as convert_cli
from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.push import main as push_cli
from mathbode.cli.score import main as score_cli
from mathbode.schema.keys import row_key
from mathbode.schema.parsing import truncate

from .fixtures.stub_batch import answer_batch
from .fixtures.stub_openai import StubOpenAI

FAMILY = "similar_triangles"
ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}
#: What a model answering the exact answers (to six decimals) reads, stateless.
LINEAR = "linear within the floor; memory not read (stateless protocol)"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("mt-commands") / "release"
    build_release([get_family(FAMILY)], out, drives="multitone")
    return out


@pytest.fixture(scope="module")
def rows(release):
    return pq.read_table(release / "data" / f"{FAMILY}.parquet").to_pylist()


@pytest.fixture(scope="module")
def truth_by_prompt(rows):
    return {r["prompt"]: r["ground_truth"] for r in rows}


def _text(truth: float) -> str:
    return f"[answer_start] {truncate(truth):.6f} [answer_end]"


def _scored(tmp_path, submission, release):
    out = tmp_path / "scored"
    argv = [str(submission), "--reference", str(release), "--json", "--no-plots", "--out", str(out)]
    result = CliRunner().invoke(score_cli, argv)
    assert result.exit_code == 0, result.output
    (scores,) = json.loads(result.stdout)
    return scores


def _reads_linear(scores, rows=1920):
    reading = scores["multitone"]["families"][FAMILY]
    # Every row: preset ALL; fewer (the first question's 640): custom.
    assert scores["preset"] == ("ALL" if rows == 1920 else "custom")
    assert scores["multitone"]["rows"] == scores["multitone"]["answers"] == rows
    assert reading["verdict"] == LINEAR
    assert all(abs(line["gain"] - 1) < 1e-5 for line in reading["lines"] if line["kind"] == "excited")


def test_prompts_of_a_multitone_release_are_its_rows(release, rows, tmp_path):
    out = tmp_path / "requests.jsonl"
    argv = ["--preset", "ALL", "--reference", str(release), "-o", str(out)]
    result = CliRunner().invoke(prompts_cli, argv)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    by_key = {row_key(r): r["prompt"] for r in rows}
    # 3 questions x (4 realizations x 2 periods + 2 two-tone periods) x 64 steps, each its row's prompt.
    assert len(lines) == 1920 and {line["signal_type"] for line in lines} == {"multisine", "two_tone"}
    assert all(line["prompt"] == by_key[row_key(line)] for line in lines)


def test_a_batch_written_and_read_back_scores_as_the_exact_answers(release, truth_by_prompt, tmp_path):
    stub = StubOpenAI({prompt: _text(truth) for prompt, truth in truth_by_prompt.items()}).start()
    try:
        folder = tmp_path / "batch"
        argv = ["write", "--reference", str(release), "--preset", "ALL", "--model", "truth", "-o", str(folder)]
        result = CliRunner().invoke(batch_cli, argv, env=ENV)
        assert result.exit_code == 0, result.output
        inputs = sorted(folder.glob("requests*.jsonl"))
        answer_batch(stub.base_url, inputs, tmp_path / "output.jsonl", tmp_path / "errors.jsonl")
    finally:
        stub.stop()
    out = tmp_path / "from-batch.jsonl"
    argv = ["read", str(folder), str(tmp_path / "output.jsonl"), str(tmp_path / "errors.jsonl"), "-o", str(out)]
    argv += ["--reference", str(release)]  # a release other than the canonical one is named, as for any command
    result = CliRunner().invoke(batch_cli, argv, env=ENV)
    assert result.exit_code == 0, result.output
    _reads_linear(_scored(tmp_path, out, release))


def test_the_inspect_task_on_a_multitone_release_converts_and_scores(release, truth_by_prompt, tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from mathbode.integrations.inspect_tasks import mathbode_task

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content=_text(truth_by_prompt[messages[-1].text]))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken (offline)
        return out

    task = mathbode_task("ALL", "all", str(release))
    model = get_model("mockllm/model", custom_outputs=answer)
    # The first question's 640 rows (its 4 realizations x 2 periods and its two-tone): inspect takes
    # a second per 15 samples here, and one question's multisine is a whole reading.
    (log,) = inspect_eval(
        task, model=model, log_dir=str(tmp_path / "logs"), display="none", limit=640, log_realtime=False
    )
    assert log.status == "success", log.error
    assert log.eval.dataset.samples == 1920 and len(log.samples) == 640
    assert {s.metadata["question_id"] for s in log.samples} == {0}
    out = tmp_path / "converted.jsonl"
    result = CliRunner().invoke(convert_cli, [log.location, "-o", str(out), "--reference", str(release)])
    assert result.exit_code == 0, result.output
    _reads_linear(_scored(tmp_path, out, release), rows=640)


def test_the_lm_eval_task_on_a_multitone_release_converts_and_scores(release, truth_by_prompt, tmp_path):
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from mathbode.integrations.lm_eval_tasks import FOLDER

    class Exact(LM):
        def generate_until(self, requests, disable_tqdm: bool = False):
            return [_text(truth_by_prompt[r.args[0]]) for r in requests]

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

    results = simple_evaluate(
        model=Exact(),
        tasks=["mathbode_all"],
        task_manager=TaskManager(include_path=str(FOLDER), metadata={"reference": str(release)}),
        log_samples=True,
    )
    assert results["results"]["mathbode_all"]["exact,none"] == 1.0
    tracker = EvaluationTracker(output_path=str(tmp_path / "out"))
    tracker.save_results_aggregated(results=results, samples=results["samples"])
    for name in results["configs"]:
        tracker.save_results_samples(task_name=name, samples=results["samples"][name])
    (samples,) = sorted((tmp_path / "out").rglob("samples_*.jsonl"))
    out = tmp_path / "converted.jsonl"
    result = CliRunner().invoke(convert_cli, [str(samples), "-o", str(out), "--reference", str(release)])
    assert result.exit_code == 0, result.output
    _reads_linear(_scored(tmp_path, out, release))


def test_push_dry_run_lists_a_multitone_release_and_sends_nothing(release, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network connection attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    result = CliRunner().invoke(push_cli, [str(release), "--repo-id", "test-org/MathBode-Multitone", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"  data/{FAMILY}.parquet" in result.output and "README.md" in result.output
    assert result.output.splitlines()[-1] == "Dry run: nothing was sent."


def test_the_card_describes_the_drives_and_not_the_sinusoid_grid(release):
    card = (release / "README.md").read_text()
    drives = json.loads((release / "MANIFEST.json").read_text())["drives"]
    assert "| multisine | odd random-phase multisine: sum over the excited lines k in 1, 3, 7, 9, 13, 15 " in card
    assert "f1 = 3, f2 = 4; 2 periods" in card and "2f1-f2 on 2, 2f2-f1 on 5" in card
    # Every realization's phases, as the manifest records them; the rows' period and realization said.
    for r, phases in drives["multisine"]["phases_turns"].items():
        assert f"| {r} | {', '.join(phases)} |" in card
    assert "`frequency_cycles` holds the **period**" in card and "Preset: ALL, every row" in card
    assert "| sinusoid | sin(" not in card and "Per question: 10 sweeps x 64 steps = 640 rows" in card


def test_a_multitone_score_prints_its_table_and_writes_its_lines_and_products(release, rows, tmp_path):
    submission = tmp_path / "exact.jsonl"
    fields = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")
    submission.write_text(
        "".join(json.dumps({**{k: r[k] for k in fields}, "response": _text(r["ground_truth"])}) + "\n" for r in rows)
    )
    out = tmp_path / "report"
    result = CliRunner().invoke(
        score_cli, [str(submission), "--reference", str(release), "--no-plots", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    m = scores["multitone"]["families"][FAMILY]
    console = result.stdout.splitlines()
    head = console.index(next(x for x in console if x.startswith("multi-tone (docs/multitone.md")))
    cells = [re.split(r"\s{2,}", line.strip()) for line in console[head + 1 : head + 3]]
    assert cells[0] == [
        "family",
        "verdict",
        "distortion (dB)",
        "even added (dB)",
        "odd added (dB)",
        "noise",
        "floor (dB)",
        "beyond the noise",
        "memory",
    ]
    assert cells[1] == [
        FAMILY,
        LINEAR,
        # The exact answers add nothing at the detection lines (zero power): below the floor.
        "below the floor",
        "below the floor",
        "below the floor",
        "none",
        f"{m['floor_db']:.1f}",
        "no",
        "not read (stateless)",
    ]
    # Tables of what was measured, and no table of a header alone.
    assert sorted(p.name for p in out.glob("*.csv")) == ["multitone_lines.csv", "two_tone.csv"]
    lines = (out / "multitone_lines.csv").read_text().splitlines()
    assert lines[0] == (
        "family,cycles,kind,gain,gain_low,gain_high,phase_deg,phase_low_deg,phase_high_deg,noise_db,"
        "stochastic_db,level_db,truth_level_db,error_level_db,added_db"
    )
    # 6 excited lines, 15 even and 10 odd detection lines (1..31 but the excited), in the order scored.
    assert len(lines) == 1 + len(m["lines"]) == 1 + 31
    first = lines[1].split(",")
    line, bla = m["lines"][0], m["bla_intervals"][0]
    assert first[:3] == [FAMILY, "1", "excited"] and float(first[3]) == line["gain"]
    assert float(first[4]) == bla["gain_low"] and float(first[11]) == line["level_db"]
    assert first[9] == "" and bla["noise_db"] is None  # every period alike: no noise to print
    products = (out / "two_tone.csv").read_text().splitlines()
    assert products[0] == "family,product,cycles,level_db,truth_level_db,error_level_db,added_db"
    assert [p.split(",")[1] for p in products[1:]] == [p["product"] for p in m["two_tone"]] and len(products) == 13
    assert "no `sweeps.csv` or `frequency_summary.csv`" in (out / "report.md").read_text()
    # The site compares multi-tone submissions: one row a submission's family, the console's cells.
    from mathbode.cli.site import main as site_cli

    site = tmp_path / "site"
    result = CliRunner().invoke(site_cli, [str(out), "-o", str(site)])
    assert result.exit_code == 0, result.output
    index = (site / "index.html").read_text()
    assert "Multi-tone submissions compared" in index
    below = "below the floor"
    row = "".join(f"<td>{cell}</td>" for cell in ["exact", FAMILY, LINEAR, below, below, below, "none"])
    assert row in index
