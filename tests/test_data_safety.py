"""Never lose a user's file (issue #21, items 1-4): a folder is replaced only when its ownership
record proves we wrote every file in it; a refused key costs nothing; one writer per output; only
regular files are replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder import resolve_families
from mathbode.builder.oracle import baseline_lines
from mathbode.builder.release import build_release
from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.build import main as build_cli
from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.core.atomic import OWNERSHIP_FILE
from mathbode.runner.journal import OutputLock
from mathbode.schema.keys import row_key
from mathbode.schema.selection import select_rows

from .fixtures.stub_openai import StubOpenAI

SECRET = "sk-test-secret-0123456789"


def _score(*args):
    return CliRunner().invoke(score_cli, [str(a) for a in args])


def test_score_out_refuses_a_folder_that_merely_looks_like_a_report(smoke, tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "report.md").write_text("x")
    (folder / "analysis.py").write_text("y")
    result = _score(smoke, "--out", folder, "--no-plots")
    assert result.exit_code == 2 and "mathbode did not write it" in result.output
    assert (folder / "analysis.py").read_text() == "y" and (folder / "report.md").read_text() == "x"


def test_build_out_refuses_a_folder_with_any_manifest(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "MANIFEST.json").write_text('{"manifest_version": 3}')
    (folder / "background.js").write_text("keep")
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(folder)])
    assert result.exit_code == 2 and "mathbode did not write it" in result.output
    assert (folder / "background.js").read_text() == "keep"


def test_build_out_refuses_a_release_holding_a_users_extra_file(tmp_path):
    out = tmp_path / "rel"
    build_release(resolve_families("linear_solve"), out)
    (out / "data" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out)])
    assert result.exit_code == 2
    assert "holds files mathbode did not write (data/notes.txt)" in result.output
    assert (out / "data" / "notes.txt").read_text() == "mine"


def test_a_release_we_wrote_is_replaced_and_a_changed_file_is_not(tmp_path):
    out = tmp_path / "rel"
    build_release(resolve_families("linear_solve"), out)
    assert CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out)]).exit_code == 0
    record = json.loads((out / OWNERSHIP_FILE).read_text())
    assert record["written_by"] == "mathbode" and record["kind"] == "release"
    assert set(record["files"]) == {"MANIFEST.json", "README.md", "data/linear_solve.parquet"}
    (out / "README.md").write_text("my own notes on the card")
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out)])
    assert result.exit_code == 2 and "files changed since mathbode wrote them (README.md)" in result.output
    assert (out / "README.md").read_text() == "my own notes on the card"


def test_a_submission_inside_the_report_folder_is_never_deleted(smoke, tmp_path):
    out = tmp_path / "R"
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    mine = out / "my.jsonl"
    mine.write_bytes(smoke.read_bytes())
    result = _score(mine, "--out", out, "--no-plots")
    assert result.exit_code == 2 and "holds files mathbode did not write (my.jsonl)" in result.output
    assert mine.read_bytes() == smoke.read_bytes()
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 2  # still there: still refused


def test_a_report_we_wrote_is_replaced(smoke, tmp_path):
    out = tmp_path / "R"
    assert _score(smoke, "--out", out).exit_code == 0
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    assert not (out / "bode.png").exists()  # replaced whole: the new report has no figures
    assert json.loads((out / OWNERSHIP_FILE).read_text())["kind"] == "report"


@pytest.fixture
def stub(reference):
    rows = select_rows(reference.table, "SMOKE")
    answers = {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)}
    server = StubOpenAI(answers).start()
    yield server
    server.stop()


def _run(server, *args, env=None):
    argv = ["--base-url", server.base_url, "--model", "truth", *[str(a) for a in args]]
    return CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None, **(env or {})})


def test_run_refuses_an_output_inside_its_report_folder_before_asking(stub, tmp_path):
    report = tmp_path / "R"
    report.mkdir()
    result = _run(stub, "-o", report / "p.jsonl", "--score", "--report", report, "--limit", "5")
    assert result.exit_code == 2 and "is inside --report" in result.output
    assert not (report / "p.jsonl").exists() and stub.requests == 0


def test_an_overwrite_against_a_refusing_server_keeps_the_finished_output(reference, tmp_path):
    rows = select_rows(reference.table, "SMOKE")
    answers = {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)}
    open_server = StubOpenAI(answers).start()
    try:
        assert _run(open_server, "-o", tmp_path / "p.jsonl", "--limit", "256").exit_code == 0
    finally:
        open_server.stop()
    before = (tmp_path / "p.jsonl").read_bytes(), (tmp_path / "p.run.json").read_bytes()
    locked = StubOpenAI(answers, api_key=SECRET).start()
    try:
        result = _run(locked, "-o", tmp_path / "p.jsonl", "--overwrite", env={"OPENAI_API_KEY": "wrong-key"})
    finally:
        locked.stop()
    assert result.exit_code == 1
    assert ((tmp_path / "p.jsonl").read_bytes(), (tmp_path / "p.run.json").read_bytes()) == before
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 256


def test_a_second_run_on_the_same_output_is_refused_naming_the_first(tmp_path):
    output = tmp_path / "p.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from mathbode.runner.journal import OutputLock\n"
            "with OutputLock(Path(sys.argv[1])):\n    print('locked', flush=True); time.sleep(30)",
            str(output),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(Exception) as refused:
            with OutputLock(output):
                pass
        assert f"another mathbode run (process {holder.pid}) is writing it" in str(refused.value)
    finally:
        holder.kill()
        holder.wait()
    with OutputLock(output):  # the lock went with the killed process
        pass
    assert not Path(tmp_path / ".p.jsonl.lock").exists()


def test_two_runs_at_once_leave_one_complete_file(stub, tmp_path):
    """Two `mathbode run` on one -o both exited 0 and left 2,544 lines, 1,264 of them repeated."""
    env = {**os.environ, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    argv = [sys.executable, "-m", "mathbode", "run", "--base-url", stub.base_url, "--model", "truth"]
    argv += ["-o", str(tmp_path / "p.jsonl"), "--concurrency", "2"]
    stub.latency = 0.002
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    first_out = first.communicate(timeout=300)
    assert first.returncode == 0, first_out
    assert second.returncode == 2 and "another mathbode run" in second.stderr
    assert len(_keys(tmp_path / "p.jsonl")) == len(set(_keys(tmp_path / "p.jsonl"))) == 1280


def _keys(path):
    return [row_key(json.loads(line)) for line in path.read_text().splitlines()]


def test_a_resume_drops_lines_it_can_prove_repeated(stub, tmp_path):
    output = tmp_path / "p.jsonl"
    assert _run(stub, "-o", output, "--limit", "100").exit_code == 0
    lines = output.read_text().splitlines()
    output.write_text("\n".join(lines + lines[:30]) + "\n")  # what two writers left
    result = _run(stub, "-o", output)
    assert result.exit_code == 0, result.output
    assert "Dropped 30 repeated lines" in result.output
    assert len(_keys(output)) == len(set(_keys(output))) == 1280


def test_a_resume_refuses_two_different_answers_to_one_row(stub, tmp_path):
    output = tmp_path / "p.jsonl"
    assert _run(stub, "-o", output, "--limit", "10").exit_code == 0
    lines = output.read_text().splitlines()
    other = json.loads(lines[0]) | {"response": "[answer_start] 1.000000 [answer_end]"}
    output.write_text("\n".join([*lines, json.dumps(other)]) + "\n")
    result = _run(stub, "-o", output)
    assert result.exit_code != 0 and "lines 1 and 11: two different answers to one row" in result.output


@pytest.mark.parametrize("command", [baseline_cli, prompts_cli])
def test_only_regular_files_are_replaced(tmp_path, command):
    """As root, `baseline -o` onto a device node replaced the node with a file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = CliRunner().invoke(command, ["--preset", "SMOKE", "-o", str(fifo)])
    assert result.exit_code == 2 and "is not a regular file" in result.output
    assert fifo.is_fifo()


