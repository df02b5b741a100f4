"""The output file as a journal: answers appended and flushed as they arrive, read back on resume.

A line reaches the operating system as soon as its answer arrives, so a run killed at any moment
(even with SIGKILL) keeps every answer but those in flight. The only damage such a kill can do
is a torn last line; opening the journal again cuts it off (and says so), never scores it.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None  # type: ignore[assignment]
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mathbode.core.atomic import atomic_text_file, json_line
from mathbode.core.errors import MathBodeError, UsageError
from mathbode.schema.keys import RowKey, row_key
from mathbode.schema.parsing import parse_response
from mathbode.schema.submission import validate_lines
from mathbode.schema.universe import Universe


class JournalError(MathBodeError):
    """The output file is not a journal this run can continue."""


#: What a record says when no answer came with a token count.
NO_USAGE = (
    "the server reported no token usage with its answers (no `usage` in its chat completions), so the run cannot "
    "say what it spent; `mathbode run --dry-run` estimates it"
)


@dataclass
class Usage:
    """Tokens the server reported (a chat completion's `usage`), summed over answered requests.

    Only answers are counted: a failed attempt returns no completion and no usage. A line that
    shares another's answer (`--dedupe`) was not asked and counts nothing."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Answers that came with a count, and answers that came without one.
    requests: int = 0
    requests_without_usage: int = 0

    def add(self, prompt_tokens: Any, completion_tokens: Any) -> None:
        counts = [
            c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else None
            for c in (prompt_tokens, completion_tokens)
        ]
        if counts == [None, None]:
            self.requests_without_usage += 1
            return
        self.requests += 1
        self.prompt_tokens += counts[0] or 0
        self.completion_tokens += counts[1] or 0

    def add_meta(self, meta: Any) -> None:
        """Count a written answer by its `meta`, if it records an asked request (`attempts`)."""
        if isinstance(meta, dict) and "attempts" in meta and not meta.get("shared"):
            self.add(meta.get("prompt_tokens"), meta.get("completion_tokens"))

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.requests + other.requests,
            self.requests_without_usage + other.requests_without_usage,
        )

    def to_record(self) -> dict[str, int] | None:
        """The record's form: None when no answer reported a count (the server reports none)."""
        if not self.requests:
            return None
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "requests": self.requests,
            "requests_without_usage": self.requests_without_usage,
        }


@dataclass
class Journal:
    """An append-only predictions file and the row keys it already answers."""

    path: Path
    answered: set[RowKey] = field(default_factory=set)
    #: Each answered row's response as written (the sequential protocol replays them on resume).
    responses: dict[RowKey, str] = field(default_factory=dict)
    #: Compliant answers among those read back.
    compliant: int = 0
    #: Bytes of a torn last line that opening cut off (0 when the file ended cleanly).
    repaired_bytes: int = 0
    #: Lines that repeated an earlier line's row with the same answer, dropped on opening.
    duplicates_dropped: int = 0
    #: The line of the file each answered row was read from (rows answered by this run: none).
    lines: dict[RowKey, int] = field(default_factory=dict)
    #: The families its lines may name (the reference's; None: the canonical five).
    universe: Universe | None = None
    #: The tokens the server reported for the answers read back (earlier runs of this output).
    usage: Usage = field(default_factory=Usage)
    _stream: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, fresh: bool, universe: Universe | None = None) -> "Journal":
        """Open for appending; `fresh` starts an empty file, otherwise existing answers are read."""
        journal = cls(path, universe=universe)
        if fresh or not path.exists():
            path.write_bytes(b"")
        else:
            journal._recover()
        journal._stream = open(path, "a", encoding="utf-8", newline="\n")
        return journal

    def _recover(self) -> None:
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        tail = data[end:]
        seen: dict[RowKey, tuple[int, Any]] = {}
        kept: list[bytes] = []
        for number, raw in enumerate(data[:end].splitlines(), start=1):
            try:
                record = json.loads(raw)
                key = row_key(record)
                answer = (record.get("response"), record.get("prediction"), record.get("model"))
                compliant = not math.isnan(parse_response(record.get("response")))
            except (ValueError, KeyError, TypeError, RecursionError):
                raise JournalError(
                    f"{self.path}, line {number}: not a prediction line written by mathbode-run; "
                    "the file cannot be resumed. Use --overwrite to start again, or another -o."
                ) from None
            if key in seen:
                first, earlier = seen[key]
                if earlier != answer:
                    raise JournalError(
                        f"{self.path}, lines {first} and {number}: two different answers to one row; the file "
                        "cannot be resumed. Keep one of the lines, or use --overwrite to start again."
                    )
                continue  # the same answer written twice (two runs on one output): kept once
            seen[key] = (number, answer)
            kept.append(raw)
            self.usage.add_meta(record.get("meta"))  # a repeated line was one answer: counted once
            self.lines[key] = number
            self.answered.add(key)
            if isinstance(record.get("response"), str):
                self.responses[key] = record["response"]
            self.compliant += compliant
        self.duplicates_dropped = len(data[:end].splitlines()) - len(kept)
        self._validate(kept, [number for number, _ in seen.values()])
        if tail:
            # A line without its newline was being written when the run stopped: cut it off
            # (only once the rest is known good: a refused file is left exactly as it was).
            with open(self.path, "r+b") as f:
                f.truncate(end)
            self.repaired_bytes = len(tail)
        if self.duplicates_dropped:
            with atomic_text_file(self.path) as stream:
                stream.write(b"".join(line + b"\n" for line in kept).decode("utf-8"))

    def _validate(self, kept: list[bytes], numbers: list[int]) -> None:
        """Refuse to resume unless every kept line passes the submission validator: a resume
        that keeps a line the validator refuses (a time step of 64, a changed model, NaN in meta)
        ends with an invalid file and exit 0. Nothing is written to the file before this check."""
        if not kept:
            return
        report = validate_lines(b"".join(line + b"\n" for line in kept), str(self.path), self.universe)
        if report.valid:
            return
        problem = report.errors[0]
        where = problem.where
        if where.startswith("line ") and where[5:].replace(",", "").isdigit():
            where = f"line {numbers[int(where[5:].replace(',', '')) - 1]}"  # the file's numbering, not the kept lines'
        field = f" {problem.field}:" if problem.field else ""
        raise JournalError(
            f"{self.path}, {where}:{field} expected {problem.expected}, found {problem.found}; the file cannot be "
            "resumed (a resume keeps only lines the validator accepts). Fix or remove the line, or use --overwrite "
            "to start again."
        )

    def append(self, record: dict[str, Any]) -> None:
        assert self._stream is not None, "open the journal first"
        self._stream.write(json_line(record))
        self._stream.flush()
        key = row_key(record)
        self.answered.add(key)
        if isinstance(record.get("response"), str):
            self.responses[key] = record["response"]

    def close(self) -> None:
        close_synced(self._stream)
        self._stream = None


