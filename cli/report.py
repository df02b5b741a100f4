"""`mathbode report`: render report folders again from their saved results documents alone."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import click

from mathbode.evaluator.presentation.background import BackgroundPlotter
from mathbode.evaluator.presentation.report import render_report, saved_results

from .common import CONTEXT, exit_on_error, version_option


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@exit_on_error
def main(results_dirs: tuple[Path, ...]) -> None:
    """Write each report folder again (report.md, the CSVs, scores.json, the figures) from its
    results documents (results.json), without the submissions or the reference: the same bytes
    `mathbode score` wrote. A results document of another version is refused with what to do."""
    found = [(folder, *saved_results(folder)) for folder in results_dirs]  # every folder checked first
    for folder, documents, tests in found:
        with BackgroundPlotter() if documents[0]["rendering"]["figures"] else nullcontext() as plotter:
            render_report(documents, tests, folder, plotter)
        click.echo(f"Report: {folder}/ ({len(documents)} submission{'s' if len(documents) > 1 else ''})", err=True)
