"""Paths named by a release's manifest and card: relative, and inside the release, or refused.

A manifest is data from whoever made the folder; a path in it must never make the validator
read, or the publisher upload, anything outside the release folder.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath


def path_problem(folder: Path, rel: str, boundary: Path | None = None) -> str | None:
    """Why `rel` may not name a file of the release in `folder`, or None when it may.

    A symlink may lead only inside `boundary` (default: the release folder itself; a Hub
    snapshot's files are links into its cache folder, which is then the boundary)."""
    if not rel or "\\" in rel or "\x00" in rel:
        return "an empty path, a backslash or a NUL character"
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        return "an absolute path"
    if any(part in ("..", ".", "") for part in rel.split("/")):
        return "a path with '..', '.' or an empty part"
    target = folder / rel
    try:
        inside = target.resolve().is_relative_to((boundary or folder).resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return "a path that cannot be resolved (a symlink loop)"
    if not inside:
        return "a path leading outside the release (through a symlink)"
    return None
