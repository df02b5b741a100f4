"""How rows become requests: the stateless protocol (the paper's) and the sequential one.

Stateless: every row is its own request; a model that never sees an earlier step is a memoryless
map from prompt to answer, so it cannot lag. Sequential: a sweep (sinusoid, chirp or step) is one
conversation in time order: step t is a user turn after the model's own answers to the earlier
steps (the last `--history` exchanges of them), so anchoring on an earlier answer shows as a real
low-pass. A sweep's steps are asked one after another; sweeps run side by side.

A sequential sweep may begin with a run-in (`run_in`): steps asked before step 0, their answers
kept in the conversation and in the run-in journal, never scored.

Resume: a sweep's answered steps (run-in first) are a prefix of it (a failed step stops its
sweep); the next run replays them, as recorded, as the conversation so far, so against a
deterministic server a resumed run asks exactly what an uninterrupted one asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mathbode.schema.keys import format_key, row_key

from .config import SEQUENTIAL, RunConfig
from .journal import Journal, JournalError
from .run_in import RunInJournal, RunInPlan


@dataclass
class Job:
    """Rows a worker asks in order: one row (stateless), or a sweep's remaining steps."""

    rows: list[dict[str, Any]]
    #: The conversation so far, as (prompt, answer) exchanges; None for a stateless request.
    history: list[tuple[str, str]] | None = None
    #: --dedupe: the other rows with the same prompt, written with the one answer.
    shared: list[dict[str, Any]] = field(default_factory=list)
    #: --dedupe on resume: the answer the output already holds for this prompt (nothing is asked).
    known: str | None = None
    #: Sequential: the run-in rows still to ask before `rows` (their answers are never scored).
    run_in: list[dict[str, Any]] = field(default_factory=list)
    #: Sequential: the sweep these rows belong to.
    sweep: tuple[Any, ...] | None = None


def _sweep(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row_key(row))[:-1]


def jobs(
    todo: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    journal: Journal,
    config: RunConfig,
    plan: RunInPlan | None = None,
    run_ins: RunInJournal | None = None,
) -> list[Job]:
    """The work of a run: `todo` (rows not yet answered, canonical order) as jobs; `rows` (every
    selected row) and the journal give a resumed sweep its recorded conversation; `plan` and
    `run_ins` its run-in (what to ask before step 0, what was answered of it)."""
    if config.dedupe:
        return _deduplicated(todo, rows, journal)
    if config.protocol != SEQUENTIAL:
        return [Job([row]) for row in todo]
    steps: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        steps.setdefault(_sweep(row), []).append(row)
    pending: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in todo:
        pending.setdefault(_sweep(row), []).append(row)
    for sweep, ordered in steps.items():
        _check_prefix(sorted(ordered, key=lambda r: r["time_step"]), journal, replayed=sweep in pending)
    out = []
    for sweep, remaining in pending.items():
        ordered = sorted(steps[sweep], key=lambda r: r["time_step"])
        first = min(r["time_step"] for r in remaining)
        earlier = [r for r in ordered if r["time_step"] < first]
        lead = plan.rows(sweep) if plan is not None else []
        done = (run_ins.responses.get(sweep, []) if run_ins is not None else [])[: len(lead)]
        if earlier and len(done) < len(lead):
            raise JournalError(
                f"{journal.path}: a sweep has answered steps but {len(done)} of its {len(lead)} run-in steps, so "
                "its conversation cannot be replayed. Use --overwrite to start again."
            )
        history = [(r["prompt"], answer) for r, answer in zip(lead, done, strict=False)]
        history += [(r["prompt"], journal.responses[row_key(r)]) for r in earlier]
        job = Job(sorted(remaining, key=lambda r: r["time_step"]), history, run_in=lead[len(done) :], sweep=sweep)
        out.append(job)
    return out


def _check_prefix(ordered: list[dict[str, Any]], journal: Journal, replayed: bool) -> None:
    """A resumed sweep's answered steps must be its first steps: the next step is asked after
    exactly those exchanges, and a step answered beyond a gap would stay in the file while the
    conversation skipped the gap. A sweep to be continued (`replayed`) needs each of them answered
    with the model's own text: a `prediction` (a number) cannot be replayed as the model's turn."""
    gap = None
    for row in ordered:
        key = row_key(row)
        if key not in journal.answered:
            gap = row["time_step"] if gap is None else gap
            continue
        line = journal.lines.get(key)
        where = f"{journal.path}, line {line}" if line else str(journal.path)
        if gap is not None:
            raise JournalError(
                f"{where}: step {row['time_step']} of sweep {format_key(key)} is answered but step {gap} is not; "
                "a sequential sweep's answers must be its first steps, in order (its conversation is replayed as it "
                f"was asked), so the file cannot be resumed. Remove that sweep's lines after step {gap}, or use "
                "--overwrite to start again."
            )
        if replayed and key not in journal.responses:
            raise JournalError(
                f"{where}: step {row['time_step']} of sweep {format_key(key)} is answered with a prediction, not a "
                "response; a sequential resume replays the model's own text as the conversation, so the file "
                "cannot be resumed. Use --overwrite to start again."
            )


def _deduplicated(todo: list[dict[str, Any]], rows: list[dict[str, Any]], journal: Journal) -> list[Job]:
    """One request per distinct prompt; a prompt the output already answered is not asked again."""
    answered = {r["prompt"]: journal.responses[row_key(r)] for r in rows if row_key(r) in journal.responses}
    by_prompt: dict[str, list[dict[str, Any]]] = {}
    for row in todo:
        by_prompt.setdefault(row["prompt"], []).append(row)
    return [Job(group[:1], shared=group[1:], known=answered.get(prompt)) for prompt, group in by_prompt.items()]


def distinct_prompts(rows: list[dict[str, Any]]) -> int:
    return len({row["prompt"] for row in rows})
