"""MathBode inside lm-evaluation-harness (issue #24): the task files shipped with the package, the
Bode metrics through our scorer, and its samples files converted into a submission.

Offline: the model is an `LM` subclass answering from the canonical rows, or lm-eval's own
`local-chat-completions` model against the stub server on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

lm_eval = pytest.importorskip("lm_eval")  # the `lm-eval` extra; CI installs it

from lm_eval import simple_evaluate  # noqa: E402
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.loggers import EvaluationTracker  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

from mathbode.cli.convert import main as convert_cli  # noqa: E402
from mathbode.integrations.lm_eval_tasks import FOLDER  # noqa: E402
from mathbode.schema import layout, read_submission  # noqa: E402
from mathbode.schema.parsing import truncate  # noqa: E402

from .conftest import COMMITTED_DIST, convert_and_score  # noqa: E402

#: As in test_inspect: 6-decimal truncation moves a gain or MB-Core by less than 1e-4.
TRUNCATION = 1e-4


class ScaledModel(LM):
    """Answers `gain` x the truth of the prompt: a pure gain (Bode gain `gain`, phase 0)."""

    def __init__(self, truth_by_prompt: dict[str, float], gain: float) -> None:
        super().__init__()
        self.truth, self.gain = truth_by_prompt, gain

    def generate_until(self, requests, disable_tqdm: bool = False):
        return [f"[answer_start] {truncate(self.truth[r.args[0]] * self.gain):.6f} [answer_end]" for r in requests]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("MathBode tasks only generate")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("MathBode tasks only generate")


@pytest.fixture(scope="module")
def truth_by_prompt(reference):
    table = reference.table
    return dict(zip(table.column("prompt").to_pylist(), table.column("ground_truth").to_pylist(), strict=True))


def test_the_family_group_of_a_pure_gain_reads_0_9_and_its_samples_score_the_same(truth_by_prompt, tmp_path):
    results = simple_evaluate(
        model=ScaledModel(truth_by_prompt, 0.9),
        tasks=["mathbode_smoke_families"],
        task_manager=TaskManager(include_path=str(FOLDER)),
        log_samples=True,
    )
    group = results["results"]["mathbode_smoke_families"]
    for family in layout().families:
        task = results["results"][f"mathbode_smoke_{family}"]
        assert task["gain_err_4,none"] == pytest.approx(0.1, abs=TRUNCATION), family
        assert task["phase_abs_deg_8,none"] < 1e-9 and task["compliance,none"] == 1.0, family
        assert task["exact,none"] == 0.0
    # MB-Core = 1 - 0.5 |G - 1| / 0.25 = 0.8; the group's is the mean over the five families.
    assert group["mb_core,none"] == pytest.approx(0.8, abs=TRUNCATION)
    tracker = EvaluationTracker(output_path=str(tmp_path / "out"))  # as `lm_eval --log_samples` writes
    tracker.save_results_aggregated(results=results, samples=results["samples"])
    for name in results["configs"]:
        tracker.save_results_samples(task_name=name, samples=results["samples"][name])
    files = sorted((tmp_path / "out").rglob("samples_*.jsonl"))
    assert len(files) == 5
    out, said, scores = convert_and_score(tmp_path, files)
    assert said.count("256 samples, 256 rows") == 5
    assert len(read_submission(out).predictions) == 1280
    assert scores["preset"] == "SMOKE" and scores["num_rows"] == 1280
    # One scorer, two means of the same five floats (lm-eval's weighted, numpy's): equal to 1e-12.
    assert scores["overall"]["mb_core"] == pytest.approx(group["mb_core,none"], abs=1e-12)


def test_lm_eval_on_the_command_line_against_a_server_then_convert(truth_stub, tmp_path):
    """The documented command (docs/frameworks.md): lm-eval's OpenAI-compatible chat model, the task files found with
    --include_path, the rows read from a release folder given as --metadata."""
    folder = subprocess.run(
        [sys.executable, "-m", "mathbode.integrations.lm_eval_tasks"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(folder) == FOLDER and (FOLDER / "mathbode_smoke.yaml").is_file()
    lm_eval_cli = Path(sys.executable).with_name("lm_eval")
    args = f"model=truth,base_url={truth_stub.base_url}/chat/completions,num_concurrent=8,tokenized_requests=False"
    run = subprocess.run(
        [str(lm_eval_cli), "--model", "local-chat-completions", "--model_args", args]
        + ["--tasks", "mathbode_smoke_similar_triangles", "--include_path", folder, "--apply_chat_template"]
        + ["--metadata", json.dumps({"reference": str(COMMITTED_DIST)}), "--log_samples"]
        + ["--output_path", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (samples,) = (tmp_path / "out").rglob("samples_*.jsonl")
    out, said, scores = convert_and_score(tmp_path, [samples])
    assert "256 samples, 256 rows" in said
    assert read_submission(out).model == "truth"  # from the results file beside the samples
    assert scores["families"]["similar_triangles"]["mb_core_calibrated"] == 1.0
    assert scores["accuracy"]["rate"] == 1.0


def _sample(doc: dict, resps) -> str:
    return json.dumps({"doc_id": 0, "doc": doc, "resps": resps, "filtered_resps": ["x"]}, allow_nan=True)


def test_a_samples_file_with_nan_missing_answers_and_extra_columns_converts(reference, tmp_path):
    rows = [r for r in reference.table.to_pylist() if r["signal_type"] == "step" and r["family"] == "linear_solve"]
    lines = []
    for i, row in enumerate(rows[:64]):
        doc = {**row, "difficulty": "hard", "frequency_cycles": float("nan"), "phase_deg": float("nan")}
        lines.append(_sample(doc, [] if i == 3 else [[f"[answer_start] {row['ground_truth']:.6f} [answer_end]"]]))
    lines.append(json.dumps({"doc_id": 99, "doc": {"question": "2 + 2"}, "resps": [["4"]]}))
    path = tmp_path / "samples_someone_2026-01-01T00-00-00.0.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert "NaN" in path.read_text()  # as lm-eval writes a null float
    out = tmp_path / "p.jsonl"
    result = CliRunner().invoke(convert_cli, [str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "65 samples, 64 rows; 1 with no answer (written as prediction null); 1 samples skipped" in result.output
    sub = read_submission(out)
    assert sub.model is None and len(sub.predictions) == 64
    assert sum(1 for p in sub.predictions if not p.has_response) == 1
    assert all(p.key.frequency_cycles is None for p in sub.predictions)


def test_a_broken_samples_file_is_refused_with_its_line_and_nothing_is_written(tmp_path):
    path = tmp_path / "samples_x_1.jsonl"
    path.write_text('{"doc": {}}\n{"doc": \n')
    result = CliRunner().invoke(convert_cli, [str(path), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2
    assert f"Error: {path} line 2: not a JSON object; is this an lm-eval samples file?" in result.output
    assert not (tmp_path / "p.jsonl").exists()