def close_synced(stream: IO[str] | None) -> None:
    """Flush, fsync and close an append stream (a journal's last answers reach the disk)."""
    if stream is not None:
        stream.flush()
        os.fsync(stream.fileno())
        stream.close()


class OutputLock:
    """One writer per output: an exclusive lock on `.<output name>.lock` beside it, holding the
    writer's process id, so a second run on the same `-o` is refused with that id instead of both
    appending (two runs left 2,544 lines, 1,264 of them repeated). The lock goes with the process,
    even one killed with SIGKILL.

    The lock belongs to the file, not to the name given: it sits beside the output's real path
    (so `-o b.jsonl`, a symbolic link to a.jsonl, takes a.jsonl's lock), and the output file
    itself, once it exists, is locked too (so a hard link, a second name for the same inode, is
    refused as well). The lock file is never opened through a link, never read or written unless
    it is a regular file, and never emptied unless it holds what a lock holds (a process id).
    """

    def __init__(self, output: Path, option: str = "-o") -> None:
        self.output, self.option = output, option
        real = Path(os.path.realpath(output))
        self.path = real.with_name(f".{real.name}.lock")
        self._fd: int | None = None
        #: The output file's descriptor, held with an exclusive lock (None before the file exists).
        self._file_fd: int | None = None

    def _refuse(self, why: str) -> UsageError:
        return UsageError(
            f"{self.option} {self.output}: the lock file {self.path} {why}; mathbode will not write through it. "
            f"Remove it, or choose another {self.option}."
        )

    def _open_lock_file(self) -> int:
        # O_NOFOLLOW: a link planted at the lock's name would have us truncate whatever it points
        # to. O_NONBLOCK: opening a FIFO for writing waits forever for a reader without it.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as err:
            if err.errno == errno.ELOOP or os.path.islink(self.path):
                raise self._refuse("is a symbolic link") from None
            if err.errno == errno.ENXIO:  # a FIFO with no reader
                raise self._refuse("is not a regular file (a device, pipe or socket)") from None
            raise UsageError(f"{self.option} {self.output}: cannot lock it ({err.strerror}).") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise self._refuse("is not a regular file (a device, pipe or socket)")
        if info.st_nlink != 1:
            os.close(fd)  # a hard link to someone's file: writing our pid would overwrite it
            raise self._refuse(f"has {info.st_nlink} names (a hard link to another file)")
        return fd

    def __enter__(self) -> "OutputLock":
        if fcntl is None:  # no advisory locks on this platform
            return self
        while True:
            fd = self._open_lock_file()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise UsageError(
                    f"{self.option} {self.output}: another mathbode run (process {holder}) is writing it. "
                    f"Wait for it to finish, or choose another {self.option}."
                ) from None
            # The previous holder may have removed the file between our open and our lock: then
            # we hold a lock nobody else can see; take the file that is there now.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        held = os.pread(fd, 64, 0)
        if held.strip() and not held.strip().isdigit():
            os.close(fd)  # a file of someone's under the lock's name: not ours to empty
            raise self._refuse("holds something other than a process id")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        try:
            self.hold_output()
        except BaseException:
            self.__exit__()
            raise
        return self

    def hold_output(self) -> None:
        """Lock the output file itself, if it exists (again after it was replaced): a second name
        for it (a hard link) has another lock file beside it, but the same file."""
        if fcntl is None or self._fd is None:
            return
        try:
            fd = os.open(self.output, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return  # not there yet (or unreadable: the journal will say so)
        info = os.fstat(fd)
        if self._file_fd is not None and os.path.samestat(info, os.fstat(self._file_fd)):
            os.close(fd)
            return
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return  # not a file we append to: `run` refuses it
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise UsageError(
                f"{self.option} {self.output}: another mathbode run is writing this file under another name "
                f"(a hard or symbolic link to it). Wait for it to finish, or choose another {self.option}."
            ) from None
        if self._file_fd is not None:
            os.close(self._file_fd)
        self._file_fd = fd

    def __exit__(self, *exc: object) -> None:
        if self._file_fd is not None:
            os.close(self._file_fd)
            self._file_fd = None
        if self._fd is not None:
            # Still locked: a waiting opener sees the file gone and retries. Only our own lock file
            # is removed: whatever was put at its name meanwhile is not ours to delete.
            try:
                if os.path.samestat(os.fstat(self._fd), os.stat(self.path, follow_symlinks=False)):
                    self.path.unlink()
            except FileNotFoundError:
                pass
            os.close(self._fd)
            self._fd = None
