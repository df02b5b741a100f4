"""`mathbode-validate` of a submission to another release (issue 50, section 1): one finding that
names the release it answered and says to give `--reference`, not an unknown key per line; and,
with the release given, the coverage of its one preset, ALL."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release
from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.runner.stub_model import StubModel, running, systems_of
from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("mt") / "mt-release"
    build_release([get_family("linear_solve")], out, drives="multitone")
    return out


@pytest.fixture(scope="module")
def answers(release, tmp_path_factory):
    """The exact answers to every row of the multi-tone release (`mathbode baseline`: no record beside it)."""
    path = tmp_path_factory.mktemp("answers") / "mt.jsonl"
    done = CliRunner().invoke(baseline_cli, ["--reference", str(release), "--preset", "ALL", "-o", str(path)])
    assert done.exit_code == 0, done.output
    return path


def _split(release):
    return json.loads((release / "MANIFEST.json").read_text())["prompts_hash"]


def test_without_reference_one_finding_says_which_release_and_what_to_give(release, answers):
    done = CliRunner().invoke(validate_cli, [str(answers)])
    assert done.exit_code == 1
    assert done.output.splitlines() == [
        f"{answers}: INVALID submission (1 error(s), 0 warning(s))",
        f"  error (split) field 'meta.split': expected the split of the canonical release, {RELEASE_PROMPTS_HASH}",
        f"    file: found {_split(release)}: this submission answers another release (a multi-tone one: its rows are "
        "multisine and two-tone sweeps), not the canonical release; 1,920 of its keys are not rows of the canonical "
        "release. Give --reference DIR (that release's folder, or hub:ORG/NAME) to check it against the release it "
        "answered",
        "  coverage: not counted against the canonical release (the rows are another release's)",
    ]
    document = json.loads(CliRunner().invoke(validate_cli, [str(answers), "--json"]).output)
    (report,) = document["reports"]
    assert report["num_errors"] == 1 and [p["code"] for p in report["problems"]] == ["split"]


def test_a_run_record_beside_the_submission_names_the_release(release, tmp_path):
    out = tmp_path / "run.jsonl"
    with running(StubModel(systems_of(str(release)))) as url:
        argv = ["--model", "truth", "--base-url", url, "--reference", str(release), "--preset", "ALL"]
        done = CliRunner().invoke(run_cli, [*argv, "--limit", "64", "-o", str(out)])
    assert done.exit_code == 0, done.output
    checked = CliRunner().invoke(validate_cli, [str(out)])
    assert checked.exit_code == 1
    assert (
        f"found {_split(release)}: this submission answers the release MathBode-Multitone (--reference {release}, "
        "as its run.json record says), not the canonical release; 64 of its keys are not rows of the canonical "
        "release. Give --reference DIR"
    ) in checked.output


def test_with_reference_a_complete_multitone_submission_covers_all(release, answers, tmp_path):
    done = CliRunner().invoke(validate_cli, [str(answers), "--reference", str(release)])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[1:] == [
        "  coverage by family: linear_solve 1,920/1,920",
        "  coverage by preset: ALL 1,920/1,920",
        "  presets fully covered: ALL",
    ]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(answers.read_text().splitlines(keepends=True)[:100]))
    done = CliRunner().invoke(validate_cli, [str(part), "--reference", str(release)])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[2:] == ["  coverage by preset: ALL 100/1,920", "  presets fully covered: none"]
