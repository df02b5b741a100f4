"""`mathbode-run`: ask a model behind any OpenAI-compatible endpoint, write a submission, optionally score it."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mathbode.core.atomic import check_replaceable, real_path
from mathbode.core.errors import MathBodeError, UsageError
from mathbode.runner.config import DEFAULT_HISTORY, PROTOCOLS, SEQUENTIAL, STATELESS, RunConfig, history_window
from mathbode.runner.cost import estimate, load_counter
from mathbode.runner.progress import Progress
from mathbode.runner.protocols import distinct_prompts
from mathbode.runner.run_in import DEFAULT_RUN_IN, MAX_RUN_IN, run_in_path
from mathbode.schema.keys import format_key
from mathbode.schema.selection import select_rows

from .common import CONTEXT, exit_on_error, version_option
from .options import (
    families_option,
    preset_option,
    reference_option,
    reference_rows,
    request_options,
    system_prompt_text,
    tokenizer_option,
)


class RunIncomplete(MathBodeError):
    """Some rows failed after every retry; the submission is partial."""


def _history(protocol: str, value: str | None) -> int | None:
    """--history: N (1 or more) or 'all' (None), sequential only."""
    if value is None:
        return DEFAULT_HISTORY if protocol == SEQUENTIAL else None
    if protocol != SEQUENTIAL:
        raise UsageError("--history goes with --protocol sequential.")
    try:
        return history_window(value)
    except ValueError:
        raise UsageError(f"--history {value}: a number of exchanges (1 or more) or 'all'.") from None


def _run_in(protocol: str, value: int | None) -> int:
    """--run-in: K steps (sequential only), DEFAULT_RUN_IN when not given."""
    if value is None:
        return DEFAULT_RUN_IN if protocol == SEQUENTIAL else 0
    if protocol != SEQUENTIAL:
        raise UsageError("--run-in goes with --protocol sequential: a stateless request has no earlier steps.")
    return value


@click.command(context_settings=CONTEXT)
@version_option
@click.option("--model", required=True, help="Model name as the server knows it.")
@click.option(
    "--base-url",
    default=None,
    help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL, else OpenAI's).",
)
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable holding the API key (may be unset for local servers). The key is never printed.",
)
@preset_option()
@families_option()
@reference_option()
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("predictions.jsonl"), show_default=True)
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Requests in flight.")
@click.option("--requests-per-minute", type=click.FloatRange(min=0, min_open=True), default=None, help="Rate cap.")
@click.option("--max-retries", type=click.IntRange(min=0), default=6, show_default=True)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=120.0, show_default=True, help="Seconds."
)
@request_options
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default=STATELESS,
    show_default=True,
    help="stateless: every row its own request (the paper's). sequential: each sweep one conversation in time "
    "order, the model's earlier answers in its context (where a model can lag).",
)
@click.option(
    "--history",
    default=None,
    metavar="N|all",
    help="Sequential only: the earlier exchanges kept in the conversation, a number or 'all' (default 8).",
)
@click.option(
    "--run-in",
    "run_in",
    type=click.IntRange(min=0, max=MAX_RUN_IN),
    default=None,
    metavar="K",
    help=f"Sequential only: steps asked before each sweep's step 0 and never scored, so the scored steps start in "
    f"steady state (a sinusoid's last K steps; a step's initial level; a chirp's 1-cycle continuation). "
    f"Default {DEFAULT_RUN_IN}; 0 starts cold.",
)
@click.option(
    "--dedupe",
    is_flag=True,
    help="Stateless: ask each distinct prompt once and write its answer to every row that has it (MVP: 85 requests "
    "for 1,920 rows). Repeats are how nondeterminism shows, so repeatability is then not measured.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Answer at most N of the remaining rows.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Say what the run would ask (requests, distinct prompts, prompt and completion tokens) and stop: no "
    "request is sent, nothing is written.",
)
@tokenizer_option()
@click.option("--overwrite", is_flag=True, help="Start again even if the output holds answers of another run.")
@click.option("--score", "then_score", is_flag=True, help="Score the submission at the end (like mathbode-score).")
@click.option(
    "--report",
    type=click.Path(path_type=Path),
    default=None,
    help="Report folder for --score (default: <output stem>-report).",
)
@exit_on_error
def main(
    model: str,
    base_url: str | None,
    api_key_env: str,
    preset: str,
    families_spec: str,
    reference: str | None,
    output: Path,
    concurrency: int,
    requests_per_minute: float | None,
    max_retries: int,
    timeout: float,
    temperature: float,
    max_tokens: int,
    seed: int | None,
    system_prompt: str | None,
    constrain_format: str | None,
    one_shot: bool,
    instruction_as_system: bool,
    protocol: str,
    history: str | None,
    run_in: int | None,
    dedupe: bool,
    limit: int | None,
    dry_run: bool,
    tokenizer: str | None,
    overwrite: bool,
    then_score: bool,
    report: Path | None,
) -> None:
    """Run a model over a preset's prompts and write a submission (one JSON line per row).

    Works with any server that speaks the OpenAI chat-completions protocol: hosted APIs, vLLM,
    SGLang, TGI, llama.cpp's server, Ollama, LM Studio. Answers are written as they arrive;
    re-running the same command resumes where it stopped. A run record beside the output
    (<output stem>.run.json) says how the submission was made.
    """
    config = RunConfig(
        model=model,
        # Recorded as used: the client would read the same variable.
        base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        system_prompt=system_prompt_text(system_prompt),
        constrain_format=constrain_format,
        one_shot=one_shot,
        instruction_as_system=instruction_as_system,
        protocol=protocol,
        history=_history(protocol, history),
        run_in=_run_in(protocol, run_in),
        dedupe=dedupe,
        api_key_env=api_key_env,
        concurrency=concurrency,
        requests_per_minute=requests_per_minute,
        max_retries=max_retries,
        timeout=timeout,
    ).validate()
    report_folder = report or output.with_name(output.stem + "-report")
    if then_score:  # refused before the run, not after it: the report folder is replaced whole
        if real_path(output, "-o").is_relative_to(real_path(report_folder, "--report")):
            raise UsageError(
                f"-o {output} is inside --report {report_folder}, which is replaced whole by the report; "
                "choose an output outside it."
            )
        check_replaceable(report_folder, "report", "--report")
    ref = reference_rows(families_spec, reference)
    config = dataclasses.replace(config, split=ref.split_hash or None)  # every line says which split it answered
    families = list(ref.family_hashes)
    rows = select_rows(ref.table, preset, ref.universe)
    context = {"preset": preset.upper(), "families": families, "reference": ref.provenance()}
    if dry_run:
        catalogue = ref.table.to_pylist() if config.run_in else None
        cost = estimate(rows[:limit] if limit else rows, config, load_counter(tokenizer), catalogue)
        click.echo(f"Dry run of {preset.upper()} ({', '.join(families)}) for {model}: nothing is asked or written.")
        for line in cost.lines():
            click.echo(line)
        return
    # The model client (openai, aiohttp: 0.4-0.5 s of imports) loads when a model is asked: not
    # for --help or a dry run.
    from mathbode.runner.run import record_path, run

    distinct, note = distinct_prompts(rows), ""
    if protocol == STATELESS and not dedupe and distinct < len(rows):
        note = (
            f"{len(rows):,} rows, {distinct:,} distinct prompts: --dedupe would ask {distinct:,} instead of "
            f"{len(rows):,} ({len(rows) / distinct:.1f}x fewer requests; repeats measure repeatability)."
        )
    result = run(
        rows,
        config,
        output,
        context,
        overwrite=overwrite,
        limit=limit,
        progress=lambda total, already: Progress(total, already, note=note),
        catalogue=ref.table.to_pylist() if config.run_in else None,
        universe=ref.universe,
    )
    say = lambda text: click.echo(text, err=True)  # noqa: E731
    if result.duplicates_dropped:
        say(f"Dropped {result.duplicates_dropped:,} repeated lines from {output} (the same row and answer twice).")
    if result.repaired_bytes:
        say(f"Repaired {output}: cut off a torn last line ({result.repaired_bytes} bytes); that row is asked again.")
    answered = result.answered
    share = f"{result.compliant / answered:.1%}" if answered else "n/a"
    say(
        f"{answered:,} answers in {result.seconds:.1f} s ({result.answers_per_second:.1f}/s), {share} compliant; "
        f"{result.skipped:,} already answered, {len(result.failed):,} failed. Output: {output} "
        f"(run record {record_path(output).name})."
    )
    if result.run_in_repaired_bytes:
        say(
            f"Repaired {run_in_path(output).name}: cut off a torn last line ({result.run_in_repaired_bytes} bytes); "
            "that run-in step is asked again."
        )
    if result.run_in_answered or result.run_in_replayed:
        total = result.run_in_replayed + result.run_in_answered
        replayed = ""
        if result.run_in_replayed:
            replayed = f", {result.run_in_replayed:,} replayed from earlier runs: {total:,}"
        say(
            f"{result.run_in_answered:,} run-in answers (asked before step 0, never scored){replayed} in "
            f"{run_in_path(output).name}."
        )
    say(_spent(result))
    resume = shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])
    if result.interrupted:
        say(f"Interrupted. Resume with:\n  {resume}")
        sys.exit(130)
    if result.failed:
        shown = "\n".join(f"  {format_key(k)}: {why}" for k, why in list(result.failed.items())[:5])
        raise RunIncomplete(
            f"{len(result.failed):,} rows failed after {max_retries} retries and were not written, e.g.\n{shown}\n"
            f"Re-run the same command to retry them:\n  {resume}"
        )
    if then_score:
        # The scorer and its report (0.2-0.5 s of imports) load only for --score: a plain run never uses them.
        from mathbode.evaluator.scorer.uncertainty import DEFAULT_RESAMPLES

        from .score import score_and_report

        score_and_report((output,), reference, report_folder, resamples=DEFAULT_RESAMPLES)
    remaining = result.rows - result.skipped - answered
    if remaining:
        say(f"{remaining:,} rows remain (--limit); re-run the same command to continue.")


if TYPE_CHECKING:  # the runner loads the HTTP client: imported where a run starts
    from mathbode.runner.run import RunResult


def _spent(result: RunResult) -> str:
    """What the server said the run spent (its reported usage), beside the dry run's estimate."""
    usage = result.usage_record()["usage"]
    if usage is None:
        return "Tokens: the server reported none with its answers (--dry-run estimates them)."
    this = result.usage.to_record()
    earlier = ""
    if result.usage_before.requests and this is not None:
        earlier = f"; this run {this['prompt_tokens']:,} prompt and {this['completion_tokens']:,} completion"
    missing = usage["requests_without_usage"]
    unreported = f"; {missing:,} answers came without a count" if missing else ""
    return (
        f"Tokens the server reported: {usage['prompt_tokens']:,} prompt and {usage['completion_tokens']:,} "
        f"completion over {usage['requests']:,} requests{earlier}{unreported} (run record `usage`)."
    )
