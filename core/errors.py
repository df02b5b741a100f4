"""One exception root for every user-facing MathBode error.

The command line (`mathbode.cli`) catches `MathBodeError` and prints its message instead of a
traceback; anything else escaping is a bug and keeps its traceback. No click here: the rooms
below the command line raise these, only `cli/` turns them into exit codes.
"""

from __future__ import annotations

import difflib
from typing import Iterable


class MathBodeError(Exception):
    """A problem the user can fix: the message says what was wrong and what to do."""

    #: Process exit code the CLI uses for this error (2 = usage, 1 = invalid data or a failed run).
    exit_code: int = 1


class UsageError(MathBodeError):
    """Bad option, unknown name, unwritable or missing path."""

    exit_code = 2


class UnknownNameError(UsageError):
    """A name (family, preset) that is not registered."""


def unknown_name_message(kind: str, name: str, available: Iterable[str]) -> str:
    """'Unknown family 'x'. Did you mean 'y'? Available: a, b, c.'"""
    choices = list(available)
    close = difflib.get_close_matches(name, choices, n=2, cutoff=0.5)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"Unknown {kind} {name!r}.{hint} Available: {', '.join(choices)}."


class ReferenceMismatchError(MathBodeError):
    """The rows to score or ask against are not the canonical release."""
