"""Publishing to the Hub and reading back, end to end against the Hub test double on 127.0.0.1.

The real `huggingface_hub` client and `datasets` talk to `tests/fixtures/fake_hub.py`. Most
commands run in this process with the client's endpoint constants pointed at the double
(`local_hub`); the first push, `load_dataset` and the unreachable-endpoint case run as true
subprocesses with HF_ENDPOINT set, as a user would (the client reads it when imported).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.push import main as push_cli
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.schema import layout

from .conftest import COMMITTED_DIST
from .fixtures.fake_hub import READ_TOKEN, WRITE_TOKEN, Blob, FakeHub

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def hub():
    server = FakeHub().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hub_env(hub, tmp_path_factory):
    home = tmp_path_factory.mktemp("hf_home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        HF_ENDPOINT=hub.endpoint,
        HF_HUB_DISABLE_XET="1",
        HF_HOME=str(home),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_DATASETS_CACHE=str(home / "datasets"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


@pytest.fixture
def local_hub(hub, monkeypatch, tmp_path):
    """This process's Hub client pointed at the test double (its constants are read at import)."""
    from .fixtures.fake_hub import point_hub_client_at

    point_hub_client_at(hub.endpoint, monkeypatch, tmp_path)
    return hub


def invoke(cli, args: list[str], **env: str):
    """A command in this process (stderr apart from stdout), as a user would run it."""
    result = CliRunner().invoke(cli, args, env=env or None)
    return result


