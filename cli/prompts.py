"""`mathbode-prompts`: the rows a model must answer, as request lines (key fields + prompt)."""

from __future__ import annotations

import click

from mathbode.core.atomic import write_jsonl
from mathbode.schema.selection import iter_requests, select_rows

from .common import CONTEXT, exit_on_error, version_option
from .options import families_option, preset_option, reference_option, reference_rows


@click.command(context_settings=CONTEXT)
@version_option
@preset_option()
@families_option()
@reference_option()
@click.option("-o", "--output", default="requests.jsonl", show_default=True, help="Output file ('-' for stdout).")
@exit_on_error
def main(preset: str, families_spec: str, reference: str | None, output: str) -> None:
    """Write the prompts of a preset: one JSON line per row with its key fields and prompt.

    Answer each prompt, then add `response` (the model's raw text) to the line and score the file
    with mathbode-score.
    """
    ref = reference_rows(families_spec, reference)
    rows = select_rows(ref.table, preset, ref.universe)
    n = write_jsonl(output, iter_requests(rows))
    if output != "-":
        click.echo(f"Wrote {n:,} requests ({preset.upper()}) to {output}", err=True)
