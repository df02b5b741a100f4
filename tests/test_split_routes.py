"""Every route that writes a submission records the split it answered, and reads the reference it
recorded (issue 40, section 2).

Five writers (`mathbode run`, `batch read`, `convert` of an inspect log and of an lm-eval samples
file, `mathbode-baseline`) on three releases: the canonical one, a fresh split of a canonical
family, and a release of a family outside the canonical five (built without a seed, as a plugin's
is). Each file records its split on every line, scores 1 (calibrated MB-Core: the answers are
exact) against its own release, and is refused by `validate` and `score` against another split of
the same grid. One family each, SMOKE: 256 rows a file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.families import EXTENDED, FAMILIES
from mathbode.builder.oracle import baseline_lines, split_families
from mathbode.builder.release import build_release
from mathbode.builder.splits import SplitPlan
from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.batch import main as batch_cli
from mathbode.cli.convert import main as convert_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.hub.reference import resolve_reference
from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH
from mathbode.schema.selection import select_rows

from .conftest import COMMITTED_DIST
from .fixtures.stub_batch import answer_batch
from .fixtures.stub_openai import StubOpenAI

ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}
CANONICAL = "canonical"
#: release -> the release of another split on the same grid, that its answers are refused against.
OTHER = {CANONICAL: "fresh", "fresh": CANONICAL, "plugin": "plugin-fresh"}
WRITERS = ("run", "batch", "inspect", "lm-eval", "baseline")


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path | None]:
    """Release folders by name (the canonical release: None, the rows shipped with the package)."""
    root = tmp_path_factory.mktemp("routes")
    plugin = EXTENDED["garden_width"]
    built = {
        "fresh": ([FAMILIES["linear_solve"]], SplitPlan("routes-1")),
        "plugin": ([plugin], None),
        "plugin-fresh": ([plugin], SplitPlan("routes-2")),
    }
    for name, (families, plan) in built.items():
        build_release(families, root / name, split=plan)
    return {CANONICAL: None, **{name: root / name for name in built}}


def reference_args(folder: Path | None) -> list[str]:
    return ["--reference", str(folder)] if folder else ["--families", "linear_solve"]


@pytest.fixture(scope="module")
def truth(releases) -> dict[str, str]:
    """prompt -> its exact answer in the answer format, on every release of the module."""
    answers = {}
    for folder in releases.values():
        ref = resolve_reference("linear_solve" if folder is None else None, str(folder) if folder else None)
        rows = select_rows(ref.table, "SMOKE")
        drawn = split_families(list(ref.family_hashes), ref.split)
        answers.update({r["prompt"]: x["response"] for r, x in zip(rows, baseline_lines(rows, drawn), strict=True)})
    return answers


def invoke(command, argv: list[str]):
    return CliRunner().invoke(command, argv, env=ENV)


def write_run(folder: Path | None, out: Path, stub: StubOpenAI) -> None:
    argv = ["--base-url", stub.base_url, "--model", "truth", "--preset", "SMOKE", "-o", str(out)]
    done = invoke(run_cli, [*argv, *reference_args(folder)])
    assert done.exit_code == 0, done.output


def write_batch(folder: Path | None, out: Path, stub: StubOpenAI) -> None:
    work = out.with_suffix("")
    written = invoke(batch_cli, ["write", "--model", "truth", "-o", str(work / "batch"), *reference_args(folder)])
    assert written.exit_code == 0, written.output
    results, errors = work / "output.jsonl", work / "errors.jsonl"
    answer_batch(stub.base_url, sorted((work / "batch").glob("requests*.jsonl")), results, errors)
    # No --reference: the batch's manifest says which release it asked.
    done = invoke(batch_cli, ["read", str(work / "batch"), str(results), str(errors), "-o", str(out)])
    assert done.exit_code == 0, done.output
    if folder is not None:
        assert f"against the reference it recorded: {folder}" in done.output


def write_inspect(folder: Path | None, out: Path, truth: dict[str, str]) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from mathbode.integrations.inspect_tasks import smoke

    def answer(messages, tools, tool_choice, config):
        reply = ModelOutput.from_content(model="mockllm", content=truth[messages[-1].text])
        reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return reply

    task = smoke(reference=str(folder)) if folder else smoke(families="linear_solve")
    model = get_model("mockllm/model", custom_outputs=answer)
    (log,) = inspect_eval(task, model=model, log_dir=str(out.with_suffix("")), display="none", log_realtime=False)
    assert log.status == "success", log.error
    # No --reference: the log says which release its task read.
    done = invoke(convert_cli, [log.location, "-o", str(out)])
    assert done.exit_code == 0, done.output


def write_lm_eval(folder: Path | None, out: Path, truth: dict[str, str]) -> None:
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from mathbode.integrations.lm_eval_tasks import FOLDER

    class Exact(LM):
        def generate_until(self, requests, disable_tqdm: bool = False):
            return [truth[r.args[0]] for r in requests]

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
            raise NotImplementedError

    metadata = {"reference": str(folder)} if folder else None
    task = "mathbode_smoke" if folder else "mathbode_smoke_linear_solve"
    manager = TaskManager(include_path=str(FOLDER), metadata=metadata)
    results = simple_evaluate(model=Exact(), tasks=[task], task_manager=manager, log_samples=True, metadata=metadata)
    logs = out.with_suffix("")
    tracker = EvaluationTracker(output_path=str(logs))
    tracker.save_results_aggregated(results=results, samples=results["samples"])
    tracker.save_results_samples(task_name=task, samples=results["samples"][task])
    (samples,) = logs.rglob("samples_*.jsonl")
    done = invoke(convert_cli, [str(samples), "-o", str(out)])
    assert done.exit_code == 0, done.output


def write_baseline(folder: Path | None, out: Path) -> None:
    done = invoke(baseline_cli, ["--preset", "SMOKE", "-o", str(out), *reference_args(folder)])
    assert done.exit_code == 0, done.output


class Submissions:
    """(writer, release) -> the submission that writer wrote of SMOKE on that release, written the
    first time a test asks for it. Lazily, because pytest-xdist spreads this module's tests over its
    workers: each writes only the submissions its own tests read (writing all fifteen up front,
    every worker wrote every one, 43 s each)."""

    def __init__(self, releases: dict[str, Path | None], truth: dict[str, str], root: Path) -> None:
        self.releases, self.truth, self.root = releases, truth, root
        self.written: dict[tuple[str, str], Path] = {}
        self.stub: StubOpenAI | None = None

    def __getitem__(self, key: tuple[str, str]) -> Path:
        if key not in self.written:
            writer, name = key
            folder, path = self.releases[name], self.root / f"{writer}-{name}.jsonl"
            if writer in ("run", "batch") and self.stub is None:
                self.stub = StubOpenAI(self.truth).start()
            if writer == "run":
                write_run(folder, path, self.stub)
            elif writer == "batch":
                write_batch(folder, path, self.stub)
            elif writer == "inspect":
                write_inspect(folder, path, self.truth)
            elif writer == "lm-eval":
                write_lm_eval(folder, path, self.truth)
            else:
                write_baseline(folder, path)
            self.written[key] = path
        return self.written[key]

    def stop(self) -> None:
        if self.stub is not None:
            self.stub.stop()


@pytest.fixture(scope="module")
def submissions(releases, truth, tmp_path_factory):
    written = Submissions(releases, truth, tmp_path_factory.mktemp("submissions"))
    yield written
    written.stop()


def split_of(folder: Path | None) -> str:
    if folder is None:
        return RELEASE_PROMPTS_HASH
    return json.loads((folder / "MANIFEST.json").read_text())["prompts_hash"]


@pytest.mark.parametrize("name", list(OTHER))
@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_records_its_split_scores_1_on_it_and_is_refused_on_another(
    writer, name, releases, submissions, tmp_path
):
    path, own, other = submissions[writer, name], releases[name], releases[OTHER[name]]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 256
    assert {line["meta"]["split"] for line in lines} == {split_of(own)}

    mine = ["--reference", str(own)] if own else []
    scored = invoke(score_cli, [str(path), "--json", "--no-plots", "--out", str(tmp_path / "own"), *mine])
    assert scored.exit_code == 0, scored.output
    assert "does not say which split" not in scored.output
    (document,) = json.loads(scored.stdout)
    assert [f["mb_core_calibrated"] for f in document["families"].values()] == [1.0]
    assert invoke(validate_cli, [str(path), *mine]).exit_code == 0

    against = ["--reference", str(other)] if other else []
    refused = invoke(score_cli, [str(path), "--json", "--no-plots", "--out", str(tmp_path / "other"), *against])
    assert refused.exit_code != 0
    where = str(other) if other else "(the canonical release)"
    assert f"answered the split {split_of(own)}, but --reference {where} is the split {split_of(other)}" in (
        refused.output
    )
    checked = invoke(validate_cli, [str(path), *against])
    assert checked.exit_code == 1
    assert f"field 'meta.split': expected the split of {other or 'the canonical release'}" in checked.output


def test_batch_read_and_convert_say_a_reference_given_in_place_of_the_recorded_one(releases, submissions, tmp_path):
    """The recorded release given by another spelling is said; a release of another split is refused."""
    work = submissions["batch", "fresh"].with_suffix("")
    batch_args = ["read", str(work / "batch"), str(work / "output.jsonl"), str(work / "errors.jsonl")]
    fresh = releases["fresh"]
    same = invoke(batch_cli, [*batch_args, "-o", str(tmp_path / "a.jsonl"), "--reference", f"{fresh}/"])
    assert same.exit_code == 0, same.output
    assert f"Note: the batch {work / 'batch'} recorded the reference {fresh}; read against --reference {fresh}/" in (
        same.output
    )
    (log,) = submissions["inspect", "fresh"].with_suffix("").glob("*.eval")
    for command, argv in ((batch_cli, batch_args), (convert_cli, [str(log)])):
        refused = invoke(command, [*argv, "-o", str(tmp_path / "b.jsonl"), "--reference", str(COMMITTED_DIST)])
        assert refused.exit_code == 2, refused.output
        assert f"--reference {COMMITTED_DIST} is the split {RELEASE_PROMPTS_HASH}, but the " in refused.output
        assert f"answered MathBode-split-routes-1 ({fresh}, split {split_of(fresh)})" in refused.output
        assert not (tmp_path / "b.jsonl").exists()


def test_a_batch_whose_release_moved_says_to_give_reference(releases, submissions, tmp_path):
    work = submissions["batch", "plugin"].with_suffix("")
    manifest = json.loads((work / "batch" / "manifest.json").read_text())
    manifest["reference"]["source"] = str(tmp_path / "gone")
    (tmp_path / "batch").mkdir()
    (tmp_path / "batch" / "manifest.json").write_text(json.dumps(manifest))
    argv = ["read", str(tmp_path / "batch"), str(work / "output.jsonl"), str(work / "errors.jsonl")]
    moved = invoke(batch_cli, [*argv, "-o", str(tmp_path / "x.jsonl")])
    assert moved.exit_code == 2
    assert f"({tmp_path / 'gone'}, split {split_of(releases['plugin'])}), which cannot be read here" in moved.output
    assert "Give --reference with where that release is now." in moved.output
    given = invoke(batch_cli, [*argv, "-o", str(tmp_path / "x.jsonl"), "--reference", str(releases["plugin"])])
    assert given.exit_code == 0, given.output


@pytest.fixture(scope="module")
def smoke_lines() -> list[dict]:
    ref = resolve_reference("linear_solve")
    return list(baseline_lines(select_rows(ref.table, "SMOKE"), split=RELEASE_PROMPTS_HASH))


@pytest.mark.parametrize("value, found", [(5, "a JSON number"), (["a"], "a JSON array"), ({"a": 1}, "a JSON object")])
@pytest.mark.parametrize("arrow", [True, False], ids=["columns", "lines"])
def test_a_split_that_is_not_a_string_is_refused_by_validate_and_score(
    smoke_lines, tmp_path, value, found, arrow, monkeypatch
):
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema import submission

    monkeypatch.setattr(submission, "ARROW_BLOCKS", arrow)
    path = tmp_path / "typed.jsonl"
    write_jsonl(path, [{**line, "meta": {"split": value}} if n >= 3 else line for n, line in enumerate(smoke_lines)])
    checked = invoke(validate_cli, [str(path)])
    assert checked.exit_code == 1
    assert "error (schema) field 'meta.split': expected a string: the prompts hash of the split" in checked.output
    assert f"line 4: found {found}" in checked.output and "[253 times, first 3 shown]" in checked.output
    scored = invoke(score_cli, [str(path), "--no-plots", "--out", str(tmp_path / "r")])
    assert scored.exit_code != 0 and "fails validation" in scored.output


@pytest.mark.parametrize(
    "second, listed",
    [
        ("sha256:other", f"'{RELEASE_PROMPTS_HASH}' (first on line 1), 'sha256:other' (first on line 201)"),
        (None, f"'{RELEASE_PROMPTS_HASH}' (first on line 1), no meta.split (first on line 201)"),
    ],
    ids=["two-splits", "some-lines-without"],
)
@pytest.mark.parametrize("arrow", [True, False], ids=["columns", "lines"])
def test_a_file_whose_lines_name_two_splits_is_refused_naming_them_and_their_lines(
    smoke_lines, tmp_path, second, listed, arrow, monkeypatch
):
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema import submission

    monkeypatch.setattr(submission, "ARROW_BLOCKS", arrow)
    monkeypatch.setattr(submission, "BLOCK_LINES", 100)  # the second split in a later block than the first
    lines = [dict(line) for line in smoke_lines]
    for line in lines[200:]:
        line["meta"] = {"split": second} if second else {}
    path = tmp_path / "mixed.jsonl"
    write_jsonl(path, lines)
    checked = invoke(validate_cli, [str(path)])
    assert checked.exit_code == 1
    assert "error (conditions) field 'meta.split': expected the same on every line" in checked.output
    assert f"file: found {listed}" in checked.output
    scored = invoke(score_cli, [str(path), "--no-plots", "--out", str(tmp_path / "r")])
    assert scored.exit_code != 0 and "fails validation" in scored.output
