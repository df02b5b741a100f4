"""`mathbode-validate`: check release folders, data files and third-party submissions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mathbode.hub.fetch import fetch_release, is_hub_spec, snapshot_boundary
from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH
from mathbode.schema.report import Report
from mathbode.schema.submission import read_submission
from mathbode.schema.universe import Universe
from mathbode.schema.validate import detect_kind

from .common import CONTEXT, exit_on_error, seed_text, version_option


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of the human summary.")
@click.option(
    "--max-examples",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Instances shown for each kind of problem.",
)
@click.option(
    "--reference",
    default=None,
    help="The release (folder, or hub:ORG/NAME[@REV]) the predictions files are for: their families are "
    "checked against its families (default: the canonical five). Release folders are checked against "
    "their own manifest either way.",
)
@click.option(
    "--seed",
    default=None,
    callback=seed_text,
    help="A private split's seed (its keeper's): its rows are drawn again from it and every row compared, as "
    "for a published seed. Checked against the commitment the release's manifest records.",
)
@exit_on_error
def main(paths: tuple[str, ...], as_json: bool, max_examples: int, reference: str | None, seed: str | None) -> None:
    """Validate MathBode release folders (like dist/), family data files, predictions .jsonl files,
    or releases published on the Hub (hub:ORG/NAME[@REVISION]). A release may hold any families;
    one whose families this installation does not know is checked for layout and counts, and the
    report says its content could not be checked.

    Exit status: 0 when every path is valid, 1 when any is invalid, 2 on a usage error.
    """
    universe, split = _universe(reference)
    reports = [_validate(p, universe, split, reference or "the canonical release", seed) for p in paths]
    if as_json:
        click.echo(
            json.dumps(
                {"valid": all(r.valid for r in reports), "reports": [r.to_dict(max_examples) for r in reports]},
                indent=2,
            )
        )
    else:
        click.echo("\n".join(r.format_text(max_examples) for r in reports))
    sys.exit(0 if all(r.valid for r in reports) else 1)


def _universe(reference: str | None) -> tuple[Universe | None, str]:
    """The families submissions to `--reference` may name (None: the canonical five), and its split."""
    if not reference:
        return None, RELEASE_PROMPTS_HASH
    from mathbode.hub.reference import resolve_reference

    ref = resolve_reference(None, reference)
    return ref.universe, ref.split_hash


def _validate(
    path: str, universe: Universe | None = None, split: str = "", against: str = "", seed: str | None = None
) -> Report:
    """A local path, or `hub:ORG/NAME[@REV]`: a published release checked against its own manifest.

    A submission is checked without loading the release validator (its imports are a third of a
    submission's check); one recorded as answering another split than the reference's is invalid."""
    if not is_hub_spec(path) and detect_kind(Path(path)) == "submission":
        sub = read_submission(path, universe)
        recorded = sub.conditions.get("split")
        if split and recorded and recorded != split:
            sub.report.error("split", "file", "meta.split", f"the split of {against}, {split}", recorded)
        return sub.report
    from mathbode.schema.dataset import validate_dataset

    from .reference import BuilderTruth

    truth = BuilderTruth(seed)
    if not is_hub_spec(path):
        report = validate_dataset(Path(path), truth)
    else:
        folder = fetch_release(path)
        report = validate_dataset(folder, truth, snapshot_boundary(folder))
        report.path = path
    if seed is not None and report.kind == "dataset" and not report.summary.get("private_split"):
        report.warning("seed", path, "--seed", "a private split (its manifest records seed_sha256)", "--seed ignored")
    return report
