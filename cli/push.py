"""`mathbode-push`: publish a release folder to the Hugging Face Hub."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from .common import CONTEXT, exit_on_error, version_option
from .reference import builder_truth


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT.rstrip("/")


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("dist", type=click.Path(path_type=Path))
@click.option("--repo-id", required=True, help="Dataset repository ORG/NAME (created if missing).")
@click.option(
    "--private",
    is_flag=True,
    help="Create the repository as private; refused if it exists and is public (a push never changes a "
    "repository's visibility). Required for a private split's full release (its ground truth).",
)
@click.option("--revision", default=None, help="Branch to commit to (default: main).")
@click.option("--create-pr", is_flag=True, help="Open a pull request instead of committing to the branch.")
@click.option("--token", default=None, help="Hub token with write access (default: HF_TOKEN, then the saved login).")
@click.option(
    "--per-family-repos",
    "family_prefix",
    default=None,
    metavar="PREFIX",
    help="Also publish one repository per family, named PREFIX-<family>, each with its own card.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print what would be published and check what can be checked; send nothing (with --private, "
    "the one connection made reads the repository's visibility).",
)
@exit_on_error
def main(
    dist: Path,
    repo_id: str,
    private: bool,
    revision: str | None,
    create_pr: bool,
    token: str | None,
    family_prefix: str | None,
    dry_run: bool,
) -> None:
    """Validate the release in DIST and publish it to the Hub as one commit.

    Afterwards `datasets.load_dataset(REPO_ID, "<family>")["train"]` loads a family and
    `load_dataset(REPO_ID, "all")` everything.
    """
    # The builder (sympy) and the release checks (jsonschema): loaded to push, not for --help.
    from mathbode.builder.release import family_release
    from mathbode.hub import publish

    endpoint = _endpoint()
    plans = [publish.plan_release(dist, repo_id, truth=builder_truth)]
    with tempfile.TemporaryDirectory(prefix="mathbode-push-") as tmp:
        if family_prefix:
            publish.check_repo_id(f"{family_prefix}-x")
            for family in plans[0].families:
                family_repo = f"{family_prefix}-{family}"
                folder = family_release(dist, family, family_repo, plans[0].repo_id, Path(tmp) / family)
                label = f"{dist} ({family} only)"
                plans.append(publish.plan_release(folder, family_repo, label=label, truth=builder_truth))
        for plan in plans:  # the dry run refuses what the push would, before saying anything else
            publish.refuse_public_truth(plan, private)
        if dry_run:
            said = [publish.describe(p, endpoint, revision, create_pr, private) for p in plans]
            if private:  # the one read a dry run makes: whether --private can hold (nothing is sent)
                quiet_token = token or os.environ.get("HF_TOKEN") or None
                checks = [publish.dry_run_visibility(p, private, quiet_token) for p in plans]
                said = [f"{d}\n{c}" for d, c in zip(said, checks, strict=True)]
            click.echo("\n\n".join(said))
            click.echo("\nDry run: nothing was sent.")
            return
        secret = publish.resolve_token(token)
        for plan in plans:
            url = publish.push(plan, secret, revision, private, create_pr, say=lambda m: click.echo(m, err=True))
            click.echo(f"Published {plan.repo_id}: {url}")
