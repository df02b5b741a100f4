"""A leaderboard keeper's secret stays secret: the full private split never lands in a public repository.

Against the Hub test double with the real `huggingface_hub` client, reading each repository's
visibility back: `mathbode push` refuses a private split's full release (its ground truth) to a
repository that is or would be created public, refuses `--private` to a repository that exists and
is public (a push never changes visibility), and its dry run refuses the same. A guessable private
seed is refused at build time; `mathbode validate` says a prompts-only release is prompts only and,
with the keeper's `--seed`, checks a private split's every row.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import resolve_families
from mathbode.builder.release import build_release
from mathbode.builder.splits import SplitPlan, seed_commitment
from mathbode.cli.build import main as build_cli
from mathbode.cli.push import main as push_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.schema.splits import MIN_PRIVATE_SEED_BITS, private_seed_problem, seed_bits

from .conftest import COMMITTED_DIST
from .fixtures.fake_hub import WRITE_TOKEN, FakeHub

SECRET = "5c0e9a7d1b3f4e2a8c6d0b9e7f1a3c5d"


@pytest.fixture(scope="module")
def hub():
    server = FakeHub().start()
    yield server
    server.stop()


@pytest.fixture
def local_hub(hub, monkeypatch, tmp_path):
    from .fixtures.fake_hub import point_hub_client_at

    point_hub_client_at(hub.endpoint, monkeypatch, tmp_path)
    return hub


@pytest.fixture(scope="module")
def halves(tmp_path_factory) -> dict[str, Path]:
    """A one-family private split: the keeper's full release and its prompts-only public half."""
    root = tmp_path_factory.mktemp("keeper")
    families = resolve_families("linear_solve")
    build_release(families, root / "keeper", split=SplitPlan(SECRET, private=True))
    build_release(families, root / "public", split=SplitPlan(SECRET, private=True, prompts_only=True))
    return {"keeper": root / "keeper", "public": root / "public"}


def push(*args: str):
    return CliRunner().invoke(push_cli, [*map(str, args)], env={"HF_TOKEN": WRITE_TOKEN})


def visibility(repo_id: str) -> bool:
    """Read back through the Hub client, as a user would check it."""
    from huggingface_hub import HfApi

    return bool(HfApi(token=WRITE_TOKEN).repo_info(repo_id, repo_type="dataset").private)


def pushed_truth(hub: FakeHub, repo_id: str) -> bool:
    """Whether any parquet file on the repository's main branch holds a ground_truth column."""
    repo = hub.repos.get(("dataset", repo_id))
    files = repo.resolve("main").files if repo is not None else {}
    return any(
        "ground_truth" in pq.read_schema(pa.BufferReader(blob.data)).names
        for path, blob in files.items()
        if path.endswith(".parquet")
    )


# -- the README's workflow, as it now runs -------------------------------------------------------
def test_the_keeper_workflow_publishes_prompts_and_keeps_the_truth_private(local_hub, halves):
    public = push(halves["public"], "--repo-id", "keeper-org/Split")
    assert public.exit_code == 0, public.output
    private = push(halves["keeper"], "--repo-id", "keeper-org/Split-keeper", "--private")
    assert private.exit_code == 0, private.output
    assert visibility("keeper-org/Split") is False and visibility("keeper-org/Split-keeper") is True
    public_files = local_hub.repos[("dataset", "keeper-org/Split")].resolve("main").files
    assert "data/linear_solve.parquet" in public_files
    assert not pushed_truth(local_hub, "keeper-org/Split")


# -- the leak of the old README: the full split pushed onto the public repository ----------------
def test_the_full_private_split_is_refused_to_a_public_repository_that_exists(local_hub, halves):
    assert push(halves["public"], "--repo-id", "keeper-org/Leak").exit_code == 0
    before = dict(local_hub.repos[("dataset", "keeper-org/Leak")].commits)
    for extra in ([], ["--private"], ["--private", "--dry-run"], ["--dry-run"]):
        result = push(halves["keeper"], "--repo-id", "keeper-org/Leak", *extra)
        assert result.exit_code == 1, (extra, result.output)
        assert "Nothing was pushed" in result.output and "Traceback" not in result.output
    assert local_hub.repos[("dataset", "keeper-org/Leak")].commits == before
    assert visibility("keeper-org/Leak") is False
    assert not pushed_truth(local_hub, "keeper-org/Leak")


