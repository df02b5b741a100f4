"""Write JSON Lines atomically (to a temporary file beside the target, then renamed)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterable, TextIO

from mathbode.schema.errors import UsageError


def _write_lines(stream: TextIO, records: Iterable[dict]) -> int:
    n = 0
    for rec in records:
        stream.write(json.dumps(rec, ensure_ascii=False) + "\n")
        n += 1
    return n


def write_jsonl(path: str | Path, records: Iterable[dict]) -> int:
    """Write one JSON object per line; returns the count. '-' writes to stdout."""
    if str(path) == "-":
        import sys

        return _write_lines(sys.stdout, records)
    path = Path(path)
    parent = path.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"-o {path}: the folder {parent} does not exist.")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
    except OSError as err:
        raise UsageError(f"-o {path}: cannot write in {parent} ({err.strerror}).") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            n = _write_lines(f, records)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n