def run(args: list[str], env: dict, **extra_env) -> subprocess.CompletedProcess:
    return subprocess.run(args, env={**env, **extra_env}, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def published(hub, hub_env):
    proc = run(
        [
            str(BIN / "mathbode-push"),
            str(COMMITTED_DIST),
            "--repo-id",
            "test-org/MathBode",
            "--token",
            WRITE_TOKEN,
            "--per-family-repos",
            "test-org/MathBode",
        ],
        hub_env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _load(env: dict, code: str) -> object:
    proc = run([sys.executable, "-c", code], env, HF_TOKEN=WRITE_TOKEN)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_push_publishes_one_commit_with_every_file(hub, published):
    repo = hub.repos[("dataset", "test-org/MathBode")]
    commit = repo.resolve("main")
    manifest = json.loads((COMMITTED_DIST / "MANIFEST.json").read_text())
    assert set(commit.files) == {".gitattributes", "MANIFEST.json", *manifest["files"]}
    for rel in manifest["files"]:
        assert commit.files[rel].data == (COMMITTED_DIST / rel).read_bytes()
    assert commit.files["data/linear_solve.parquet"].lfs and not commit.files["README.md"].lfs
    assert commit.message == (
        f"MathBode builder {manifest['builder_version']}: 47,040 rows, content {manifest['content_hash']}"
    )
    assert len(repo.commits) == 2  # the repository's first commit, then ours
    assert f"Published test-org/MathBode: {hub.endpoint}/datasets/test-org/MathBode/commit/" in published.stdout
    assert WRITE_TOKEN not in published.stdout + published.stderr


def test_load_dataset_reads_every_family_and_all_from_the_hub(hub_env, published):
    code = (
        "import json, datasets\n"
        "out = {}\n"
        f"for name in {list(json.loads((COMMITTED_DIST / 'MANIFEST.json').read_text())['families'])!r} + ['all']:\n"
        "    ds = datasets.load_dataset('test-org/MathBode', name)['train']\n"
        "    out[name] = [ds.num_rows, list(ds.features), str(ds.features['frequency_cycles'].dtype)]\n"
        "print(json.dumps(out))\n"
    )
    out = _load(hub_env, code)
    columns = list(layout().column_names)
    assert out.pop("all") == [47_040, columns, "float64"]
    assert len(out) == 5
    for name, (rows, features, dtype) in out.items():
        assert (rows, features, dtype) == (9_408, columns, "float64"), name


def test_per_family_repositories_load_on_their_own(hub, hub_env, published):
    repo = hub.repos[("dataset", "test-org/MathBode-linear_system")]
    files = repo.resolve("main").files
    assert set(files) == {".gitattributes", "README.md", "MANIFEST.json", "data/linear_system.parquet"}
    card = files["README.md"].data.decode()
    assert card.startswith("---\n") and "# MathBode: Linear System (`linear_system`)" in card
    assert "[test-org/MathBode](https://huggingface.co/datasets/test-org/MathBode)" in card
    out = _load(
        hub_env,
        "import json, datasets; d = datasets.load_dataset('test-org/MathBode-linear_system')['train']; "
        "print(json.dumps([d.num_rows, sorted(set(d['family']))]))",
    )
    assert out == [9_408, ["linear_system"]]


def test_validate_and_score_read_the_published_release_back(local_hub, published, tmp_path):
    result = invoke(validate_cli, ["hub:test-org/MathBode"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("hub:test-org/MathBode: valid dataset (0 error(s), 0 warning(s))")
    base = tmp_path / "base.jsonl"
    assert invoke(baseline_cli, ["--preset", "SMOKE", "-o", str(base)]).exit_code == 0
    docs = []
    for extra in (["--reference", "hub:test-org/MathBode@main"], []):
        result = invoke(score_cli, [str(base), "--json", "--no-plots", "--out", str(tmp_path / "r"), *extra])
        assert result.exit_code == 0, result.stderr
        docs.append(json.loads(result.stdout)[0])
    assert docs[0]["families"] == docs[1]["families"]
    sources = [d["provenance"]["reference"] for d in docs]
    assert [s["source"] for s in sources] == ["hub:test-org/MathBode@main", "builder"]
    assert sources[0]["content_hash"] == sources[1]["content_hash"]


def test_validate_names_a_missing_hub_repository(local_hub):
    result = invoke(validate_cli, ["hub:test-org/NoSuchThing"])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: hub:test-org/NoSuchThing: no such dataset repository on")


def test_pushing_the_same_release_again_changes_nothing(local_hub, published):
    repo = local_hub.repos[("dataset", "test-org/MathBode")]
    before = dict(repo.commits)
    result = invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", "test-org/MathBode"], HF_TOKEN=WRITE_TOKEN)
    assert result.exit_code == 0, result.stderr
    assert repo.commits == before


def test_create_pr_and_private(local_hub):
    args = [str(COMMITTED_DIST), "--repo-id", "test-org/Private", "--private", "--create-pr"]
    result = invoke(push_cli, args, HF_TOKEN=WRITE_TOKEN)
    assert result.exit_code == 0, result.stderr
    repo = local_hub.repos[("dataset", "test-org/Private")]
    assert repo.private and "refs/pr/1" in repo.refs
    assert "MANIFEST.json" not in repo.resolve("main").files
    assert f"{local_hub.endpoint}/datasets/test-org/Private/discussions/1" in result.stdout


# -- failures -----------------------------------------------------------------------------------
def test_a_rejected_token_is_named_without_printing_it(local_hub):
    result = invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", "test-org/X", "--token", "hf_wrong_secret"])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: The Hub rejected the token (401 Unauthorized). Pass a valid write token with "
        "--token or HF_TOKEN, or log in with `hf auth login`.\n"
    )
    assert "hf_wrong_secret" not in result.output


def test_a_read_only_token_cannot_write(local_hub):
    result = invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", "test-org/Y"], HF_TOKEN=READ_TOKEN)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: The token may not write to test-org/Y (403 Forbidden). Use a token with write access "
        "to its organization, or --create-pr to propose the change.\n"
    )


def test_no_token_at_all(local_hub):
    result = invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", "test-org/Z"])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: No Hugging Face token. Pass --token, set HF_TOKEN, or log in with `hf auth login` "
        "(a token with write access is needed to publish).\n"
    )


def test_unreachable_endpoint(hub_env):
    # A true subprocess: the endpoint comes from HF_ENDPOINT as a user sets it.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens once the socket is closed
    proc = run(
        [str(BIN / "mathbode-push"), str(COMMITTED_DIST), "--repo-id", "test-org/W"],
        hub_env,
        HF_ENDPOINT=closed,
        HF_TOKEN=WRITE_TOKEN,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"Error: Cannot reach the Hub at {closed} (")
    assert proc.stderr.endswith("Check the network connection and HF_ENDPOINT.\n")


@pytest.mark.parametrize("failure, cause", [("500", "HTTP 500"), ("reset", "RemoteProtocolError")])
def test_a_failed_large_file_upload_says_nothing_was_committed(local_hub, monkeypatch, failure, cause):
    """Before: `RuntimeError: Error while uploading 'data/linear_solve.parquet' to the Hub.` and a traceback."""
    import time

    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # the client's five retries, without their 23 s
    monkeypatch.setattr(local_hub, "lfs_failure", failure)
    monkeypatch.setattr(local_hub, "lfs", {})  # none of the data files uploaded yet (by any test)
    repo_id = f"test-org/Lfs-{failure}"
    result = invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", repo_id], HF_TOKEN=WRITE_TOKEN)
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    # The data files are uploaded side by side: the message names the one that failed first.
    said = re.fullmatch(
        r"(?s).*Error: uploading data/(\w+)\.parquet to the Hub's large-file storage failed \((.+?)\), so nothing "
        rf"was committed: {repo_id} holds none of this release's files \(it was created empty, as the push's first "
        r"step\)\. Push again: files the Hub already holds are not sent twice\. If it fails again, check the network "
        r"connection and the Hub's status\.\n",
        result.stderr,
    )
    families = json.loads((COMMITTED_DIST / "MANIFEST.json").read_text())["families"]
    assert said and said.group(1) in families and said.group(2) == cause, result.stderr
    assert "Traceback" not in result.output
    repo = local_hub.repos[("dataset", repo_id)]
    assert [c.message for c in repo.commits.values()] == ["initial commit"]
    # An existing repository is left as it was, and said to be.
    monkeypatch.setattr(local_hub, "lfs_failure", None)
    assert invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", repo_id], HF_TOKEN=WRITE_TOKEN).exit_code == 0
    before = dict(repo.commits)
    monkeypatch.setattr(local_hub, "lfs", {})  # the storage lost its copies: the next push uploads them again
    changed = {"data/linear_solve.parquet": Blob(b"x", True)}
    repo.commit(repo.resolve("main"), "a file changed on the Hub", changed, "main")
    before = dict(repo.commits)
    monkeypatch.setattr(local_hub, "lfs_failure", failure)
    again = invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", repo_id], HF_TOKEN=WRITE_TOKEN)
    assert again.exit_code == 1 and f"nothing was committed: {repo_id} is as it was." in again.stderr
    assert repo.commits == before


def test_an_invalid_release_is_refused_before_any_request(local_hub, tmp_path):
    broken = tmp_path / "dist"
    shutil.copytree(COMMITTED_DIST, broken)
    (broken / "data/linear_solve.parquet").write_bytes(b"not parquet")
    seen = len(local_hub.requests)
    result = invoke(push_cli, [str(broken), "--repo-id", "test-org/V"], HF_TOKEN=WRITE_TOKEN)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: {broken} is not a valid MathBode release; nothing was pushed.\n{broken}: INVALID dataset"
    )
    assert "data/linear_solve.parquet: found" in result.stderr
    assert len(local_hub.requests) == seen


@pytest.mark.parametrize(
    "repo_id, kind", [("spaces/test-org/app", "space"), ("https://huggingface.co/models/org/m", "model")]
)
def test_a_repository_of_another_kind_is_refused(repo_id, kind):
    result = CliRunner().invoke(push_cli, [str(COMMITTED_DIST), "--repo-id", repo_id, "--dry-run"])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: --repo-id {repo_id}: that is a {kind} repository; mathbode-push publishes "
        "dataset repositories. Give ORG/NAME of a dataset.\n"
    )


def test_dry_run_makes_no_network_connection(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network connection attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    result = CliRunner().invoke(
        push_cli,
        [str(COMMITTED_DIST), "--repo-id", "test-org/MathBode", "--dry-run", "--per-family-repos", "test-org/MathBode"],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("Would publish ") and lines[0].endswith(
        "/datasets/test-org/MathBode (public dataset repository, created if missing)"
    )
    assert "  data/linear_solve.parquet" in result.output and "LFS" in result.output
    assert result.output.count("Would publish") == 6
    assert lines[-1] == "Dry run: nothing was sent."
