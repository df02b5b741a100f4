"""Families defined in a Python file that is not installed (`mathbode family check FILE.py`).

A family author writes one module and checks it before packaging it. The file is imported in a
bounded child process, as a plugin is (`isolation`), under a private module name; its families
are its `FAMILIES` (a sequence), else its `FAMILY`, else every `Family` it defines at top level,
in definition order. They come back as data: each family whose definition passed its check, and
the findings of each that failed.
"""

from __future__ import annotations

import dataclasses
import stat
from dataclasses import dataclass
from pathlib import Path

from mathbode.core.errors import UsageError

from .family import Family
from .isolation import bound_seconds, load_isolated, raised_text


@dataclass(frozen=True)
class FileFamilies:
    """A file's families: those whose definitions passed their check, and the findings, as
    (code, message), of each that failed (by name)."""

    families: list[Family]
    failed: dict[str, list[tuple[str, str]]]


def load_family_file(path: str | Path, namespace: str | None = None, seconds: float | None = None) -> FileFamilies:
    """The families a Python file defines (named `namespace.name` when a namespace is given). A
    file that cannot be imported, or whose import runs past `seconds`, exits or kills its
    process, is a message naming it and what happened."""
    path = Path(path)
    try:
        mode = path.lstat().st_mode
    except OSError as err:
        raise UsageError(f"{path}: {err.strerror or err}. Give a family's name or a .py file.") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{path} is not a regular file (a link, folder or pipe is never imported). Give a .py file.")
    seconds = bound_seconds() if seconds is None else seconds
    source = {"kind": "file", "path": str(path.resolve()), "namespace": namespace, "package": f"file {path}"}
    (result,) = load_isolated([source], seconds)
    if result.fate is not None:
        hint = " (a loop or a wait at import: a family file should only define its families)"
        raise UsageError(
            f"{path}: importing it {result.fate}{hint if 'ran past' in result.fate else ''}; nothing of it was "
            "checked. Fix the file."
        )
    if result.raised is not None:
        raised = result.raised
        raise UsageError(f"{path} fails to import: {raised_text(raised)}{raised['where']}. Fix the file.")
    if not result.families and not result.failed:
        raise UsageError(
            f"{path} defines no mathbode Family: define FAMILY = Family(...), or FAMILIES = (Family(...), ...)."
        )
    # A file checked under a namespace is told apart from the installed package of that namespace.
    families = [dataclasses.replace(f, origin=source["package"]) if namespace else f for f in result.families]
    return FileFamilies(families, result.failed)


def families_from_file(path: str | Path, namespace: str | None = None, seconds: float | None = None) -> list[Family]:
    """The families of a file whose every definition passes its check (else a message naming
    the first that fails, and why)."""
    loaded = load_family_file(path, namespace, seconds)
    for name, findings in loaded.failed.items():
        said = "; ".join(f"[{code}] {message}" for code, message in findings)
        raise UsageError(f"{path}: family {name!r} fails its check: {said}. Fix the file.")
    return loaded.families
