"""Drive a model over selected rows: concurrent requests, a resumable journal, progress and a run record.

Input: the rows to answer (dicts with the key fields and `prompt`, in canonical order), a
`RunConfig`, the output path. Output: the journal of submission lines, and beside it the run
record (`<output stem>.run.json`) saying how the submission was made.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from mathbode.core.atomic import atomic_text_file, real_path
from mathbode.core.errors import UsageError
from mathbode.core.version import __version__
from mathbode.schema.keys import RowKey, format_key, row_key
from mathbode.schema.parsing import parse_response
from mathbode.schema.selection import key_fields
from mathbode.schema.universe import Universe

from .client import RetriesExhausted, ask, make_client, preflight
from .config import RunConfig
from .journal import NO_USAGE, Journal, OutputLock, Usage
from .progress import Progress
from .protocols import Job, jobs
from .run_in import RunInJournal, RunInPlan, run_in_path

RECORD_SUFFIX = ".run.json"


class RunMismatchError(UsageError):
    """The output belongs to a run with other parameters."""


def record_path(output: Path) -> Path:
    """`predictions.jsonl` -> `predictions.run.json`."""
    return output.with_name(output.name.removesuffix(".jsonl") + RECORD_SUFFIX)


@dataclass
class RunResult:
    """What a run did; also the counts of its run record."""

    rows: int
    #: Rows the output already answered when this run started, and how many of those were compliant.
    skipped: int = 0
    skipped_compliant: int = 0
    answered: int = 0
    compliant: int = 0
    failed: dict[RowKey, str] = field(default_factory=dict)
    interrupted: bool = False
    seconds: float = 0.0
    repaired_bytes: int = 0
    #: Repeated lines (the same row and answer twice) that opening the output dropped.
    duplicates_dropped: int = 0
    #: Rows asked of the server in this run (with --dedupe, one per distinct prompt).
    asked: int = 0
    #: Sequential run-in steps answered in this run (never scored; in the run-in journal).
    run_in_answered: int = 0
    #: Run-in answers read back from the run-in journal on resume (replayed as conversation), and
    #: the bytes of a torn last line cut off it.
    run_in_replayed: int = 0
    run_in_repaired_bytes: int = 0
    #: Tokens the server reported: for the answers this run received, and for those the output
    #: and its run-in journal already held when it started (earlier runs of the same output).
    usage: Usage = field(default_factory=Usage)
    usage_before: Usage = field(default_factory=Usage)

    @property
    def answers_per_second(self) -> float:
        return self.answered / self.seconds if self.seconds > 0 else math.nan

    def counts(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "already_answered": self.skipped,
            "answered": self.answered,
            "compliant": self.compliant,
            "failed": len(self.failed),
            "asked": self.asked,
            "run_in_answered": self.run_in_answered,
            # The whole run-in journal: what was replayed from it and what this run added.
            "run_in_in_journal": self.run_in_replayed + self.run_in_answered,
            # The whole output file, this run and the ones it resumed.
            "in_output": self.skipped + self.answered,
            "compliant_in_output": self.skipped_compliant + self.compliant,
        }

    def usage_record(self) -> dict[str, Any]:
        """The run record's `usage`: the tokens the server reported for every answer the output and
        its run-in journal hold (this run's and the runs it resumed: an answer lost to a kill, or a
        torn line cut off, is not held and is counted when it is asked again), with this run's
        share; null, and `usage_note` saying why, when the server reported none."""
        total = (self.usage_before + self.usage).to_record()
        if total is None:
            return {"usage": None, "usage_note": NO_USAGE}
        return {"usage": {**total, "this_run": self.usage.to_record()}}


class _RateLimiter:
    """At most `per_minute` request starts per minute, evenly spaced."""

    def __init__(self, per_minute: float | None) -> None:
        self._interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self._interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)


def check_resumable(output: Path, config: RunConfig, overwrite: bool) -> bool:
    """True to continue the journal at `output` (a file name, checked by `run`), False to start it;
    refuses a journal of another run."""
    if overwrite or not output.exists() or output.stat().st_size == 0:
        return False
    record = record_path(output)
    if not record.is_file():
        raise RunMismatchError(
            f"-o {output}: the file exists but has no run record ({record.name}), so it was not written by "
            "mathbode-run and cannot be resumed. Use --overwrite to replace it, or another -o."
        )
    try:
        previous = json.loads(record.read_text("utf-8"))["parameters"]
    except (ValueError, KeyError, TypeError):
        raise RunMismatchError(f"{record}: not a run record. Use --overwrite to start again.") from None
    # A record from before a parameter existed ran with its default.
    before = {"run_in": 0}
    differ = [
        f"{name} {previous.get(name, before.get(name))!r} -> {value!r}"
        for name, value in config.answer_parameters().items()
        if previous.get(name, before.get(name)) != value
    ]
    if differ:
        raise RunMismatchError(
            f"-o {output} holds answers of a run with other parameters ({'; '.join(differ)}). "
            "Resume with the same parameters, use --overwrite to start again, or choose another -o."
        )
    return True


def _write_record(output: Path, config: RunConfig, context: dict[str, Any], result: RunResult, status: str) -> None:
    record = {
        "status": status,
        "package": "mathbode",
        "version": __version__,
        "parameters": config.to_record(),
        **context,
        "counts": result.counts(),
        **result.usage_record(),
        "failed_examples": [{"key": format_key(k), "reason": r} for k, r in list(result.failed.items())[:10]],
        "seconds": round(result.seconds, 3),
        "answers_per_second": None if math.isnan(result.answers_per_second) else round(result.answers_per_second, 3),
    }
    with atomic_text_file(record_path(output)) as stream:
        stream.write(json.dumps(record, indent=2, allow_nan=False) + "\n")  # strict JSON, as every file we write


def run(
    rows: list[dict[str, Any]],
    config: RunConfig,
    output: Path,
    context: dict[str, Any],
    overwrite: bool = False,
    limit: int | None = None,
    progress: Callable[[int, int], Progress] | None = None,
    catalogue: list[dict[str, Any]] | None = None,
    universe: Universe | None = None,
) -> RunResult:
    """Answer every row of `rows` not yet in the journal at `output`; `context` goes into the run
    record; `catalogue`, every row of the reference, holds the prompts of the sequential run-in
    (a chirp's comes from a sinusoid sweep a preset may not select; default `rows`); `universe`,
    the reference's families, what a resumed file's lines are validated against (default: the
    canonical five)."""
    config.validate()
    if output.is_dir() or output.name in ("", ".", ".."):
        raise UsageError(f"-o {output}: is a folder; give the name of the predictions file to write.")
    parent = real_path(output, "-o").parent  # a loop of links is a message, not a traceback
    if not parent.is_dir():
        raise UsageError(f"-o {output}: the folder {parent} does not exist.")
    if os.path.lexists(output) and not output.is_file():
        # A pipe would hang the journal's first write, a device be written to, and a link to
        # nothing would create its target wherever it points: only a regular file is a journal.
        raise UsageError(
            f"-o {output}: is not a regular file (a device, pipe or socket, or a link to nothing); "
            "give a file to write."
        )
    with OutputLock(output) as lock:
        return _run_locked(rows, config, output, context, overwrite, limit, progress, lock, catalogue or rows, universe)


def _run_locked(
    rows: list[dict[str, Any]],
    config: RunConfig,
    output: Path,
    context: dict[str, Any],
    overwrite: bool,
    limit: int | None,
    progress: Callable[[int, int], Progress] | None,
    lock: OutputLock,
    catalogue: list[dict[str, Any]],
    universe: Universe | None = None,
) -> RunResult:
    resume = check_resumable(output, config, overwrite)
    # The server first: a refused key or an unreachable server must not cost the existing output
    # or its run record (an --overwrite run cut a finished file to 0 lines before the key was checked).
    asyncio.run(_check_server(config))
    journal = Journal.open(output, fresh=not resume, universe=universe)
    lock.hold_output()  # the file now exists (or was rewritten): lock it under every name it has
    plan = RunInPlan.of(catalogue, config.run_in) if config.run_in else None
    run_ins = None
    if plan is not None:
        run_ins = RunInJournal.open(run_in_path(output), fresh=not resume, length=config.run_in, plan=plan)
    pending = [row for row in rows if row_key(row) not in journal.answered]
    todo = pending[:limit] if limit is not None else pending
    try:
        work = jobs(todo, rows, journal, config, plan, run_ins)
    except BaseException:
        journal.close()  # refused (a sweep that cannot be replayed): nothing more is written
        if run_ins is not None:
            run_ins.close()
        raise
    result = RunResult(
        rows=len(rows),
        skipped=len(rows) - len(pending),
        skipped_compliant=journal.compliant,
        repaired_bytes=journal.repaired_bytes,
        duplicates_dropped=journal.duplicates_dropped,
        run_in_replayed=run_ins.answered_count if run_ins is not None else 0,
        run_in_repaired_bytes=run_ins.repaired_bytes if run_ins is not None else 0,
        usage_before=journal.usage + (run_ins.usage if run_ins is not None else Usage()),
    )
    started = _now()
    first = _first_start(output) if resume else None
    context = {**context, "output": output.name, "first_started_at": first or started, "started_at": started}
    context["resumed"] = resume
    if run_ins is not None:
        context["run_in_journal"] = run_ins.path.name
    _write_record(output, config, context, result, "running")
    bar = progress(len(todo), result.skipped) if progress else None
    start = time.perf_counter()

    def checkpoint() -> None:  # the record's counts follow the run while it goes
        result.seconds = time.perf_counter() - start
        _write_record(output, config, context, result, "running")

    status = "stopped"  # by an error, unless the run ends or is interrupted
    try:
        asyncio.run(_drive(work, config, journal, result, bar, checkpoint, run_ins))
        status = "finished"
    except KeyboardInterrupt:
        result.interrupted, status = True, "interrupted"
    finally:
        result.seconds = time.perf_counter() - start
        journal.close()
        if run_ins is not None:
            run_ins.close()
        if bar is not None:
            bar.close()
        _write_record(output, config, {**context, "finished_at": _now()}, result, status)
    return result


class _on_interrupt:
    """Ctrl-C stops the run: no new row is asked, the requests in flight are cancelled.

    The loop's own SIGINT handler, beside asyncio.run's (which cancels the main task once): a
    cancellation that a client library swallows would let the run go on, and this handler also
    stops the workers taking new rows. A process started with SIGINT ignored keeps ignoring it;
    where the loop cannot take signals (not the main thread, not Unix), asyncio.run's stays.
    """

    def __init__(self, stopping: asyncio.Event, workers: list[asyncio.Task[None]]) -> None:
        self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started to ignore Ctrl-C (a background job)
            self.loop = None
            return
        try:
            self.loop.add_signal_handler(signal.SIGINT, self._stop, stopping, workers)
        except (NotImplementedError, RuntimeError, ValueError):
            self.loop = None

    @staticmethod
    def _stop(stopping: asyncio.Event, workers: list[asyncio.Task[None]]) -> None:
        stopping.set()
        for task in workers:
            task.cancel()

    def close(self) -> None:
        if self.loop is not None:
            self.loop.remove_signal_handler(signal.SIGINT)
            self.loop = None


def _first_start(output: Path) -> str | None:
    """When the run this output belongs to first started (its record's), or None."""
    try:
        record = json.loads(record_path(output).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    first = (record.get("first_started_at") or record.get("started_at")) if isinstance(record, dict) else None
    return first if isinstance(first, str) else None


#: Seconds between rewrites of the run record while a run goes.
CHECKPOINT_SECONDS = 2.0


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


async def _check_server(config: RunConfig) -> None:
    client = make_client(config)
    try:
        await preflight(client, config)
    finally:
        await client.close()


async def _drive(
    jobs: list[Job],
    config: RunConfig,
    journal: Journal,
    result: RunResult,
    bar: Progress | None,
    checkpoint: Callable[[], None] = lambda: None,
    run_ins: RunInJournal | None = None,
) -> None:
    n_workers = min(config.concurrency, max(1, len(jobs)))
    client = make_client(config)
    try:
        limiter = _RateLimiter(config.requests_per_minute)
        conditions = config.conditions()
        queue: asyncio.Queue[Job] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)

        stopping = asyncio.Event()
        last_checkpoint = time.monotonic()

        def row_done() -> None:
            nonlocal last_checkpoint
            if time.monotonic() - last_checkpoint >= CHECKPOINT_SECONDS:
                last_checkpoint = time.monotonic()
                checkpoint()

        def parse_ok(text: str) -> bool:
            return not math.isnan(parse_response(text))

        def write(row: dict[str, Any], text: str, meta: dict[str, Any], compliant: bool) -> None:
            journal.append({**key_fields(row), "response": text, "model": config.model, "meta": meta})
            result.answered += 1
            result.compliant += compliant
            if bar is not None:
                bar.update(failed=False, compliant=compliant)
            row_done()

        async def run_in(job: Job) -> bool:
            """Ask the job's remaining run-in steps into its conversation; False if one failed."""
            for row in job.run_in:
                if stopping.is_set():
                    return False
                await limiter.wait()
                result.asked += 1
                try:
                    answer = await ask(client, config, row["prompt"], job.history)
                except RetriesExhausted as err:
                    first = job.rows[0]
                    result.failed[row_key(first)] = f"run-in: {err.reason} (after {err.attempts} attempts)"
                    if bar is not None:
                        bar.update(failed=True, compliant=False)
                    return False
                assert run_ins is not None and job.sweep is not None and job.history is not None
                result.usage.add(answer.prompt_tokens, answer.completion_tokens)
                run_ins.append(job.sweep, row, answer.text, {**answer.meta(), **conditions})
                result.run_in_answered += 1
                job.history.append((row["prompt"], answer.text))
                row_done()
            return True

        async def worker() -> None:
            while not stopping.is_set():
                try:
                    job = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                if job.known is not None:  # --dedupe on resume: this prompt's answer is in the output
                    for row in [*job.rows, *job.shared]:
                        write(row, job.known, {**conditions, "shared": True}, parse_ok(job.known))
                    continue
                if not await run_in(job):
                    continue  # a run-in step failed: the sweep waits for a resume
                for row in job.rows:
                    if stopping.is_set():
                        return
                    await limiter.wait()
                    result.asked += 1
                    try:
                        answer = await ask(client, config, row["prompt"], job.history)
                    except RetriesExhausted as err:
                        result.failed[row_key(row)] = f"{err.reason} (after {err.attempts} attempts)"
                        if bar is not None:
                            bar.update(failed=True, compliant=False)
                        row_done()
                        break  # a conversation cannot go on without this step: a resume continues it
                    result.usage.add(answer.prompt_tokens, answer.completion_tokens)
                    compliant = parse_ok(answer.text)
                    meta = {**answer.meta(), **conditions}
                    write(row, answer.text, {**meta, "shared": False} if config.dedupe else meta, compliant)
                    for other in job.shared:  # the same prompt: the same answer, not asked again
                        write(other, answer.text, {**conditions, "shared": True}, compliant)
                    if job.history is not None:
                        job.history.append((row["prompt"], answer.text))

        workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
        interrupt = _on_interrupt(stopping, workers)
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            if stopping.is_set():
                raise KeyboardInterrupt from None
            raise
        finally:
            interrupt.close()
        if stopping.is_set():
            raise KeyboardInterrupt
    finally:
        await client.close()
