"""Atomic writes: a whole folder or a whole file appears at once, or not at all.

An interrupted write leaves the previous folder or file (or nothing) in place, never a mix, and
no temporary left behind. The release builder, the report writer and the request writers use it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from .errors import UsageError


def check_replaceable(out: Path, marker: str, what: str, option: str = "--out") -> None:
    """Refuse a target that is a file, or a non-empty folder not made by us (no `marker` file in it)."""
    _check_target(out, option, folder=True)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out}: exists and is not a folder. Choose another {option}.")
    if out.is_dir() and any(out.iterdir()) and not (out / marker).is_file():
        raise UsageError(
            f"{option} {out}: the folder is not empty and is not {what} (no {marker}); "
            f"refusing to replace it. Choose another {option} or empty the folder."
        )
    parent = out.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{option} {out}: the parent folder {parent} does not exist.")


def _check_target(out: Path, option: str, folder: bool) -> None:
    """Refuse targets that cannot be swapped in whole: the current folder (or a parent), or a folder for a file."""
    if out.name in ("", ".", "..") or Path.cwd().resolve().is_relative_to(out.resolve()):
        what = "a folder" if folder else "a file"
        raise UsageError(
            f"{option} {str(out) or repr('')}: name {what} to write, not the current folder or one above it."
        )
    if not folder and out.is_dir():
        raise UsageError(f"{option} {out}: is a folder; give the name of a file to write.")


def _temporary(make, out: Path, option: str, folder: bool):
    _check_target(out, option, folder)
    parent = out.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{option} {out}: the folder {parent} does not exist.")
    try:
        return make(prefix=f".{out.name}.tmp-", dir=parent)
    except OSError as err:
        raise UsageError(
            f"{option} {out}: cannot write in {parent} ({err.strerror}). Choose another {option}."
        ) from None


@contextmanager
def atomic_folder(out: Path, option: str = "--out") -> Iterator[Path]:
    """Yield a temporary folder; on success it replaces `out`, on any failure it is removed."""
    tmp = Path(_temporary(tempfile.mkdtemp, out, option, folder=True))
    parent = tmp.parent
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; outputs are for everyone to read
        yield tmp
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
            os.replace(out, old / out.name)
            os.replace(tmp, out)
            shutil.rmtree(old)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextmanager
def atomic_text_file(out: Path, option: str = "-o") -> Iterator[TextIO]:
    """Yield a text stream to a temporary file beside `out`; on success it is renamed onto `out`."""
    fd, tmp = _temporary(tempfile.mkstemp, out, option, folder=False)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_line(record: dict[str, Any]) -> str:
    """One JSON Lines record (UTF-8 text as is, no NaN)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]], option: str = "-o") -> int:
    """Write one JSON object per line, atomically; returns the count. '-' writes to stdout."""

    def lines(stream: TextIO) -> int:
        n = 0
        for record in records:
            stream.write(json_line(record))
            n += 1
        return n

    if str(path) == "-":
        return lines(sys.stdout)
    with atomic_text_file(Path(path), option) as stream:
        return lines(stream)
