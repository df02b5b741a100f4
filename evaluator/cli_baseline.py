"""`mathbode-baseline`: the symbolic solver's answers, a submission that calibrates the instrument."""

from __future__ import annotations

import click

from mathbode.schema.errors import exit_on_error

from .baseline import baseline_lines
from .jsonl import write_jsonl
from .options import families_option, family_names, preset_option, reference_option
from .selection import reference_table, select_rows


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@preset_option(default="FULL")
@families_option()
@reference_option()
@click.option("-o", "--output", default="baseline.jsonl", show_default=True, help="Output file ('-' for stdout).")
@exit_on_error
def main(preset: str, families_spec: str, reference: str | None, output: str) -> None:
    """Write the exact answers, truncated to six decimals in the answer format, as a submission."""
    rows = select_rows(reference_table(family_names(families_spec), reference), preset)
    n = write_jsonl(output, baseline_lines(rows))
    if output != "-":
        click.echo(f"Wrote {n:,} baseline answers ({preset.upper()}) to {output}", err=True)
