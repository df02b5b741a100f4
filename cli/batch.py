"""`mathbode batch write` / `mathbode batch read`: a preset as a Batch API job (OpenAI's Batch
API, `vllm run-batch`), and its results as a submission."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

import click

from mathbode.core.atomic import atomic_text_file, real_path, write_jsonl
from mathbode.core.errors import UsageError
from mathbode.core.names import printable
from mathbode.core.version import __version__
from mathbode.runner import batch
from mathbode.runner.config import PROTOCOLS, STATELESS, RunConfig
from mathbode.runner.cost import estimate, load_counter
from mathbode.schema.selection import select_rows
from mathbode.schema.submission import validate_submission

from .common import CONTEXT, exit_on_error, version_option
from .options import (
    families_option,
    preset_option,
    recorded_reference,
    reference_option,
    reference_rows,
    request_options,
    system_prompt_text,
    tokenizer_option,
)


@click.group(context_settings=CONTEXT)
@version_option
def main() -> None:
    """Run a preset as a batch job: `write` the Batch API input files, answer them with OpenAI's
    Batch API or `vllm run-batch`, `read` the results into a submission.

    The stateless protocol only: a sequential conversation's requests depend on earlier answers.
    """


@main.command("write", context_settings=CONTEXT)
@click.option("--model", required=True, help="Model name as the batch's server knows it (one model a batch).")
@preset_option()
@families_option()
@reference_option()
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=Path("batch"),
    show_default=True,
    help="Folder for the input files (requests.jsonl, or requests-001.jsonl ... when split) and manifest.json.",
)
@request_options
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default=STATELESS,
    show_default=True,
    help="stateless only: sequential conversations cannot be batched (the command says why and what to do).",
)
@click.option("--dedupe", is_flag=True, help="One request per distinct prompt, its answer written to every row.")
@click.option(
    "--max-requests",
    type=click.IntRange(min=1),
    default=batch.MAX_REQUESTS,
    show_default=True,
    help="Requests per file (OpenAI's limit: 50,000).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=batch.MAX_BYTES,
    show_default=True,
    help="Bytes per file (OpenAI's limit: 200 MB).",
)
@tokenizer_option()
@click.option("--overwrite", is_flag=True, help="Replace a batch already in the folder.")
@exit_on_error
def write(
    model: str,
    preset: str,
    families_spec: str,
    reference: str | None,
    output: Path,
    temperature: float,
    max_tokens: int,
    seed: int | None,
    system_prompt: str | None,
    constrain_format: str | None,
    one_shot: bool,
    instruction_as_system: bool,
    protocol: str,
    dedupe: bool,
    max_requests: int,
    max_bytes: int,
    tokenizer: str | None,
    overwrite: bool,
) -> None:
    """Write the Batch API input files of a preset: one request per row (per distinct prompt with
    --dedupe), each body exactly what `mathbode run` sends with the same options."""
    if protocol != STATELESS:
        raise UsageError(batch.SEQUENTIAL_REFUSAL)
    config = RunConfig(
        model=model,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        system_prompt=system_prompt_text(system_prompt),
        constrain_format=constrain_format,
        one_shot=one_shot,
        instruction_as_system=instruction_as_system,
        dedupe=dedupe,
    ).validate()
    counter = load_counter(tokenizer)  # a tokenizer that cannot load is refused before anything is written
    ref = reference_rows(families_spec, reference)
    config = dataclasses.replace(config, split=ref.split_hash or None)  # every line says which split it answered
    rows = select_rows(ref.table, preset, ref.universe)
    context = {"preset": preset.upper(), "families": list(ref.family_hashes), "reference": ref.provenance()}
    cost = estimate(rows, config, counter)  # counted first: a tokenizer that fails on a prompt writes nothing
    written = batch.write(rows, config, output, context, overwrite, max_requests, max_bytes)
    for part in written.parts:
        click.echo(f"{output / part.name}: {part.requests:,} requests, {part.bytes:,} bytes")
    click.echo(f"{output / batch.MANIFEST}: {written.rows:,} rows of {preset.upper()}, {written.requests:,} requests")
    for line in cost.lines():
        click.echo(line)


@main.command("read", context_settings=CONTEXT)
@click.argument("batch_folder", type=click.Path(path_type=Path))
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="The submission to write.")
@click.option("--overwrite", is_flag=True, help="Replace the output file if it exists.")
@reference_option()
@exit_on_error
def read(batch_folder: Path, results: tuple[Path, ...], output: Path, overwrite: bool, reference: str | None) -> None:
    """Read a batch's results (its output file and error file, in any order) into a submission:
    every row of the batch, a failed or missing request as `prediction: null` with the reason in
    its meta. BATCH_FOLDER is the folder `mathbode batch write` wrote."""
    record_file = output.with_name(output.name.removesuffix(".jsonl") + ".batch.json")
    _check_outputs(output, record_file, batch_folder, results, overwrite)
    got = batch.read(batch_folder, list(results))
    # The batch's own release by default: its answers are to that release's questions.
    reference, ref = recorded_reference(reference, got.manifest.data.get("reference"), f"the batch {batch_folder}")
    universe = ref.universe if ref else None
    with tempfile.TemporaryDirectory(prefix="mathbode-batch-") as folder:
        draft = Path(folder) / "predictions.jsonl"
        write_jsonl(draft, got.lines)
        report = validate_submission(draft, universe)
    if not report.valid:
        click.echo(report.format_text().replace(str(draft), str(output)), err=True)
        click.echo(f"Error: the batch's answers are not a valid submission; {output} was not written.", err=True)
        raise SystemExit(1)
    write_jsonl(output, got.lines)
    counts = got.counts()
    record = {
        "source": "batch",
        "package": "mathbode",
        "version": __version__,
        "batch": str(got.manifest.path),
        "results": [str(p) for p in results],
        "parameters": got.manifest.data["parameters"],
        "conditions": got.manifest.config.conditions(),  # what every line's meta says
        **{k: got.manifest.data.get(k) for k in ("preset", "families", "reference")},
        "counts": counts,
        "failed_examples": [{"custom_id": c, "where": w, "reason": r} for c, (w, r) in list(got.failed.items())[:10]],
    }
    with atomic_text_file(record_file) as stream:
        stream.write(json.dumps(record, indent=2, allow_nan=False) + "\n")  # strict JSON, as every file we write
    say = lambda text: click.echo(text, err=True)  # noqa: E731
    say(
        f"Wrote {counts['rows']:,} rows to {output} (record {record_file.name}): {counts['requests']:,} requests, "
        f"{counts['answered']:,} answered, {counts['failed']:,} failed, {counts['missing']:,} without a result."
    )
    if warning := got.other_models_text():
        say(printable(warning))
    if got.failed:
        say(
            f"{counts['null_rows']:,} rows are prediction null (the reason in each line's meta.failed):\n"
            + "\n".join(got.failure_lines())
        )
    against = f" --reference {reference}" if reference else ""
    say(f"Score them: mathbode score {output}{against}")


def _check_outputs(output: Path, record: Path, folder: Path, results: tuple[Path, ...], overwrite: bool) -> None:
    """Before anything is read or written: the submission and its record (`P.batch.json` beside
    `-o P.jsonl`) replace nothing of the batch's (its manifest, its request files) nor a result
    file being read, whatever --overwrite says; and replace a file of the user's only with it."""
    manifest = folder / batch.MANIFEST if folder.is_dir() else folder
    theirs = {real_path(manifest): "the batch's manifest"}
    for part in manifest.parent.glob("requests*.jsonl"):
        theirs[real_path(part)] = "one of the batch's request files"
    theirs.update({real_path(path): "one of the result files being read" for path in results})
    for path, option in ((output, "-o"), (record, "-o (its record)")):
        what = theirs.get(real_path(path, "-o"))
        if what:
            raise UsageError(f"{option} {path}: is {what}; it would be overwritten. Give another -o.")
    if output.exists() and not overwrite:
        raise UsageError(f"-o {output}: exists. Give another name, or --overwrite to replace it.")
    if record.exists() and not overwrite:
        raise UsageError(
            f"-o {output}: its record {record} exists and would be replaced. Give another -o, or --overwrite to "
            "replace both."
        )
