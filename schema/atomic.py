"""Write a whole output folder atomically: build it beside the target, then swap it in.

An interrupted write leaves the previous folder (or nothing) in place, never a mix, and no
temporary folder behind. Shared by the release builder and the evaluator's report writer.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import UsageError


def check_replaceable(out: Path, marker: str, what: str, option: str = "--out") -> None:
    """Refuse a target that is a file, or a non-empty folder not made by us (no `marker` file in it)."""
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


@contextmanager
def atomic_folder(out: Path, option: str = "--out") -> Iterator[Path]:
    """Yield a temporary folder; on success it replaces `out`, on any failure it is removed."""
    parent = out.resolve().parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    except OSError as err:
        raise UsageError(
            f"{option} {out}: cannot write in {parent} ({err.strerror}). Choose another {option}."
        ) from None
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
