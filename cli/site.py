"""`mathbode site`: a static leaderboard site from saved results (report folders of `mathbode score`)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from mathbode.evaluator.presentation.site import build_site

from .common import CONTEXT, exit_on_error, version_option


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=Path("mathbode-site"),
    show_default=True,
    help="Site folder (replaced atomically).",
)
@exit_on_error
def main(results_dirs: tuple[Path, ...], out: Path) -> None:
    """Build a static leaderboard site from report folders (`mathbode score --out RESULTS_DIR`), from
    their results documents alone. It works from file:// and any static host and fetches nothing:
    open OUT/index.html."""
    started = time.perf_counter()
    build_site(list(results_dirs), out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    pages = sum(1 for _ in out.rglob("*.html"))
    seconds = time.perf_counter() - started
    click.echo(f"Site: {out}/index.html ({pages} pages, {size / 1e6:.1f} MB, {seconds:.1f} s)", err=True)