#: Every kind of JSON value, and what crashed or misled Arrow's reader, for a block's first line.
JSON_KINDS = [
    "null", "true", "false", "0", "-0", "1.5", "1e400", "NaN", "Infinity", '"text"', "[]", "[null]", "{}",
    '{"a": null}', "[" * 100_000 + "]" * 100_000, "{" * 3 + "}" * 3, "",
]  # fmt: skip

_FUZZ = r"""
import json, sys
from pathlib import Path
from mathbode.schema import validate_submission, validate_dataset
from mathbode.schema.submission import read_submission
from mathbode.evaluator.scorer.scoring import score
from mathbode.builder.oracle import canonical_reference
lines, release = Path(sys.argv[1]).read_text().splitlines(), Path(sys.argv[3])
kinds = json.loads(Path(sys.argv[2]).read_text())
ref = canonical_reference(["linear_solve"])
data = release / "data" / "linear_solve.jsonl"
rows = data.read_text().splitlines()
for at in (0, 8192):
    for kind in kinds:
        path = Path(sys.argv[4]) / "s.jsonl"
        path.write_text("\n".join(lines[:at] + [kind] + lines[at + 1:]) + "\n")
        report = validate_submission(path)
        assert not report.valid or kind == "", (at, kind[:20])
        sub = read_submission(path)
        score(sub.predictions, ref, "x")
        data.write_text("\n".join(rows[:at] + [kind] + rows[at + 1:]) + "\n")
        assert not validate_dataset(release).valid, (at, kind[:20])
print("survived", len(kinds) * 2)
"""


def test_every_json_value_kind_at_a_block_boundary_gets_a_verdict(reference, tmp_path):
    """A first line of `null` (or one at line 8,193, a block's start) killed validate and score
    with SIGSEGV, and the same in a JSONL release's data file."""
    rows = [r for r in reference.table.to_pylist() if r["family"] == "linear_solve"]
    lines = [json.dumps({k: r[k] for k in list(r)[:7]} | {"prediction": r["ground_truth"]}) for r in rows]
    assert len(lines) == 9408
    (tmp_path / "sub.jsonl").write_text("\n".join(lines) + "\n")
    build_release(resolve_families("linear_solve"), tmp_path / "rel", fmt="jsonl")
    (tmp_path / "kinds.json").write_text(json.dumps(JSON_KINDS))
    done = subprocess.run(
        [sys.executable, "-c", _FUZZ, str(tmp_path / "sub.jsonl"), str(tmp_path / "kinds.json"), str(tmp_path / "rel")]
        + [str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == f"survived {2 * len(JSON_KINDS)}"


def test_a_full_disk_during_a_run_is_a_message_and_the_run_resumes(stub, tmp_path, monkeypatch):
    import errno

    from mathbode.runner.journal import Journal

    output = tmp_path / "p.jsonl"
    real_append = Journal.append
    calls = {"n": 0}

    def append(self, record):
        calls["n"] += 1
        if calls["n"] > 5:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_append(self, record)

    with monkeypatch.context() as m:
        m.setattr(Journal, "append", append)
        result = _run(stub, "-o", output, "--limit", "40", "--concurrency", "1")
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert "Traceback" not in result.output and len(output.read_text().splitlines()) == 5
    resumed = _run(stub, "-o", output, "--limit", "40")
    assert resumed.exit_code == 0, resumed.output
    assert len(_keys(output)) == len(set(_keys(output))) == 45