def test_the_full_private_split_is_refused_to_a_repository_that_would_be_created_public(local_hub, halves):
    for extra in ([], ["--dry-run"]):
        result = push(halves["keeper"], "--repo-id", "keeper-org/New", *extra)
        assert result.exit_code == 1
        assert "is a private split with its ground truth" in result.output
        assert "without --private would publish the answer key" in result.output
        assert "--prompts-only" in result.output
    assert ("dataset", "keeper-org/New") not in local_hub.repos
    # The dry run and the push say the same words.
    said = {push(halves["keeper"], "--repo-id", "keeper-org/New", *extra).output for extra in ([], ["--dry-run"])}
    assert len(said) == 1


def test_private_to_a_public_repository_is_refused_and_says_what_to_do(local_hub):
    assert push(COMMITTED_DIST, "--repo-id", "keeper-org/Open").exit_code == 0
    result = push(COMMITTED_DIST, "--repo-id", "keeper-org/Open", "--private")
    assert result.exit_code == 1
    assert "keeper-org/Open exists and is public" in result.output
    assert "update_repo_settings" in result.output and "push to a new repository id" in result.output
    assert visibility("keeper-org/Open") is False
    # An existing private repository takes a --private push.
    assert push(COMMITTED_DIST, "--repo-id", "keeper-org/Closed", "--private").exit_code == 0
    assert push(COMMITTED_DIST, "--repo-id", "keeper-org/Closed", "--private").exit_code == 0
    assert visibility("keeper-org/Closed") is True


