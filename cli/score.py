"""`mathbode-score`: validate prediction files, measure them, print the table, write the report folder."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import click
import numpy as np

from mathbode.core.atomic import check_replaceable
from mathbode.core.digests import file_sha256
from mathbode.core.errors import MathBodeError, ReferenceMismatchError, UsageError
from mathbode.core.names import printable
from mathbode.evaluator.presentation.background import BackgroundPlotter
from mathbode.evaluator.presentation.console import table_text
from mathbode.evaluator.presentation.files import DEFAULT_DPI, DEFAULT_FIGURES, FIGURE_FORMATS, FigureOptions
from mathbode.evaluator.presentation.report import documents_of, render_report
from mathbode.evaluator.results import Results, json_safe
from mathbode.evaluator.scorer.aggregate import PAPER_CONFIG, ScoreConfig
from mathbode.evaluator.scorer.compare import neighbour_tests
from mathbode.evaluator.scorer.scoring import score
from mathbode.evaluator.scorer.uncertainty import DEFAULT_RESAMPLES
from mathbode.hub.reference import resolve_reference
from mathbode.schema.parsing import PARSERS, STRICT, Parser
from mathbode.schema.reference import Reference
from mathbode.schema.release_hashes import RELEASE_PROMPTS_HASH
from mathbode.schema.splits import split_mismatch
from mathbode.schema.submission import read_submission

from .common import CONTEXT, exit_on_error, version_option
from .options import preset_option, reference_option


class InvalidSubmission(MathBodeError):
    exit_code = 1


def _labels(paths: list[Path], models: list[str | None]) -> list[str]:
    """Model names when they tell the files apart, else file stems; made unique."""
    given = [m for m in models if m]
    names = given if len(given) == len(models) and len(set(given)) == len(given) else [p.stem for p in paths]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("predictions", nargs=-1, required=True, type=click.Path(path_type=Path))
@reference_option()
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("mathbode-report"),
    show_default=True,
    help="Report folder (replaced atomically).",
)
@preset_option(default=None, help_text="Score only this preset's sweeps (default: every sinusoid sweep answered).")
@click.option("--no-plots", is_flag=True, help="Draw no figures.")
@click.option(
    "--figure-format",
    type=click.Choice(FIGURE_FORMATS),
    default="png",
    show_default=True,
    help="File format of the figures (svg and pdf are vector graphics, for papers).",
)
@click.option(
    "--dpi",
    type=click.IntRange(min=30, max=1200),
    default=DEFAULT_DPI,
    show_default=True,
    help="Resolution of PNG figures (dots per inch; 300 for print).",
)
@click.option(
    "--gain-scale",
    type=click.FloatRange(min=0, min_open=True),
    default=0.25,
    show_default=True,
    help="|gain-1| that zeroes the gain part of MB-Core.",
)
@click.option(
    "--phase-scale",
    type=click.FloatRange(min=0, min_open=True),
    default=45.0,
    show_default=True,
    help="|phase error| (deg) that zeroes the phase part.",
)
@click.option("--gain-weight", type=click.FloatRange(min=0), default=0.5, show_default=True)
@click.option("--phase-weight", type=click.FloatRange(min=0), default=0.5, show_default=True)
@click.option(
    "--parser",
    "parser_name",
    type=click.Choice(list(PARSERS)),
    default=STRICT.name,
    show_default=True,
    help="Answer rules for raw responses: strict = the paper's appendix C; mathbode-eval = the paper "
    "authors' evaluation code, to reproduce its published numbers (docs/scoring.md, 'Strict parsing').",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="0 turns off the 95 % intervals and the paired tests between submissions; any other number turns them "
    "on (the name is historical: the intervals are computed from the sweeps' spread, not resampled).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="A submission's name in the table, the report and the site: one --label per file, in the files' order "
    "(default: the model each file names, or its file name when model names are missing or collide).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON instead of the table.")
@exit_on_error
def main(
    predictions: tuple[Path, ...],
    reference: str | None,
    out: Path,
    preset: str | None,
    no_plots: bool,
    figure_format: str,
    dpi: int,
    gain_scale: float,
    phase_scale: float,
    gain_weight: float,
    phase_weight: float,
    parser_name: str,
    bootstrap: int,
    labels: tuple[str, ...],
    as_json: bool,
) -> None:
    """Score prediction files against the canonical MathBode split, or against the release given
    as --reference (a release of any families: its scores are labelled with its name and content
    hash and ranked apart from the canonical release's).

    A file is JSON Lines (one prediction per row key, plain or gzipped, e.g. predictions.jsonl.gz)
    or a parquet keyed by row_id as the paper authors' code writes it (y_hat, prediction, raw_text
    or response). Each file is validated first; an invalid file is refused with the validator's
    messages.
    """
    config = ScoreConfig(
        gain_scale=gain_scale, phase_scale_deg=phase_scale, gain_weight=gain_weight, phase_weight=phase_weight
    ).validate()
    score_and_report(
        predictions,
        reference,
        out,
        preset,
        config,
        plots=not no_plots,
        as_json=as_json,
        parser=PARSERS[parser_name],
        resamples=bootstrap,
        figures=FigureOptions(figure_format, dpi),
        labels=given_labels(labels, predictions),
    )


def given_labels(labels: tuple[str, ...], predictions: tuple[Path, ...]) -> list[str] | None:
    """`--label`s, one per file, each named once (None: none given, the default names apply)."""
    if not labels:
        return None
    if len(labels) != len(predictions):
        raise UsageError(
            f"--label given {len(labels)} time(s) for {len(predictions)} file(s): give one --label per file, in the "
            "files' order, or none."
        )
    for label, path in zip(labels, predictions, strict=True):
        if not label.strip():
            raise UsageError(f"--label for {path} is empty: give the name to show for it.")
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise UsageError(f"--label {twice[0]!r} is given to two files; each submission needs a name of its own.")
    return list(labels)


def score_and_report(
    predictions: tuple[Path, ...],
    reference: str | None,
    out: Path,
    preset: str | None = None,
    config: ScoreConfig = PAPER_CONFIG,
    plots: bool = True,
    as_json: bool = False,
    parser: Parser = STRICT,
    resamples: int = 0,
    figures: FigureOptions = DEFAULT_FIGURES,
    labels: list[str] | None = None,
) -> list[Results]:
    """Validate and score the files, write the report folder, print the table (or JSON)."""
    check_replaceable(out, "report")  # fail before the work, not after
    with BackgroundPlotter() if plots else nullcontext() as plotter:
        results = _score_files(predictions, reference, preset, config, parser, resamples, labels)
        tests = neighbour_tests(results, config) if len(results) > 1 and resamples > 0 else []
        documents = documents_of(results, plots, figures)
        # Scoring computed; from here every presentation renders the documents alone.
        shown = render_report(documents, tests, out, plotter)
    if as_json:
        document: object = [d["scores"] for d in documents]
        if tests:
            document = {"submissions": document, "comparisons": json_safe(tests)}
        click.echo(json.dumps(document, indent=2, allow_nan=False))
    else:
        click.echo(printable(table_text(shown, tests)))  # a name's escape sequences shown, not run
        click.echo(f"\nReport: {out}/", err=True)
    return results


def _sha256(path: Path) -> str:
    """The scored file's sha256, for the report's provenance (a file that vanished meanwhile: said)."""
    try:
        return f"sha256:{file_sha256(path)}"
    except OSError as err:
        raise UsageError(f"{path}: cannot be read again to record its sha256 ({err.strerror}).") from None


def _score_files(
    predictions: tuple[Path, ...],
    reference: str | None,
    preset: str | None,
    config: ScoreConfig,
    parser: Parser = STRICT,
    resamples: int = 0,
    given: list[str] | None = None,
) -> list[Results]:
    """Validate every file (refusing an invalid one), then score each against the reference rows;
    each is named by `given` (`--label`), else by `_labels`."""
    # A release's families are what its submissions may name: it is read (and checked) first.
    release = resolve_reference(None, reference) if reference else None
    if release is not None and release.prompts_only:
        raise ReferenceMismatchError(
            f"--reference {reference} holds no ground truth (a prompts-only release: a private split's public "
            "half): score against the full split, which its keeper holds."
        )
    universe = release.universe if release else None
    submissions, digests = [], []
    for path in predictions:
        sub = read_submission(path, universe)
        if not sub.report.valid:
            raise InvalidSubmission(f"{path} cannot be scored: it fails validation.\n{sub.report.format_text()}")
        submissions.append(sub)
        digests.append(_sha256(path))
    # Row ids count each slot's rows on the universe's own grid (a multi-tone family has fewer rows).
    lay = submissions[0].universe.layout
    slots = submissions[0].universe.slots
    answered = {int(f) for s in submissions for f in np.flatnonzero(np.bincount(s.answers.row // lay.rows_per_family))}
    families = [f for n, f in enumerate(slots) if n in answered]
    ref = release.only(families) if release else resolve_reference(families, None)
    check_splits(submissions, ref, reference)
    labels = given or _labels(list(predictions), [s.model for s in submissions])
    results = []
    for path, s, label, digest in zip(predictions, submissions, labels, digests, strict=True):
        how = {k: v for k, v in s.conditions.items() if k != "split"}  # the split is provenance, checked above
        r = score(s.answers, ref, label, s.model, preset, config, how, parser, resamples)
        r.provenance["input"] = {"file": str(path), "sha256": digest, "split": s.conditions.get("split")}
        results.append(r)
    return results


def check_splits(submissions: list, ref: Reference, reference: str | None) -> None:
    """Refuse a submission recorded as answering another split than the reference's; warn of one
    that records none (written by hand: whether it answered this split cannot be known) when the
    reference is not the canonical release (whose rows a file of no split has always meant)."""
    where = reference or "(the canonical release)"
    for s in submissions:
        recorded = s.conditions.get("split")
        problem = split_mismatch(recorded, ref.split_hash, where, str(s.path)) if ref.split_hash else None
        if problem:
            raise ReferenceMismatchError(problem)
        if recorded is None and ref.split_hash != RELEASE_PROMPTS_HASH:
            click.echo(
                f"Warning: {s.path} does not say which split it answered (no meta.split; written by hand?). It is "
                f"scored against {ref.name} {ref.split_hash or ''}: answers to another split of the same grid "
                "would score as a bad model.".replace("  ", " "),
                err=True,
            )
