"""Fresh and private splits: drawn from a seed, the same bytes anywhere, identified, never mixed up.

A split is built with `mathbode-build --seed`; its questions are new (no prompt in common with
the canonical release), its manifest and card say its seed (or only a commitment to it), its
canary and its prompts hash; a submission records the split it answered, and is refused against
another.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.families import FAMILIES, Family, resolve_families
from mathbode.builder.oracle import baseline_lines, split_families
from mathbode.builder.release import build_release
from mathbode.builder.splits import SplitError, SplitPlan, seed_commitment, seeded
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH
from mathbode.schema.selection import select_rows

from .fixtures.stub_openai import StubOpenAI


def build(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathbode", "build", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def splits(tmp_path_factory) -> dict[str, Path]:
    """Split A (seed 2026-12), split B (seed 2027-01), a private split and its prompts-only half."""
    root = tmp_path_factory.mktemp("splits")
    out = {name: root / name for name in ("a", "b", "private", "public")}
    build_release(resolve_families("all"), out["a"], split=SplitPlan("2026-12"))
    build_release(resolve_families("all"), out["b"], split=SplitPlan("2027-01", against=(out["a"],)))
    build_release(resolve_families("all"), out["private"], split=SplitPlan(SECRET, private=True))
    build_release(resolve_families("all"), out["public"], split=SplitPlan(SECRET, private=True, prompts_only=True))
    return out


def manifest(folder: Path) -> dict:
    return json.loads((folder / "MANIFEST.json").read_text())


def test_the_same_seed_gives_the_same_bytes_under_other_hash_seeds_and_locales(tmp_path, splits):
    outs = []
    for n, (hashseed, locale) in enumerate([("1", "C"), ("987654", "C.UTF-8")]):
        env = {**os.environ, "PYTHONHASHSEED": hashseed, "LC_ALL": locale, "LANG": locale}
        out = tmp_path / f"again{n}"
        done = build("--seed", "2026-12", "--out", str(out), "-q", env=env)
        assert done.returncode == 0, done.stderr
        outs.append(out)
    for out in outs:
        for rel in ["MANIFEST.json", "README.md", *manifest(splits["a"])["files"]]:
            assert (out / rel).read_bytes() == (splits["a"] / rel).read_bytes(), rel


def test_a_split_has_new_questions_on_the_same_grid_and_says_what_it_is(splits):
    m = manifest(splits["a"])
    assert m["name"] == "MathBode-split-2026-12" and m["split"] == {"seed": "2026-12"}
    assert m["num_rows"] == 47040 and list(m["families"]) == list(FAMILIES)
    assert m["overlap"] == {"MathBode": {"prompts_in_common": 0, "of": m["overlap"]["MathBode"]["of"]}}
    assert m["prompts_hash"] != RELEASE_PROMPTS_HASH and m["canary"]
    card = (splits["a"] / "README.md").read_text()
    assert f"Canary GUID: `{m['canary']}`" in card and "drawn anew from the seed <code>2026-12</code>" in card
    for name, family in FAMILIES.items():
        drawn = seeded(family, "2026-12")
        assert [v.constants for v in drawn.variants] != [v.constants for v in family.variants], name
    assert validate_dataset(splits["a"]).valid
    # Two splits report what they share (here: prompts whose drawn constants coincide).
    b = manifest(splits["b"])
    assert set(b["overlap"]) == {"MathBode", f"MathBode-split-2026-12 ({m['prompts_hash']})"}
    assert b["overlap"]["MathBode"]["prompts_in_common"] == 0


def test_a_private_split_keeps_its_seed_and_its_public_half_keeps_its_truth(splits):
    secret = SECRET
    private, public = manifest(splits["private"]), manifest(splits["public"])
    assert private["split"] == public["split"] == {"seed_sha256": seed_commitment(secret)}
    assert private["prompts_hash"] == public["prompts_hash"]  # one split: the same prompts
    assert public["prompts_only"] is True and "prompts_only" not in private
    for folder in (splits["private"], splits["public"]):
        for path in folder.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
    import pyarrow.parquet as pq

    assert "ground_truth" not in pq.read_table(splits["public"] / "data" / "linear_solve.parquet").column_names
    report = validate_dataset(splits["public"])
    assert report.valid, report.format_text()
    assert "a private split: only its keeper, who holds the seed, can draw its rows again" in report.format_text()


def test_a_family_without_draws_is_left_out_and_said(tmp_path):
    import dataclasses

    bare = dataclasses.replace(FAMILIES["similar_triangles"], draws={})
    with pytest.raises(SplitError, match="declares no draw for s"):
        seeded(bare, "x")
    result = build_release([FAMILIES["linear_solve"], bare], tmp_path / "r", split=SplitPlan("x"))
    assert list(result.manifest.families) == ["linear_solve"]
    assert result.warnings == ("similar_triangles: declares no draws, so it is left out of the fresh split",)


SECRET = "7f3a9c1e5b2d48f6a0c4e8b1d3f5a7c9"


def _answers(folder: Path) -> dict[str, str]:
    """prompt -> the symbolic baseline's answer on a split (its questions drawn from its seed)."""
    from mathbode.hub.reference import resolve_reference

    ref = resolve_reference("all", str(folder))
    rows = select_rows(ref.table, "SMOKE")
    drawn = split_families(list(ref.family_hashes), ref.split, SECRET)
    return {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows, drawn), strict=True)}


