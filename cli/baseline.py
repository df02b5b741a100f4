"""`mathbode-baseline`: the symbolic solver's answers, a submission that calibrates the instrument."""

from __future__ import annotations

import click

from mathbode.core.atomic import write_jsonl
from mathbode.schema.selection import select_rows

from .common import CONTEXT, exit_on_error, seed_text, version_option
from .options import families_option, preset_option, reference_option, reference_rows


@click.command(context_settings=CONTEXT)
@version_option
@preset_option(default="FULL")
@families_option()
@reference_option()
@click.option("-o", "--output", default="baseline.jsonl", show_default=True, help="Output file ('-' for stdout).")
@click.option(
    "--seed",
    default=None,
    callback=seed_text,
    help="A private split's seed (its keeper's): the split's questions are drawn from it.",
)
@exit_on_error
def main(preset: str, families_spec: str, reference: str | None, output: str, seed: str | None) -> None:
    """Write the exact answers, truncated to six decimals in the answer format, as a submission."""
    from mathbode.builder.oracle import baseline_lines, split_families  # sympy: not for --help

    ref = reference_rows(families_spec, reference)
    rows = select_rows(ref.table, preset, ref.universe)
    drawn = split_families(list(ref.family_hashes), ref.split, seed, ref.universe.questions)
    # Every line says the split it answers (the canonical release's too), as `mathbode run` does.
    n = write_jsonl(output, baseline_lines(rows, drawn, ref.split_hash or None))
    if output != "-":
        click.echo(f"Wrote {n:,} baseline answers ({preset.upper()}) to {output}", err=True)
