"""The run-in of the sequential protocol: steps asked before a sweep's step 0, never scored.

A conversation that starts at step 0 has no history, so a model with memory answers its start-up
transient there, not its frequency response: a first-order low-pass with a = 0.5 read MB-Core
0.306 on FULL against an analytic 0.286, and every interval excluded the true value. Asking K
steps first puts the measured steps 0..63 in steady state for any model whose memory is at most
K steps (exact for a delay of k <= K; within (1 - a)^K of it for a first-order low-pass).

What a run-in is, by signal:

- **sinusoid**: the sweep's own last K steps (t = 64-K .. 63), in order. A sweep of whole cycles
  is periodic in its 64 steps, so these are exactly the steps -K .. -1 of the same signal.
- **step**: K repeats of step 0. A step response is defined from rest at the initial level; the
  run-in lets the model settle there (steps 0..31 are that level already), so the jump at step
  32 is read from a settled state and a dead time is not mistaken for a slow rise.
- **chirp**: the last K steps of the 1-cycle, phase-0 sinusoid of the same question and
  amplitude. The logarithmic chirp starts at phase 0 with an instantaneous frequency of 1 cycle
  per 64 steps, so that sinusoid's last steps continue it backwards with the same value and
  slope at step 0 (the chirp's own frequency below step 0 is lower still, a fraction of a cycle
  over any K <= 64: the two differ by a few degrees of phase at the start, far less than a
  cold start's whole transient). No new prompt is invented: every run-in prompt is a row of
  the release.

The run-in answers go to a journal of their own beside the output (`<stem>.run-in.jsonl`), one
line per step asked: the sweep, its position in the run-in, the key of the row whose prompt was
asked and the raw response. They are replayed as conversation on resume (a kill inside the run-in too) and
are never part of the submission: its lines say `run_in` in their `meta` instead.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mathbode.core.atomic import json_line
from mathbode.core.errors import MathBodeError
from mathbode.schema.keys import row_key
from mathbode.schema.layout import layout
from mathbode.schema.selection import key_fields

from .journal import Usage, close_synced

#: The longest run-in: one whole period of the slowest sinusoid (a sweep's 64 steps).
MAX_RUN_IN = layout().time_steps
#: The default when --run-in is not given: the default history window (8), so a model that
#: answers from what its context shows starts step 0 in steady state.
DEFAULT_RUN_IN = 8
RUN_IN_SUFFIX = ".run-in.jsonl"
#: The fields that name a sweep (a row key less its time step).
SWEEP_FIELDS = tuple(layout().key[:-1])


#: Every run-in line is one JSON object of exactly these fields, written in this order.
_RECORD_FIELDS = frozenset({"sweep", "position", "asked", "response", "meta"})
_RECORD_START = b'{"sweep":'


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


class RunInError(MathBodeError):
    """The run-in journal beside an output cannot be continued."""


def sweep_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """A row's sweep: its normalized key less the time step (a chirp's steps share it)."""
    return tuple(row_key(row))[:-1]


def run_in_path(output: Path) -> Path:
    """`predictions.jsonl` -> `predictions.run-in.jsonl`."""
    return output.with_name(output.name.removesuffix(".jsonl") + RUN_IN_SUFFIX)


@dataclass(frozen=True)
class RunInPlan:
    """Which rows each sweep's run-in asks, from every row of the reference (a chirp's run-in
    is another sweep's rows, which a preset may not select)."""

    length: int
    by_sweep: dict[tuple[Any, ...], list[dict[str, Any]]]

    @classmethod
    def of(cls, catalogue: list[dict[str, Any]], length: int) -> "RunInPlan":
        by_sweep: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for row in catalogue:
            by_sweep.setdefault(sweep_of(row), []).append(row)
        for steps in by_sweep.values():
            steps.sort(key=lambda r: r["time_step"])
        return cls(length, by_sweep)

    def rows(self, sweep: tuple[Any, ...]) -> list[dict[str, Any]]:
        """The rows asked, in order, before `sweep`'s step 0 (empty for a run-in of 0)."""
        k = self.length
        if k == 0:
            return []
        steps = self.by_sweep[sweep]
        fields = dict(zip(SWEEP_FIELDS, sweep, strict=True))
        if fields["signal_type"] == "step":
            return [steps[0]] * k
        if fields["signal_type"] == "chirp":
            source = (fields["family"], fields["question_id"], "sinusoid", fields["amplitude_scale"], 1.0, 0.0)
            if source not in self.by_sweep:
                raise RunInError(
                    f"a chirp's run-in asks the 1-cycle, phase-0 sinusoid of {fields['family']} question "
                    f"{fields['question_id']} at amplitude {fields['amplitude_scale']:g}, which the reference "
                    "does not hold; use --run-in 0 or a complete release as --reference."
                )
            steps = self.by_sweep[source]
        return steps[len(steps) - k :]


