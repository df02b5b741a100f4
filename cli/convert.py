"""`mathbode convert`: inspect-ai logs or lm-evaluation-harness samples as a MathBode submission."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from mathbode.core.atomic import real_path, write_jsonl
from mathbode.core.errors import UsageError
from mathbode.integrations.convert import convert_logs
from mathbode.schema.submission import validate_submission

from .common import CONTEXT, exit_on_error, version_option
from .options import recorded_reference, reference_option


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="The submission to write.")
@click.option("--model", default=None, help="The model's name on every line (default: as the log names it).")
@click.option(
    "--epoch",
    default=1,
    show_default=True,
    type=int,
    help="inspect logs of several epochs: the epoch whose answers to keep (a submission answers each row once).",
)
@click.option("--overwrite", is_flag=True, help="Replace the output file if it exists.")
@reference_option()
@exit_on_error
def main(
    logs: tuple[Path, ...], output: Path, model: str | None, epoch: int, overwrite: bool, reference: str | None
) -> None:
    """Turn inspect-ai logs (.eval, .json) or lm-evaluation-harness samples_*.jsonl into a
    predictions file that `mathbode score` and `mathbode validate` take.

    A sample is a MathBode row when its metadata (inspect) or doc (lm-eval) carries the seven key
    fields; its raw completion becomes the line's response. The file is validated before it is
    written: an invalid result is refused (exit 1) and nothing is written. Logs of a task run on
    another release (`-T reference=DIR`) are read against the release the log records (its families
    and its split); `--reference` gives another place for it (a release of another split is refused).
    """
    if output.exists() and not overwrite:
        raise UsageError(f"-o {output}: exists. Give another name, or --overwrite to replace it.")
    if any(real_path(output, "-o") == real_path(log) for log in logs):
        raise UsageError(f"-o {output}: is one of the logs being converted; give another name.")
    converted = convert_logs(list(logs), epoch, model)
    for note in converted.notes:
        click.echo(note, err=True)
    # The logs' own release by default: their answers are to that release's questions.
    reference, ref = recorded_reference(reference, converted.reference, "the log" if len(logs) == 1 else "the logs")
    universe = ref.universe if ref else None
    # Checked as the scorer will read it, before the output is touched.
    with tempfile.TemporaryDirectory(prefix="mathbode-convert-") as folder:
        draft = Path(folder) / "predictions.jsonl"
        write_jsonl(draft, converted.lines)
        report = validate_submission(draft, universe)
    if not report.valid:
        click.echo(report.format_text().replace(str(draft), str(output)), err=True)
        click.echo(f"Error: the converted answers are not a valid submission; {output} was not written.", err=True)
        raise SystemExit(1)
    n = write_jsonl(output, converted.lines)
    against = f" --reference {reference}" if reference else ""
    click.echo(f"Wrote {n:,} rows to {output}. Score them: mathbode score {output}{against}", err=True)
