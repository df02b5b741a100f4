"""Deliberate damage: releases edited and re-hashed consistently, manifests that point outside the
release, hostile Hub answers, runs killed mid-write, files of endless errors.

Random damage is caught by checksums; these are the edits an attacker makes so that every
checksum still agrees. None may validate, and none may end in a traceback.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathbode.builder.oracle import true_rows
from mathbode.cli.push import main as push_cli
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.core.atomic import atomic_folder, recover_leftovers, write_ownership
from mathbode.core.hashing import combined_hash, content_hash, file_sha256
from mathbode.schema import validate_dataset
from mathbode.schema.release_hashes import release_content_hash
from mathbode.schema.report import KEPT_PER_GROUP
from mathbode.schema.splits import prompts_hash, split_hash
from mathbode.schema.submission import read_submission
from mathbode.schema.truth_facts import truth_facts

from .conftest import COMMITTED_DIST

FAMILY = "linear_solve"
REL = f"data/{FAMILY}.parquet"


def rehash(folder: Path) -> None:
    """Make MANIFEST.json agree with the files again: every checksum, size, count, content and
    prompts hash, and the truth's facts."""
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    for entry in manifest["families"].values():
        tables = [pq.read_table(folder / rel) for rel in entry["files"]]
        for rel, table in zip(entry["files"], tables, strict=True):
            info = manifest["files"][rel]
            info.update(num_rows=table.num_rows, arrow_bytes=table.nbytes, num_bytes=(folder / rel).stat().st_size)
            info["sha256"] = file_sha256(folder / rel)
        entry["num_rows"] = sum(t.num_rows for t in tables)
        entry["content_hash"] = content_hash(pa.concat_tables(tables))
        if "prompts_hash" in entry:  # what a split's identity and the truth's facts say, redone too
            entry["prompts_hash"] = prompts_hash(pa.concat_tables(tables))
        if "truth" in entry:
            entry["truth"] = truth_facts(pa.concat_tables(tables))
    for rel, info in manifest["files"].items():
        if "num_rows" not in info and (folder / rel).is_file():
            info.update(num_bytes=(folder / rel).stat().st_size, sha256=file_sha256(folder / rel))
    manifest["num_rows"] = sum(e["num_rows"] for e in manifest["families"].values())
    manifest["content_hash"] = combined_hash([e["content_hash"] for e in manifest["families"].values()])
    if "prompts_hash" in manifest:
        manifest["prompts_hash"] = split_hash([e["prompts_hash"] for e in manifest["families"].values()])
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))


@pytest.fixture
def release(tmp_path) -> Path:
    folder = tmp_path / "dist"
    shutil.copytree(COMMITTED_DIST, folder)
    return folder


def _edit(folder: Path, change) -> None:
    table = pq.read_table(folder / REL)
    pq.write_table(change(table), folder / REL)
    rehash(folder)


def _set(table: pa.Table, column: str, row: int, value) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    i = table.schema.get_field_index(column)
    return table.set_column(i, table.schema.field(column), pa.array(values, table.schema.field(column).type))


