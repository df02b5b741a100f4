"""One exception root for every user-facing MathBode error.

The command-line entry points catch `MathBodeError` and print its message instead of a
traceback; anything else escaping is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
import sys

import click


class MathBodeError(Exception):
    """A problem the user can fix: the message says what was wrong and what to do."""

    #: Process exit code the CLI uses for this error (2 = usage, 1 = invalid data).
    exit_code: int = 1


class UsageError(MathBodeError):
    """Bad option, unknown name, unwritable or missing path."""

    exit_code = 2


class UnknownNameError(UsageError):
    """A name (family, preset) that is not registered."""


def exit_on_error(func):
    """Wrap a CLI body: a `MathBodeError` becomes its message on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except MathBodeError as err:
            click.echo(f"Error: {err}", err=True)
            sys.exit(err.exit_code)

    return wrapper