def test_a_private_dry_run_reads_the_visibility_and_sends_nothing(local_hub, halves):
    result = push(halves["keeper"], "--repo-id", "keeper-org/Dry", "--private", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "(private dataset repository, created if missing)" in result.output
    assert "keeper-org/Dry does not exist (or the token cannot see it): the push creates it private." in result.output
    assert result.output.endswith("Dry run: nothing was sent.\n")
    assert ("dataset", "keeper-org/Dry") not in local_hub.repos
    # The push and its dry run refuse a public target in the same words.
    assert push(COMMITTED_DIST, "--repo-id", "keeper-org/Seen").exit_code == 0
    said = [push(COMMITTED_DIST, "--repo-id", "keeper-org/Seen", "--private", *x) for x in ([], ["--dry-run"])]
    assert [r.exit_code for r in said] == [1, 1] and said[0].output == said[1].output


# -- a guessable seed --------------------------------------------------------------------------
def test_a_guessable_private_seed_is_refused(tmp_path):
    # What the issue showed: the manifest's commitment gives away --seed 42 to a loop over 0..999.
    commitment = seed_commitment("42")
    assert next(str(n) for n in range(1000) if seed_commitment(str(n)) == commitment) == "42"
    for weak in ("42", "2026-12", "0123456789abcdef0123456789abcdef", "a" * 64, "correct horse"):
        result = CliRunner().invoke(build_cli, ["--seed", weak, "--private", "--out", str(tmp_path / "x"), "-q"])
        assert result.exit_code == 2, weak
        assert "a private split's seed must be a secret nobody can guess" in result.output
        assert f"needed: {MIN_PRIVATE_SEED_BITS}" in result.output and "secrets.token_hex(16)" in result.output
        assert not (tmp_path / "x").exists()
    # A public label is fine for a public split: it is published anyway.
    assert private_seed_problem(SECRET) is None and seed_bits(SECRET) == 128.0
    assert seed_bits("ab" * 40) == seed_bits("ab") == 8.0  # a repeated unit is only as strong as the unit


# -- validate: prompts only, and the keeper's check ----------------------------------------------
def test_validate_says_a_prompts_only_release_is_prompts_only(halves):
    result = CliRunner().invoke(validate_cli, [str(halves["public"])])
    assert result.exit_code == 0
    first = result.output.splitlines()[0]
    assert first.startswith(f"{halves['public']}: valid dataset, prompts only (")
    assert "nothing is scored against it" in result.output
    as_json = json.loads(CliRunner().invoke(validate_cli, [str(halves["public"]), "--json"]).output)
    assert as_json["reports"][0]["summary"]["prompts_only"] is True
    keeper = CliRunner().invoke(validate_cli, [str(halves["keeper"])]).output
    assert "prompts only" not in keeper and "validate --seed SEED" in keeper


def test_validate_seed_checks_every_row_of_a_private_split(halves, tmp_path):
    good = CliRunner().invoke(validate_cli, [str(halves["keeper"]), "--seed", SECRET])
    assert good.exit_code == 0, good.output
    assert "content-unchecked" not in good.output
    wrong = CliRunner().invoke(validate_cli, [str(halves["keeper"]), "--seed", "f" * 31 + "0"])
    assert wrong.exit_code == 2 and "its sha256 does not match the commitment" in wrong.output
    # One changed truth in the keeper's rows (manifest hashes recomputed, so only the content check can see it).
    tampered = tmp_path / "tampered"
    shutil.copytree(halves["keeper"], tampered)
    data = tampered / "data" / "linear_solve.parquet"
    table = pq.read_table(data)
    truth = table.column("ground_truth").to_pylist()
    truth[5] += 1.0
    table = table.set_column(table.column_names.index("ground_truth"), "ground_truth", pa.array(truth))
    pq.write_table(table, data)
    bad = CliRunner().invoke(validate_cli, [str(tampered), "--seed", SECRET])
    assert bad.exit_code == 1
    assert "row 5" in bad.output and "ground_truth" in bad.output


# -- a visibility that is not a JSON boolean (issue 49, section 4) -------------------------------
#: What a Hub or proxy answered as `private`; `bool()` read each of the first three as private.
NOT_A_BOOLEAN = {"string false": "false", "string no": "no", "list": [False], "string true": "true", "null": None}


@pytest.mark.parametrize("answer", list(NOT_A_BOOLEAN.values()), ids=list(NOT_A_BOOLEAN))
def test_a_visibility_that_is_not_a_json_boolean_is_refused_and_nothing_is_pushed(local_hub, halves, answer):
    """The repository exists and is public; the Hub answers its visibility with something that is
    not true or false. Before: the keeper's truth was committed into the public repository."""
    repo_id = f"keeper-org/Proxy-{list(NOT_A_BOOLEAN.values()).index(answer)}"
    assert push(halves["public"], "--repo-id", repo_id).exit_code == 0
    local_hub.private_answers[repo_id] = answer
    before = dict(local_hub.repos[("dataset", repo_id)].commits)
    shown = json.dumps(answer)
    for extra in (["--private"], []):
        result = push(halves["keeper" if extra else "public"], "--repo-id", repo_id, *extra)
        assert result.exit_code == 1, result.output
        assert result.output == (
            f"Error: {repo_id}: the Hub answered the repository's visibility as {shown}, not true or false, so "
            "whether it is private is not known. Nothing was pushed. The Hub's API answers a JSON boolean: check "
            "HF_ENDPOINT and any proxy in between.\n"
        )
    assert local_hub.repos[("dataset", repo_id)].commits == before
    assert not pushed_truth(local_hub, repo_id)


@pytest.mark.parametrize("answer", ["true", 1, [True]], ids=["string true", "one", "list"])
def test_the_read_back_after_creating_takes_only_a_json_boolean(local_hub, halves, answer):
    """A Hub that creates the repository public whatever was asked, and answers its visibility as
    `"true"`: the read-back after creation accepted it, and the truth was committed in public."""
    repo_id = f"keeper-org/Ignored-{['true', 1, [True]].index(answer)}"
    local_hub.ignore_private_request.add(repo_id)
    local_hub.private_answers[repo_id] = answer
    result = push(halves["keeper"], "--repo-id", repo_id, "--private")
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"Error: {repo_id}: the Hub answered the repository's visibility as {json.dumps(answer)}, not true or false, "
        "so whether it is private is not known. Nothing was pushed. The Hub's API answers a JSON boolean: check "
        "HF_ENDPOINT and any proxy in between.\n"
    )
    assert local_hub.repos[("dataset", repo_id)].private is False
    assert list(local_hub.repos[("dataset", repo_id)].commits.values())[-1].message == "initial commit"
    assert not pushed_truth(local_hub, repo_id)
