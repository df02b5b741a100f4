"""Publish a release folder to the Hugging Face Hub: plan, check, then one commit.

The plan (target, files, sizes, commit message) is made offline, so `--dry-run` can print it
without a single network connection. Pushing goes through `huggingface_hub.HfApi`: create the
dataset repository if it is missing, then commit every file at once. Hub and network failures
become `PublishError`s with a message that says what to do; the token never appears in one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mathbode.core.digests import file_sha256
from mathbode.core.errors import UsageError
from mathbode.schema.content import TruthRows
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.manifest import MANIFEST, Manifest, read_manifest
from mathbode.schema.release_paths import path_problem

from .errors import PublishError, hub_errors

REPO_TYPE = "dataset"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class UploadFile:
    path_in_repo: str
    local: Path
    size: int
    sha256: str

    @property
    def large(self) -> bool:
        """Data files go through the Hub's large-file storage."""
        return self.path_in_repo.endswith(".parquet") or self.size > 10_000_000


@dataclass(frozen=True)
class PushPlan:
    repo_id: str
    folder: Path
    files: tuple[UploadFile, ...]
    commit_message: str
    #: What to call the source in messages (a per-family plan is staged in a temporary folder).
    label: str = ""

    @property
    def families(self) -> list[str]:
        return list(read_manifest(self.folder).families)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def private_truth(self) -> bool:
        """The release is a private split with its ground truth: the answer key a leaderboard scores
        against, which must only ever live in a private repository."""
        return holds_private_truth(read_manifest(self.folder))


def holds_private_truth(manifest: Manifest) -> bool:
    """A private split (its manifest records a commitment to the seed, not the seed) whose rows
    carry `ground_truth` (not its prompts-only half)."""
    return bool(manifest.split and "seed_sha256" in manifest.split and not manifest.prompts_only)


def refuse_public_truth(plan: PushPlan, private: bool) -> None:
    """What can be said without a connection: a private split's truth never goes to a repository
    this push would create (or leave) public."""
    if plan.private_truth and not private:
        raise PublishError(
            f"{plan.label} is a private split with its ground truth (its manifest records a commitment to "
            f"the seed, not the seed, and its rows carry ground_truth): pushing it to {plan.repo_id} without "
            "--private would publish the answer key. Publish the split's prompts-only half "
            "(mathbode-build --seed SEED --private --prompts-only) to the public repository; keep this folder "
            "on your machine, or push it with --private to a separate repository that is private. Nothing was pushed."
        )


def refuse_public_target(plan: PushPlan, private: bool, existing_private: bool | None) -> None:
    """What needs the Hub's answer: `--private` to a repository that exists and is public.

    `create_repo(..., private=True, exist_ok=True)` leaves an existing repository's visibility as it
    is, so the push would land in public."""
    if private and existing_private is False:
        what = "the full private split (its ground truth)" if plan.private_truth else "files meant to be private"
        raise PublishError(
            f"--private: the dataset repository {plan.repo_id} exists and is public, and pushing does not change "
            f"a repository's visibility: {what} would be published. Make it private first (on the Hub: Settings, "
            f"Change repository visibility; or HfApi().update_repo_settings({plan.repo_id!r}, private=True, "
            "repo_type='dataset')), or push to a new repository id, created private. Nothing was pushed."
        )


def check_repo_id(repo_id: str) -> str:
    """`ORG/NAME` of a dataset repository; other repository kinds and malformed ids are refused."""
    rid = repo_id.strip()
    for prefix in ("https://huggingface.co/", "hf://"):
        if rid.startswith(prefix):
            rid = rid[len(prefix) :]
    kind = rid.split("/", 1)[0]
    if kind in ("spaces", "models") and rid.count("/") == 2:
        raise PublishError(
            f"--repo-id {repo_id}: that is a {kind[:-1]} repository; mathbode-push publishes dataset "
            "repositories. Give ORG/NAME of a dataset."
        )
    if kind == "datasets" and rid.count("/") == 2:
        rid = rid.split("/", 1)[1]
    if not _REPO_ID.match(rid):
        raise UsageError(f"--repo-id {repo_id}: expected ORG/NAME (letters, digits, '-', '_', '.').")
    return rid


