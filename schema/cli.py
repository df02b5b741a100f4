"""`mathbode-validate`: check release folders, data files and third-party submissions."""

from __future__ import annotations

import json
import sys

import click

from .errors import exit_on_error
from .validate import validate_path


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of the human summary.")
@click.option(
    "--max-examples",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Instances shown for each kind of problem.",
)
@exit_on_error
def main(paths: tuple[str, ...], as_json: bool, max_examples: int) -> None:
    """Validate MathBode release folders (like dist/), family data files, predictions .jsonl files,
    or releases published on the Hub (hub:ORG/NAME[@REVISION]).

    Exit status: 0 when every path is valid, 1 when any is invalid, 2 on a usage error.
    """
    reports = [validate_path(p) for p in paths]
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
