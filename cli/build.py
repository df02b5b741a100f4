"""`mathbode-build`: write a release: the canonical MathBode, MathBode-Extended, or any families."""

from __future__ import annotations

import time

import click

from mathbode.cards.helper import CardHelper
from mathbode.core.errors import MathBodeError
from mathbode.schema.manifest import RELEASE_FORMATS

from .common import CONTEXT, exit_on_error, version_option


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--families",
    "families_spec",
    default="all",
    show_default=True,
    help="Families to build: all (the canonical release), extended (MathBode-Extended), installed (every "
    "plugin family), NAMESPACE.*, or names; comma-separated, in any mix.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=True, dir_okay=True),
    default="dist",
    show_default=True,
    help="Release folder to write (replaced atomically).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(RELEASE_FORMATS),
    default="parquet",
    show_default=True,
    help="File format of the data files.",
)
@click.option(
    "--replace", is_flag=True, help="Replace a release at --out even if it holds families this build leaves out."
)
@click.option(
    "--name",
    default=None,
    help="The release's name in its manifest and card (default: MathBode for canonical families, "
    "MathBode-Extended for built-in ones, else MathBode-Custom).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@exit_on_error
def main(families_spec: str, out: str, fmt: str, replace: bool, name: str | None, quiet: bool) -> None:
    """Build a MathBode release: prompts and exact ground truth for every family, signal and step.

    Every family that is not canonical passes its check first (see `mathbode family check`)."""
    start = time.perf_counter()
    # The card helper is forked before the builder (sympy) loads, so the two imports overlap.
    with CardHelper() as helper:
        from mathbode.builder.families import resolve_families
        from mathbode.builder.release import build_release, stderr_progress

        try:
            families = resolve_families(families_spec)
        except MathBodeError as err:
            raise click.BadParameter(str(err), param_hint="--families") from None
        progress = None if quiet else stderr_progress
        result = build_release(
            families, out, fmt, progress=progress, replace=replace, card_renderer=helper.render, name=name
        )
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if not quiet:
        m = result.manifest
        click.echo(
            f"Wrote {m.num_rows:,} rows of {len(m.families)} families to {result.out}/ "
            f"in {time.perf_counter() - start:.2f} s\nrelease {m.name}, content hash {m.content_hash}"
        )
