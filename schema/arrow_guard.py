"""What Arrow's JSON reader may be given: it crashes the process (SIGSEGV) on some input, where
Python's reader raises. The release check asks here first; the submission reader asks the same
of a block's lines column-wise (`submission._arrow_may_read`)."""

from __future__ import annotations

from pathlib import Path

#: Arrow's reader recurses into nested values: a line's depth is at most its count of opening
#: brackets, and 100,000 crashed it (10,000 did not); Python's reader stops near 1,000 anyway.
MAX_ARROW_BRACKETS = 900


def arrow_line_problem(raw: bytes) -> str | None:
    """Why one JSON Lines line must not reach Arrow's reader (None: it may).

    One object per line: a block that starts with `null` crashes the reader, and other scalars are
    read its own way."""
    line = raw.strip()
    if not line:
        return "an empty line"
    if line[:1] != b"{" or line[-1:] != b"}":
        return "not a JSON object"
    if line.count(b"[") + line.count(b"{") > MAX_ARROW_BRACKETS:
        return f"nested more than {MAX_ARROW_BRACKETS} deep"
    return None


def arrow_file_problem(path: Path) -> str | None:
    """'line N: <why>' for the first line of a JSON Lines file that must not reach Arrow's reader."""
    with path.open("rb") as stream:
        for number, raw in enumerate(stream, start=1):
            problem = arrow_line_problem(raw)
            if problem:
                return f"line {number}: {problem}"
    return None