def test_a_run_on_one_split_is_refused_against_another_and_scores_1_on_its_own(splits, tmp_path):
    stub = StubOpenAI({**_answers(splits["private"]), **_answers(splits["a"])}).start()
    try:
        runs = {}
        for name in ("a", "public"):  # split A, and the private split run from its prompts-only half
            out = tmp_path / f"{name}.jsonl"
            argv = ["--base-url", stub.base_url, "--model", "truth", "--reference", str(splits[name]), "-o", str(out)]
            result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
            assert result.exit_code == 0, result.output
            runs[name] = out
    finally:
        stub.stop()
    first = json.loads(runs["a"].read_text().splitlines()[0])
    assert first["meta"]["split"] == manifest(splits["a"])["prompts_hash"]

    def score(path: Path, reference: Path) -> object:
        argv = [str(path), "--reference", str(reference), "--json", "--no-plots", "--out", str(tmp_path / "r")]
        return CliRunner().invoke(score_cli, argv)

    refused = score(runs["a"], splits["b"])
    assert refused.exit_code != 0
    a, b = manifest(splits["a"])["prompts_hash"], manifest(splits["b"])["prompts_hash"]
    assert f"answered the split {a}, but --reference {splits['b']} is the split {b}" in refused.output
    for path, reference in ((runs["a"], splits["a"]), (runs["public"], splits["private"])):
        result = score(path, reference)
        assert result.exit_code == 0, result.output
        (scores,) = json.loads(result.stdout)
        assert scores["overall"]["mb_core_calibrated"] == 1.0
    from mathbode.cli.validate import main as validate_cli

    checked = CliRunner().invoke(validate_cli, [str(runs["a"]), "--reference", str(splits["b"])])
    assert checked.exit_code == 1 and f"field 'meta.split': expected the split of {splits['b']}, {b}" in checked.output
    assert CliRunner().invoke(validate_cli, [str(runs["a"]), "--reference", str(splits["a"])]).exit_code == 0
    # The canonical release is a split too: split A's answers are refused against it.
    assert (
        "but --reference (the canonical release) is the split"
        in CliRunner().invoke(score_cli, [str(runs["a"]), "--json", "--no-plots", "--out", str(tmp_path / "r3")]).output
    )


def test_a_prompts_only_release_cannot_be_scored_against(splits, tmp_path):
    line = {
        "family": "linear_solve",
        "question_id": 0,
        "signal_type": "sinusoid",
        "amplitude_scale": 0.5,
        "frequency_cycles": 1.0,
        "phase_deg": 0.0,
        "time_step": 0,
        "prediction": 1.0,
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(line) + "\n")
    result = CliRunner().invoke(score_cli, [str(path), "--reference", str(splits["public"]), "--no-plots"])
    assert result.exit_code != 0
    assert "holds no ground truth" in result.output and "score against the full split" in result.output


def test_a_split_family_is_a_family_of_its_own_kind():
    assert isinstance(seeded(FAMILIES["linear_system"], "2026-12"), Family)


def test_the_symbolic_baseline_scores_1_on_any_split(splits, tmp_path):
    from mathbode.cli.baseline import main as baseline_cli

    for name, extra in (("a", []), ("private", ["--seed", SECRET])):
        out = tmp_path / f"baseline-{name}.jsonl"
        done = CliRunner().invoke(
            baseline_cli, ["--reference", str(splits[name]), "--preset", "SMOKE", "-o", str(out), *extra]
        )
        assert done.exit_code == 0, done.output
        argv = [str(out), "--reference", str(splits[name]), "--json", "--no-plots", "--out", str(tmp_path / name)]
        result = CliRunner().invoke(score_cli, argv)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)[0]["overall"]["mb_core_calibrated"] == 1.0
    refused = CliRunner().invoke(baseline_cli, ["--reference", str(splits["private"]), "-o", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "a private split: its seed is not published" in refused.output
    wrong = CliRunner().invoke(baseline_cli, ["--reference", str(splits["private"]), "--seed", "guess", "-o", "-"])
    assert wrong.exit_code == 2 and "does not match the split's commitment" in wrong.output


def test_the_inspect_task_runs_from_a_prompts_only_release_and_its_keeper_scores_it(splits, tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from mathbode.cli.convert import main as convert_cli
    from mathbode.integrations.inspect_tasks import smoke

    answers = _answers(splits["private"])

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content=answers[messages[-1].text])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=answer)
    task = smoke(reference=str(splits["public"]))
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", log_realtime=False)
    assert log.status == "success", log.error
    assert log.eval.metadata["split"] == manifest(splits["public"])["prompts_hash"]
    out = tmp_path / "converted.jsonl"
    done = CliRunner().invoke(convert_cli, [log.location, "-o", str(out), "--reference", str(splits["public"])])
    assert done.exit_code == 0, done.output
    argv = [str(out), "--reference", str(splits["private"]), "--json", "--no-plots", "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(score_cli, argv)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["overall"]["mb_core_calibrated"] == 1.0


def test_the_lm_eval_task_reads_a_prompts_only_release_and_judges_nothing(splits):
    pytest.importorskip("lm_eval")
    import math

    from mathbode.integrations import harness

    docs = harness.load_rows("SMOKE", "all", str(splits["public"]))["test"]
    assert len(docs) == 1280 and "ground_truth" not in docs.column_names
    results = [harness.process_results(doc, ["[answer_start] 1.000000 [answer_end]"]) for doc in docs]
    assert all(math.isnan(r["exact"]) for r in results)
    assert math.isnan(harness.mb_core([r["mb_core"] for r in results]))