def _validate(folder: Path):
    result = CliRunner().invoke(validate_cli, [str(folder)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_the_committed_release_is_named_canonical():
    result = _validate(COMMITTED_DIST)
    assert result.exit_code == 0
    assert f"canonical release: MathBode, content {release_content_hash()}" in result.output


@pytest.mark.parametrize(
    ("column", "value", "found"),
    [
        ("ground_truth", 1234.5, "found 1234.5, where the true value is "),
        ("prompt", "What is 2 + 2?", "found 'What is 2 + 2?', where the true value is 'Solve"),
        ("p_value", 9.999, "found 9.999, where the true value is "),
    ],
)
def test_an_edited_row_with_every_hash_redone_is_named(release, column, value, found):
    _edit(release, lambda t: _set(t, column, 100, value))
    result = _validate(release)
    assert result.exit_code == 1
    assert f"error (content) field '{column}': expected the {column} recomputed from the family's definition" in (
        result.output
    )
    assert f"{REL} row 100 (family=linear_solve, question_id=0" in result.output
    assert found in result.output
    assert "NOT a canonical release" in result.output


def test_reordered_rows_are_named(release):
    _edit(release, lambda t: pa.concat_tables([t.slice(0, 10), t.slice(11, 1), t.slice(10, 1), t.slice(12)]))
    report = validate_dataset(release, true_rows)
    assert not report.valid
    named = [(p.code, p.where) for p in report.errors]
    assert named == [("row-order", f"{REL} row 10"), ("row-order", f"{REL} row 11")]
    assert report.errors[0].found == (
        "(family=linear_solve, question_id=0, signal_type=sinusoid, amplitude_scale=0.5, frequency_cycles=1, "
        "phase_deg=0, time_step=11), where the canonical row is (family=linear_solve, question_id=0, "
        "signal_type=sinusoid, amplitude_scale=0.5, frequency_cycles=1, phase_deg=0, time_step=10)"
    )


def test_without_the_truth_a_non_canonical_family_is_still_an_error(release):
    _edit(release, lambda t: _set(t, "ground_truth", 5, 0.0))
    report = validate_dataset(release)  # no builder at hand: the hash alone decides
    assert not report.valid
    assert [p.code for p in report.errors] == ["content"]
    assert "mathbode-validate names the rows that differ" in report.errors[0].found


@given(data=st.data())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_consistently_rehashed_edit_validates(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("tamper") / "dist"
    shutil.copytree(COMMITTED_DIST, folder)
    row = data.draw(st.integers(0, 9407))
    column = data.draw(st.sampled_from(["p_value", "ground_truth", "prompt"]))
    table = pq.read_table(folder / REL)
    old = table.column(column)[row].as_py()
    new = old + "." if column == "prompt" else data.draw(st.floats(allow_nan=False, allow_infinity=False))
    if new == old:
        new = old + 1.0
    _edit(folder, lambda t: _set(t, column, row, new))
    report = validate_dataset(folder, true_rows)
    assert not report.valid
    assert any(p.code == "content" and p.field == column and f" row {row} " in p.where for p in report.errors)


def test_a_family_dropped_from_the_manifest_while_the_card_serves_it(release):
    manifest = json.loads((release / "MANIFEST.json").read_text())
    entry = manifest["families"].pop("similar_triangles")
    for rel in entry["files"]:
        manifest["files"].pop(rel)
    (release / "MANIFEST.json").write_text(json.dumps(manifest))
    rehash(release)
    report = validate_dataset(release, true_rows)
    assert not report.valid
    problems = {(p.code, p.field, p.found) for p in report.errors}
    assert ("card", "configs[similar_triangles]", "'similar_triangles'") in problems
    assert ("card", "configs[all]", "data/similar_triangles.parquet (unlisted)") in problems


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../outside.parquet", "a path with '..', '.' or an empty part"),
        ("/etc/hostname", "an absolute path"),
        ("data/../MANIFEST.json", "a path with '..', '.' or an empty part"),
        ("data/link.parquet", "a path leading outside the release (through a symlink)"),
    ],
)
def test_a_manifest_path_leading_outside_is_refused_by_validate_and_push(release, tmp_path, path, problem):
    outside = tmp_path / "outside.parquet"
    shutil.copy(release / REL, outside)
    (release / "data/link.parquet").symlink_to(outside)
    manifest = json.loads((release / "MANIFEST.json").read_text())
    manifest["files"][path] = manifest["files"].pop(REL)
    manifest["families"][FAMILY]["files"] = [path]
    (release / "MANIFEST.json").write_text(json.dumps(manifest))
    result = _validate(release)
    assert result.exit_code == 1
    assert f"error (path) field '{path}': expected relative paths inside the release" in result.output
    assert f"MANIFEST.json: found {problem}" in result.output
    pushed = CliRunner().invoke(push_cli, [str(release), "--repo-id", "org/x", "--dry-run"])
    assert pushed.exit_code == 1 and "nothing was pushed" in pushed.output
    assert pushed.exception is None or isinstance(pushed.exception, SystemExit)


def test_score_refuses_a_tampered_reference(release, tmp_path):
    _edit(release, lambda t: _set(t, "ground_truth", 0, 99.0))
    sub = tmp_path / "one.jsonl"
    row = pq.read_table(COMMITTED_DIST / REL).slice(0, 1).to_pylist()[0]
    keys = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")
    sub.write_text(json.dumps({**{k: row[k] for k in keys}, "prediction": 1.0}) + "\n")
    result = CliRunner().invoke(score_cli, [str(sub), "--reference", str(release), "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert f"--reference {release} is not a valid release" in result.output
    assert "ground_truth" in result.output


def test_a_file_of_endless_errors_keeps_counts_not_every_error(tmp_path):
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b'{"family": "x"}\n' * 5000)
    report = read_submission(path).report
    kinds = len(report.groups())  # the family, six missing key fields, no answer field
    assert kinds == 8 and report.num_errors == 5000 * kinds
    assert len(report.problems) == kinds * KEPT_PER_GROUP
    assert "[5,000 times, first 3 shown]" in report.format_text()


# -- hostile Hub answers --------------------------------------------------------------------------
class _Answer(http.server.BaseHTTPRequestHandler):
    status, body, kind = 200, b"", "text/html"

    def log_message(self, *args):
        pass

    def _answer(self):
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(self.status)
        self.send_header("content-type", self.kind)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(self.body)

    do_GET = do_POST = do_PUT = do_HEAD = _answer


@pytest.mark.parametrize(
    ("status", "body", "kind", "said"),
    [
        (200, b"<html><body>Sign in</body></html>", "text/html", "not a Hugging Face Hub API answer"),
        (500, bytes(range(256)), "application/octet-stream", "(500) with an answer that is not text"),
        (200, b"[1, 2, 3]", "application/json", "not a Hugging Face Hub API answer"),
        (500, b'{"error": "bad Bearer hf_EchoedSecret123 Authorization"}', "application/json", "refused"),
    ],
)
def test_hostile_hub_answers_are_hub_errors_and_never_echo_the_token(monkeypatch, tmp_path, status, body, kind, said):
    from huggingface_hub import constants

    handler = type("Handler", (_Answer,), {"status": status, "body": body, "kind": kind})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        token = "hf_EchoedSecret123"
        for cli, args in (
            (push_cli, [str(COMMITTED_DIST), "--repo-id", "org/x", "--token", token]),
            (validate_cli, ["hub:org/x"]),
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 1, result.output
            assert isinstance(result.exception, SystemExit), result.exception
            assert result.output.startswith("Error: ")
            assert token not in result.output
        pushed = CliRunner().invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", "org/x", "--token", token])
        assert said in pushed.output
    finally:
        server.shutdown()


# -- atomic replacement ---------------------------------------------------------------------------
KILLED_BETWEEN_RENAMES = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import mathbode.core.atomic as atomic
    atomic._between_renames = lambda: os.kill(os.getpid(), 9)
    with atomic.atomic_folder(Path(sys.argv[1]), 'release') as tmp:
        (tmp / "MARK").write_text("new")
    """
)


def test_a_run_killed_between_the_two_renames_is_repaired_by_the_next(tmp_path):
    out = tmp_path / "release"
    out.mkdir()
    (out / "MARK").write_text("old")
    write_ownership(out, "release")  # atomic_folder replaces only a folder it can prove it wrote (#32)
    env = {**os.environ, "MATHBODE_NO_EXCHANGE": "1"}  # the fallback path, which has the window
    proc = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_RENAMES, str(out)], env=env, timeout=60)
    assert proc.returncode == -9
    assert not out.exists()  # killed in the window: the old folder is aside
    # Aside: the old folder, and the new one that was about to be renamed in.
    assert sorted(p.name.split("-")[0] for p in tmp_path.iterdir()) == [".release.old", ".release.tmp"]
    recover_leftovers(out)
    assert (out / "MARK").read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["release"]


def test_the_next_write_recovers_then_cleans_a_killed_writers_temporaries(tmp_path):
    out = tmp_path / "release"
    out.mkdir()
    (out / "MARK").write_text("old")
    write_ownership(out, "release")  # atomic_folder replaces only a folder it can prove it wrote (#32)
    body = "import os, sys\nfrom pathlib import Path\nimport mathbode.core.atomic as a\n"
    body += "with a.atomic_folder(Path(sys.argv[1]), 'release') as tmp:\n    (tmp / 'half').write_text('x')\n"
    body += "    os.kill(os.getpid(), 9)\n"
    proc = subprocess.run([sys.executable, "-c", body, str(out)], timeout=60)
    assert proc.returncode == -9
    assert len(list(tmp_path.glob(".release.tmp-*"))) == 1  # the dead writer's half-written folder
    with atomic_folder(out, "release") as tmp:
        (tmp / "MARK").write_text("new")
    assert (out / "MARK").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["release"]


def test_the_swap_is_one_step_where_the_system_has_it(tmp_path, monkeypatch):
    import mathbode.core.atomic as atomic

    out = tmp_path / "release"
    out.mkdir()
    seen = []
    monkeypatch.setattr(atomic, "_between_renames", lambda: seen.append("window"))
    with atomic_folder(out, "release") as tmp:
        (tmp / "MARK").write_text("new")
    if sys.platform.startswith("linux"):
        assert seen == []  # renameat2(RENAME_EXCHANGE): no moment without a folder at `out`
    assert (out / "MARK").read_text() == "new"


def test_a_manifest_pointing_a_family_at_another_familys_file_is_refused(release, tmp_path):
    manifest = json.loads((release / "MANIFEST.json").read_text())
    manifest["families"][FAMILY]["files"] = ["data/ratio_saturation.parquet"]
    (release / "MANIFEST.json").write_text(json.dumps(manifest))
    result = _validate(release)
    assert result.exit_code == 1
    assert "error (manifest) field 'family': expected rows of linear_solve only" in result.output
    assert "NOT a canonical release: its rows are the canonical content, but the release fails" in result.output
    sub = tmp_path / "one.jsonl"
    row = pq.read_table(COMMITTED_DIST / REL).slice(0, 1).to_pylist()[0]
    keys = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")
    sub.write_text(json.dumps({**{k: row[k] for k in keys}, "prediction": 1.0}) + "\n")
    scored = CliRunner().invoke(score_cli, [str(sub), "--reference", str(release), "--out", str(tmp_path / "r")])
    assert scored.exit_code == 1 and "is not a valid release" in scored.output
