"""Publishing to the Hub and reading back, end to end against the Hub test double on 127.0.0.1.

The real `huggingface_hub` client and `datasets` run in subprocesses with HF_ENDPOINT pointing
at `tests/fixtures/fake_hub.py`: the client reads its endpoint when it is imported.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.cli.push import main as push_cli
from mathbode.schema import layout

from .conftest import COMMITTED_DIST
from .fixtures.fake_hub import READ_TOKEN, WRITE_TOKEN, FakeHub

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


def test_validate_and_score_read_the_published_release_back(hub_env, published, tmp_path):
    proc = run([str(BIN / "mathbode-validate"), "hub:test-org/MathBode"], hub_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("hub:test-org/MathBode: valid dataset (0 error(s), 0 warning(s))")
    base = tmp_path / "base.jsonl"
    assert run([str(BIN / "mathbode-baseline"), "--preset", "SMOKE", "-o", str(base)], hub_env).returncode == 0
    scores = []
    for extra in (["--reference", "hub:test-org/MathBode@main"], []):
        proc = run(
            [str(BIN / "mathbode-score"), str(base), "--json", "--no-plots", "--out", str(tmp_path / "r"), *extra],
            hub_env,
        )
        assert proc.returncode == 0, proc.stderr
        scores.append(json.loads(proc.stdout)[0]["families"])
    assert scores[0] == scores[1]


def test_validate_names_a_missing_hub_repository(hub_env):
    proc = run([str(BIN / "mathbode-validate"), "hub:test-org/NoSuchThing"], hub_env)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Error: hub:test-org/NoSuchThing: no such dataset repository on")


def test_pushing_the_same_release_again_changes_nothing(hub, hub_env, published):
    repo = hub.repos[("dataset", "test-org/MathBode")]
    before = dict(repo.commits)
    proc = run(
        [str(BIN / "mathbode-push"), str(COMMITTED_DIST), "--repo-id", "test-org/MathBode"],
        hub_env,
        HF_TOKEN=WRITE_TOKEN,
    )
    assert proc.returncode == 0, proc.stderr
    assert repo.commits == before


def test_create_pr_and_private(hub, hub_env):
    proc = run(
        [str(BIN / "mathbode-push"), str(COMMITTED_DIST), "--repo-id", "test-org/Private", "--private", "--create-pr"],
        hub_env,
        HF_TOKEN=WRITE_TOKEN,
    )
    assert proc.returncode == 0, proc.stderr
    repo = hub.repos[("dataset", "test-org/Private")]
    assert repo.private and "refs/pr/1" in repo.refs
    assert "MANIFEST.json" not in repo.resolve("main").files
    assert f"{hub.endpoint}/datasets/test-org/Private/discussions/1" in proc.stdout


# -- failures -----------------------------------------------------------------------------------
def test_a_rejected_token_is_named_without_printing_it(hub_env):
    proc = run(
        [str(BIN / "mathbode-push"), str(COMMITTED_DIST), "--repo-id", "test-org/X", "--token", "hf_wrong_secret"],
        hub_env,
    )
    assert proc.returncode == 1
    assert proc.stderr == (
        "Error: The Hub rejected the token (401 Unauthorized). Pass a valid write token with "
        "--token or HF_TOKEN, or log in with `hf auth login`.\n"
    )
    assert "hf_wrong_secret" not in proc.stdout + proc.stderr


def test_a_read_only_token_cannot_write(hub_env):
    proc = run(
        [str(BIN / "mathbode-push"), str(COMMITTED_DIST), "--repo-id", "test-org/Y"], hub_env, HF_TOKEN=READ_TOKEN
    )
    assert proc.returncode == 1
    assert proc.stderr == (
        "Error: The token may not write to test-org/Y (403 Forbidden). Use a token with write access "
        "to its organization, or --create-pr to propose the change.\n"
    )


def test_no_token_at_all(hub_env):
    proc = run([str(BIN / "mathbode-push"), str(COMMITTED_DIST), "--repo-id", "test-org/Z"], hub_env)
    assert proc.returncode == 1
    assert proc.stderr == (
        "Error: No Hugging Face token. Pass --token, set HF_TOKEN, or log in with `hf auth login` "
        "(a token with write access is needed to publish).\n"
    )


def test_unreachable_endpoint(hub_env):
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


def test_an_invalid_release_is_refused_before_any_request(hub, hub_env, tmp_path):
    broken = tmp_path / "dist"
    shutil.copytree(COMMITTED_DIST, broken)
    (broken / "data/linear_solve.parquet").write_bytes(b"not parquet")
    seen = len(hub.requests)
    proc = run([str(BIN / "mathbode-push"), str(broken), "--repo-id", "test-org/V"], hub_env, HF_TOKEN=WRITE_TOKEN)
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        f"Error: {broken} is not a valid MathBode release; nothing was pushed.\n{broken}: INVALID dataset"
    )
    assert "data/linear_solve.parquet: found" in proc.stderr
    assert len(hub.requests) == seen


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