def _check_ours(path: Path) -> bool:
    """Whether a regular file is at `path` (False: nothing); anything else there is refused."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode):
        raise RunInError(
            f"{path}: the run-in journal's name holds something that is not a plain file (a link, folder, pipe "
            "or device), which mathbode will not write through. Remove it, or choose another -o."
        )
    return True


@dataclass
class RunInJournal:
    """The run-in answers of a run, appended as they arrive: sweep -> responses in run-in order."""

    path: Path
    responses: dict[tuple[Any, ...], list[str]] = field(default_factory=dict)
    #: Bytes of a torn last line cut off on resume (that run-in step is asked again).
    repaired_bytes: int = 0
    #: The tokens the server reported for the run-in answers read back.
    usage: Usage = field(default_factory=Usage)
    _stream: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, fresh: bool, length: int, plan: "RunInPlan | None" = None) -> "RunInJournal":
        """Open for appending; `fresh` starts it empty, otherwise its answers are read (each
        checked against `plan`: the row it says it asked is the one the run-in asks there). The
        name is ours, not the user's: a link, a pipe or any file that is not a run-in journal
        found there is refused, never followed, emptied or read."""
        journal = cls(path)
        exists = _check_ours(path)
        if exists and not fresh:
            journal._recover(length, plan=plan)
        elif exists and path.stat().st_size:
            cls(path)._recover(MAX_RUN_IN + 1, cut=False)  # proves it a run-in journal before emptying it
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags | (os.O_TRUNC if fresh else 0), 0o644)
        journal._stream = os.fdopen(fd, "a", encoding="utf-8", newline="\n")
        return journal

    def _recover(self, length: int, cut: bool = True, plan: "RunInPlan | None" = None) -> None:
        """Read the journal's answers, every line proved ours first (nothing is cut or emptied
        before): a record of our fields, in run-in order, asking the row the run-in asks there.
        A last line without its newline is a step torn by a kill (cut off and asked again) only
        if it begins as our records begin; anything else there is not a journal of ours."""
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        tail = data[end:]
        lines = data[:end].splitlines()
        # A kill can tear a line anywhere, even inside its first field's name; what it leaves is
        # never a whole JSON value (a whole record ends with its newline).
        if tail and (tail[: len(_RECORD_START)] != _RECORD_START[: len(tail)] or _is_json(tail)):
            raise RunInError(
                f"{self.path}, line {len(lines) + 1}: not a run-in line written by mathbode-run (and no newline "
                "after it), so the file is left as it is. Move it away, or choose another -o."
            )
        for number, raw in enumerate(lines, start=1):
            try:
                record = json.loads(raw)
                if not isinstance(record, dict) or set(record) != _RECORD_FIELDS:
                    raise TypeError
                sweep = sweep_of({**record["sweep"], "time_step": 0})
                position, response = record["position"], record["response"]
                if not (type(position) is int and isinstance(response, str) and isinstance(record["asked"], dict)):
                    raise TypeError
                asked = tuple(row_key(record["asked"]))
            except (ValueError, KeyError, TypeError, RecursionError):
                raise RunInError(
                    f"{self.path}, line {number}: not a run-in line written by mathbode-run, so the file is left as "
                    "it is. Move it away, or choose another -o."
                ) from None
            answered = self.responses.setdefault(sweep, [])
            if position != len(answered) or position >= length:
                raise RunInError(
                    f"{self.path}, line {number}: run-in step {position} of a sweep whose run-in has "
                    f"{len(answered)} of {length} steps answered; the run cannot be resumed. "
                    "Use --overwrite to start again."
                )
            if plan is not None:
                expected = plan.rows(sweep) if sweep in plan.by_sweep else []
                if position >= len(expected) or tuple(row_key(expected[position])) != asked:
                    raise RunInError(
                        f"{self.path}, line {number}: says run-in step {position} asked a row this run's run-in "
                        "does not ask there (edited, or another run's journal), so its conversation cannot be "
                        "replayed as asked. Use --overwrite to start again."
                    )
            answered.append(response)
            self.usage.add_meta(record["meta"])
        if cut and tail:  # a torn last line, proved ours with the rest: that step is asked again
            with open(self.path, "r+b") as f:
                f.truncate(end)
            self.repaired_bytes = len(tail)

    @property
    def answered_count(self) -> int:
        """Run-in answers the journal holds (replayed on resume, and appended by this run)."""
        return sum(len(answers) for answers in self.responses.values())

    def append(self, sweep: tuple[Any, ...], row: dict[str, Any], response: str, meta: dict[str, Any]) -> None:
        assert self._stream is not None, "open the run-in journal first"
        answered = self.responses.setdefault(sweep, [])
        record = {
            "sweep": dict(zip(SWEEP_FIELDS, sweep, strict=True)),
            "position": len(answered),
            "asked": key_fields(row),
            "response": response,
            "meta": meta,
        }
        self._stream.write(json_line(record))
        self._stream.flush()
        answered.append(response)

    def close(self) -> None:
        close_synced(self._stream)
        self._stream = None
