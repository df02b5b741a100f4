"""File names made from data: model names, labels, family names.

A name read from a submission or a results document is input, not a path: `../x`, `/etc/x`,
`a/b`, a trailing slash, a NUL, 20,000 characters, `results.json`, `CON`, or two names that differ
only in case (one file on macOS and Windows). `file_name` maps every text to a name that is safe
on every common file system and in a URL, and is injective:

- a text that is already a plain name (lower-case letters, digits, `_ . -`; starting with a letter
  or digit, not ending with a dot; at most `PLAIN_MAX` characters; not a reserved name) is kept
  as it is, so `gpt-4o-mini` stays readable;
- any other text becomes a readable slug of it, cut short, then `~` and 12 hex digits of its
  sha256. A kept name never holds `~`, so a changed name never equals a kept one, and two changed
  names are equal only when their hashes agree (48 bits: no collision among any realistic set).

`check_inside` is the second lock: the relative paths a command is about to write, checked to lie
inside its output folder before anything is written.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath
from typing import Iterable

from .errors import UsageError

#: The longest name kept as it is, and the longest slug before the hash (with `~` and 12 hex
#: digits: at most 61 characters, far below every file system's 255).
PLAIN_MAX = 64
SLUG_MAX = 48
HASH_DIGITS = 12
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_.-]*")
# Windows device names (with or without an extension) and the files a report or site folder
# holds itself: a submission folder or page of such a name would shadow or clash with them.
_DEVICES = {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))}
RESERVED = frozenset(
    {
        "report.md",
        "results.json",
        "scores.json",
        "sweeps.csv",
        "frequency_summary.csv",
        "chirp.csv",
        "step.csv",
        "multitone_lines.csv",
        "two_tone.csv",
        "leaderboard.csv",
        "comparisons.json",
        "index.html",
        "assets",
        "data",
        "submissions",
        "sweeps",
        "families",
    }
)


def _plain(text: str) -> bool:
    if len(text) > PLAIN_MAX or not _PLAIN.fullmatch(text) or text.endswith("."):
        return False
    stem = text.split(".", 1)[0]
    # A figure (`bode.png`) or any file of ours with another extension is reserved too.
    return text not in RESERVED and stem not in _DEVICES and not any(text.startswith(r + ".") for r in _FIGURES)


_FIGURES = ("bode", "fit_quality", "compliance", "midband_summary", "chirp", "step")


def file_name(text: str) -> str:
    """A safe, injective, bounded file name for `text` (see the module's docstring)."""
    if _plain(text):
        return text
    slug = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.")[:SLUG_MAX].strip("-.") or "name"
    # surrogatepass: a lone surrogate (valid in JSON text, not in UTF-8) still has a hash of its own.
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    return f"{slug}~{digest}"


def check_inside(paths: Iterable[str], out: object, option: str) -> None:
    """Refuse, before anything is written, a relative path that would leave the output folder
    `out`: absolute, with a `..` or empty part, or holding a NUL or a backslash."""
    for path in paths:
        parts = PurePosixPath(path).parts
        if (
            not path
            or path.startswith("/")
            or "\x00" in path
            or "\\" in path
            or any(p in ("", ".", "..") for p in parts)
            or len(parts) != len(path.split("/"))
        ):
            raise UsageError(
                f"{option} {out}: mathbode was about to write {path!r}, which is not a plain file inside the "
                "folder; nothing was written. This is a bug in mathbode: please report it with the command."
            )


# C0 controls but newline and tab, DEL, C1 controls (ESC and CSI start terminal escape
# sequences), the bidirectional overrides (text shown in another order than stored) and lone
# surrogates (valid in JSON text, unprintable: writing one to a terminal raises).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` safe to print on a terminal: a character that could move the cursor, recolour or
    retitle the terminal, reorder the line or fail to encode is shown as its escape (`\\x1b`)."""
    return _UNPRINTABLE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )
