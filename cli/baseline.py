"""`mathbode-baseline`: the symbolic solver's answers, a submission that calibrates the instrument."""

from __future__ import annotations

import click

from mathbode.builder.oracle import baseline_lines
from mathbode.core.atomic import write_jsonl
from mathbode.schema.selection import select_rows

from .common import CONTEXT, exit_on_error, version_option
from .options import families_option, preset_option, reference_option, reference_rows


@click.command(context_settings=CONTEXT)
@version_option
@preset_option(default="FULL")
@families_option()
@reference_option()
@click.option("-o", "--output", default="baseline.jsonl", show_default=True, help="Output file ('-' for stdout).")
@exit_on_error
def main(preset: str, families_spec: str, reference: str | None, output: str) -> None:
    """Write the exact answers, truncated to six decimals in the answer format, as a submission."""
    rows = select_rows(reference_rows(families_spec, reference).table, preset)
    n = write_jsonl(output, baseline_lines(rows))
    if output != "-":
        click.echo(f"Wrote {n:,} baseline answers ({preset.upper()}) to {output}", err=True)
