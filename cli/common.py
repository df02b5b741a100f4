"""What every command shares: the error handler that turns a `MathBodeError` into a message and an exit code."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, TypeVar

import click

from mathbode.core.errors import MathBodeError
from mathbode.core.names import printable
from mathbode.core.redact import redact
from mathbode.core.version import __version__
from mathbode.schema.release_hashes import release_content_hash

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT = {"help_option_names": ["-h", "--help"]}


def version_option(func: F) -> F:
    """`--version`: the package version and the content hash of the canonical release it builds and scores against."""
    return click.version_option(
        __version__,
        prog_name="mathbode",
        message=f"%(prog)s %(version)s (canonical release content {release_content_hash()})",
    )(func)


def exit_on_error(func: F) -> F:
    """Wrap a command body: a `MathBodeError` becomes `Error: <message>` on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MathBodeError as err:
            click.echo(f"Error: {printable(redact(str(err)))}", err=True)  # last line of defence: no credential printed
            sys.exit(err.exit_code)
        except BrokenPipeError:
            # The reader of our output stopped (`| head`): nothing is wrong with what we wrote.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except OSError as err:
            # The machine refused (disk full, read-only or missing folder, no permission). Every
            # write is atomic or an append of whole lines, so what was there before is intact.
            where = f" ({err.filename})" if err.filename else ""
            reason = err.strerror or str(err) or type(err).__name__
            click.echo(
                f"Error: the system refused{where}: {reason}. Nothing already written was lost; fix that "
                "(free space, a writable folder) and run the command again.",
                err=True,
            )
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def seed_text(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A `--seed` callback: a seed is text, encoded as UTF-8 wherever it is hashed, so bytes that
    are not UTF-8 (which Python carries as lone surrogates) are refused here, by name, not met as a
    UnicodeEncodeError deep in a draw or a commitment."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        shown = value.encode("utf-8", "surrogateescape" if _escapable(value) else "backslashreplace")
        raise click.BadParameter(
            f"{shown!r} is not text: it holds bytes that are not UTF-8 (or a lone surrogate). "
            "Give the seed as UTF-8 text (the label or hex string the split was built with).",
            param=param,
        ) from None
    return value


def _escapable(value: str) -> bool:
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True
