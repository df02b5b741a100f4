"""The output file as a journal: answers appended and flushed as they arrive, read back on resume.

A line reaches the operating system as soon as its answer arrives, so a run killed at any moment
(even with SIGKILL) keeps every answer but those in flight. The only damage such a kill can do
is a torn last line; opening the journal again cuts it off (and says so), never scores it.
"""

from __future__ import annotations

import json
import math
import os

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


class JournalError(MathBodeError):
    """The output file is not a journal this run can continue."""


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
    _stream: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, fresh: bool) -> "Journal":
        """Open for appending; `fresh` starts an empty file, otherwise existing answers are read."""
        journal = cls(path)
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
        if tail:
            # A line without its newline was being written when the run stopped: cut it off.
            with open(self.path, "r+b") as f:
                f.truncate(end)
            self.repaired_bytes = len(tail)
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
            self.answered.add(key)
            if isinstance(record.get("response"), str):
                self.responses[key] = record["response"]
            self.compliant += compliant
        self.duplicates_dropped = len(data[:end].splitlines()) - len(kept)
        if self.duplicates_dropped:
            with atomic_text_file(self.path) as stream:
                stream.write(b"".join(line + b"\n" for line in kept).decode("utf-8"))

    def append(self, record: dict[str, Any]) -> None:
        assert self._stream is not None, "open the journal first"
        self._stream.write(json_line(record))
        self._stream.flush()
        key = row_key(record)
        self.answered.add(key)
        if isinstance(record.get("response"), str):
            self.responses[key] = record["response"]

    def close(self) -> None:
        if self._stream is not None:
            self._stream.flush()
            os.fsync(self._stream.fileno())
            self._stream.close()
            self._stream = None


class OutputLock:
    """One writer per output: an exclusive lock on `.<output name>.lock` beside it, holding the
    writer's process id, so a second run on the same `-o` is refused with that id instead of both
    appending (two runs left 2,544 lines, 1,264 of them repeated). The lock goes with the process,
    even one killed with SIGKILL."""

    def __init__(self, output: Path, option: str = "-o") -> None:
        self.path = output.with_name(f".{output.name}.lock")
        self.output, self.option = output, option
        self._fd: int | None = None

    def __enter__(self) -> "OutputLock":
        if fcntl is None:  # no advisory locks on this platform
            return self
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as err:
                raise UsageError(f"{self.option} {self.output}: cannot lock it ({err.strerror}).") from None
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
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)  # still locked: a waiting opener sees the file gone and retries
            os.close(self._fd)
            self._fd = None
