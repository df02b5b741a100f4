"""`mathbode-validate`: check release folders, data files and third-party submissions."""

from __future__ import annotations

import json
import re
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
        if recorded is None and any(p.code == "unknown-key" for p in sub.report.problems):
            recorded = _split_of_lines(Path(path))  # a line with an unknown key is not read for its conditions
        if split and recorded and recorded != split:
            _another_release(sub.report, Path(path), recorded, split, against)
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


#: A row key's signal type, as an unknown-key problem shows it.
_SIGNAL = re.compile(r"signal_type=(\w+)")


def _another_release(report: Report, path: Path, recorded: str, split: str, against: str) -> None:
    """One finding for a submission that answers another release than the one it is checked
    against, not an unknown key per line: its keys are that release's rows, so checking them
    needs that release (`--reference`)."""
    kinds = sorted({m[1] for p in report.problems if p.code == "unknown-key" for m in _SIGNAL.finditer(p.found)})
    unknown = report.drop("unknown-key")
    named = _recorded_release(path, recorded)
    where = f"the release {named}" if named else "another release"
    if not named and set(kinds) & {"multisine", "two_tone"}:
        where += " (a multi-tone one: its rows are multisine and two-tone sweeps)"
    keys = f"; {unknown:,} of its keys are not rows of {against}" if unknown else ""
    report.lead(
        "split",
        "file",
        "meta.split",
        f"the split of {against}, {split}",
        f"{recorded}: this submission answers {where}, not {against}{keys}. Give --reference DIR (that release's "
        "folder, or hub:ORG/NAME) to check it against the release it answered",
    )
    if unknown:  # coverage counted against the wrong release's rows says nothing
        report.summary["text"] = [f"coverage: not counted against {against} (the rows are another release's)"]


def _recorded_release(path: Path, recorded: str) -> str | None:
    """The release a run or batch record beside the submission names for its split, or None."""
    stem = path.name.removesuffix(".jsonl")
    for suffix in (".run.json", ".batch.json"):
        try:
            record = json.loads(path.with_name(stem + suffix).read_text("utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        reference = record.get("reference") if isinstance(record, dict) else None
        if isinstance(reference, dict) and reference.get("split") == recorded:
            release, source = reference.get("release"), reference.get("source")
            if isinstance(release, str) and isinstance(source, str):
                return f"{release} (--reference {source}, as its {suffix.lstrip('.')} record says)"
    return None


def _split_of_lines(path: Path, most: int = 1000) -> str | None:
    """The split the first of a submission's lines that records one names (`meta.split`), or None."""
    try:
        with path.open("rb") as stream:
            for _, raw in zip(range(most), stream, strict=False):
                try:
                    meta = json.loads(raw).get("meta")
                except (ValueError, AttributeError, RecursionError):
                    continue
                if isinstance(meta, dict) and isinstance(meta.get("split"), str):
                    return str(meta["split"])
    except OSError:
        return None
    return None