def plan_release(
    folder: str | Path, repo_id: str, label: str | None = None, truth: TruthRows | None = None
) -> PushPlan:
    """What pushing `folder` would do; refuses a folder that fails validation (with `truth`: every row checked).

    Only regular files inside the release folder are ever uploaded, whatever the manifest says.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder. Give a release folder built by mathbode-build (like dist/).")
    repo_id = check_repo_id(repo_id)
    report = validate_dataset(folder, truth)
    if not report.valid:
        raise PublishError(f"{folder} is not a valid MathBode release; nothing was pushed.\n{report.format_text()}")
    manifest = read_manifest(folder)
    paths = [*manifest.files, MANIFEST]
    for rel in paths:
        problem = path_problem(folder, rel)
        if problem or not (folder / rel).is_file():
            raise PublishError(f"{folder}: refusing to upload {rel!r}: {problem or 'not a regular file'}.")
    files = tuple(
        UploadFile(rel, folder / rel, (folder / rel).stat().st_size, file_sha256(folder / rel)) for rel in paths
    )
    message = (
        f"MathBode builder {manifest.builder_version}: {manifest.num_rows:,} rows, content {manifest.content_hash}"
    )
    return PushPlan(repo_id, folder, files, message, label or str(folder))


def describe(plan: PushPlan, endpoint: str, revision: str | None, create_pr: bool, private: bool) -> str:
    """The dry-run text: target, every file with its size, and what the commit would do."""
    branch = revision or "main"
    where = f"a pull request against {branch}" if create_pr else f"branch {branch}"
    lines = [
        f"Would publish {plan.label} to {endpoint}/datasets/{plan.repo_id} ({'private' if private else 'public'} "
        "dataset repository, created if missing)",
        f"as one commit on {where}: {plan.commit_message}",
        f"{len(plan.files)} files, {plan.total_bytes:,} bytes (each replaces the file of the same path on the Hub; "
        "files already identical there are skipped by the Hub client):",
    ]
    for f in plan.files:
        lines.append(
            f"  {f.path_in_repo:<40} {f.size:>12,} bytes  {'LFS' if f.large else 'git'}  sha256 {f.sha256[:12]}"
        )
    return "\n".join(lines)


def dry_run_visibility(plan: PushPlan, private: bool, token: str | None) -> str:
    """A private push's one check that needs the Hub, made by the dry run too (a read of the
    repository's visibility, nothing sent): refuses as the push would, or says what it found."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        with hub_errors(api.endpoint, plan.repo_id, token=token):
            existing = _visibility(api, plan.repo_id)
    except PublishError as err:
        return f"Could not read {plan.repo_id}'s visibility ({err}); the push checks it before committing."
    refuse_public_target(plan, private, existing)
    if existing is None:
        return f"{plan.repo_id} does not exist (or the token cannot see it): the push creates it private."
    return f"{plan.repo_id} exists and is private."


def resolve_token(token: str | None) -> str:
    """--token, else HF_TOKEN, else the saved login; refuses to go on without one."""
    from huggingface_hub import get_token

    found = token or os.environ.get("HF_TOKEN") or get_token()
    if not found:
        raise PublishError(
            "No Hugging Face token. Pass --token, set HF_TOKEN, or log in with `hf auth login` "
            "(a token with write access is needed to publish)."
        )
    return found


def _visibility(api, repo_id: str) -> bool | None:
    """True if the dataset repository exists and is private, False if it is public, None if missing.

    Only a JSON boolean is an answer: `bool()` of a proxy's `"false"`, `"no"` or `[false]` reads
    as private, and a private split's truth went into a public repository."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        private = api.repo_info(repo_id, repo_type=REPO_TYPE).private
    except RepositoryNotFoundError:
        return None
    if not isinstance(private, bool):
        # The client keeps the answer's value as it came (a string, a list, null), so it is shown as JSON.
        shown = json.dumps(private, default=repr)
        shown = shown if len(shown) <= 80 else shown[:80] + "..."
        raise PublishError(
            f"{repo_id}: the Hub answered the repository's visibility as {shown}, not true or false, so whether it "
            "is private is not known. Nothing was pushed. The Hub's API answers a JSON boolean: check HF_ENDPOINT "
            "and any proxy in between."
        )
    return private


def push(
    plan: PushPlan,
    token: str,
    revision: str | None = None,
    private: bool = False,
    create_pr: bool = False,
    say: Callable[[str], None] = print,
) -> str:
    """Create the repository if missing and commit every file of the plan; returns the commit URL."""
    from huggingface_hub import CommitOperationAdd, HfApi

    refuse_public_truth(plan, private)
    api = HfApi(token=token)
    with hub_errors(api.endpoint, plan.repo_id, token=token):
        existing = _visibility(api, plan.repo_id)
        refuse_public_target(plan, private, existing)
        url = api.create_repo(plan.repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        if private and _visibility(api, plan.repo_id) is not True:
            # Read back, not assumed: a Hub that ignored the request must not receive the files.
            raise PublishError(
                f"{plan.repo_id}: asked to be private, but the Hub reports it is not; nothing was pushed. "
                "Check its visibility on the Hub before pushing again."
            )
        say(f"Repository: {url}")
        say(f"Uploading {len(plan.files)} files ({plan.total_bytes:,} bytes) in one commit...")
        operations = [CommitOperationAdd(f.path_in_repo, str(f.local)) for f in plan.files]
        try:
            info = api.create_commit(
                plan.repo_id,
                operations,
                commit_message=plan.commit_message,
                repo_type=REPO_TYPE,
                revision=revision,
                create_pr=create_pr,
            )
        except RuntimeError as err:
            raise _upload_failed(err, plan.repo_id, created=existing is None) from None
    return info.pr_url or info.commit_url


_UPLOADING = re.compile(r"Error while uploading '(.+)' to the Hub\.")


def _upload_failed(err: RuntimeError, repo_id: str, created: bool) -> Exception:
    """The client's `RuntimeError` for a large file whose upload failed (after its own retries),
    as what it means: the files go to large-file storage before the one commit that names them, so
    a failed upload leaves the repository without a commit of ours. Any other RuntimeError is not ours to explain."""
    from huggingface_hub.errors import HfHubHTTPError

    named = _UPLOADING.fullmatch(str(err))
    if named is None:
        return err
    cause = err.__cause__
    if isinstance(cause, HfHubHTTPError) and cause.response is not None:
        why = f"HTTP {cause.response.status_code}"
    else:
        why = type(cause).__name__ if cause is not None else "no reason given"
    state = (
        f"{repo_id} holds none of this release's files (it was created empty, as the push's first step)"
        if created
        else f"{repo_id} is as it was"
    )
    return PublishError(
        f"uploading {named.group(1)} to the Hub's large-file storage failed ({why}), so nothing was committed: "
        f"{state}. Push again: files the Hub already holds are not sent twice. If it fails again, check the "
        "network connection and the Hub's status."
    )
