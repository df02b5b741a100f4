"""Plain digests of files and of lists of hashes (no Arrow, no numpy: cheap to import)."""

from __future__ import annotations

import hashlib
from pathlib import Path

_HASH = "sha256"


def combined_hash(parts: list[str]) -> str:
    """One hash over per-family content hashes, in the given (canonical) order."""
    h = hashlib.new(_HASH)
    for part in parts:
        h.update(part.encode() + b"\n")
    return f"{_HASH}:{h.hexdigest()}"


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
