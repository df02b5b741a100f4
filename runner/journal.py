"""The output file as a journal: answers appended and flushed as they arrive, read back on resume.

A line reaches the operating system as soon as its answer arrives, so a run killed at any moment
(even with SIGKILL) keeps every answer but those in flight. The only damage such a kill can do
is a torn last line; opening the journal again cuts it off (and says so), never scores it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mathbode.core.atomic import json_line
from mathbode.core.errors import MathBodeError
from mathbode.schema.keys import RowKey, row_key
from mathbode.schema.parsing import parse_response


class JournalError(MathBodeError):
    """The output file is not a journal this run can continue."""


@dataclass
class Journal:
    """An append-only predictions file and the row keys it already answers."""

    path: Path
    answered: set[RowKey] = field(default_factory=set)
    #: Compliant answers among those read back.
    compliant: int = 0
    #: Bytes of a torn last line that opening cut off (0 when the file ended cleanly).
    repaired_bytes: int = 0
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
        for number, raw in enumerate(data[:end].splitlines(), start=1):
            try:
                record = json.loads(raw)
                self.answered.add(row_key(record))
                self.compliant += not math.isnan(parse_response(record.get("response")))
            except (ValueError, KeyError, TypeError):
                raise JournalError(
                    f"{self.path}, line {number}: not a prediction line written by mathbode-run; "
                    "the file cannot be resumed. Use --overwrite to start again, or another -o."
                ) from None

    def append(self, record: dict[str, Any]) -> None:
        assert self._stream is not None, "open the journal first"
        self._stream.write(json_line(record))
        self._stream.flush()
        self.answered.add(row_key(record))

    def close(self) -> None:
        if self._stream is not None:
            self._stream.flush()
            os.fsync(self._stream.fileno())
            self._stream.close()
            self._stream = None
