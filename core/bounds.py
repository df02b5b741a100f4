"""A bound in time on our own code working on data we did not write: a family's check, its formula.

`time_bound(seconds)` arms a real-time interval timer; when it fires, `OutOfTime` is raised in
the bounded code at its next Python instruction (a loop, a sleep, sympy's own recursion). It
derives from BaseException so that no `except Exception:` on the way swallows it. The timer
needs the main thread of a Unix process; elsewhere the code runs unbounded (said by `can_bound`).
Bounds nest: an inner bound never outlives, nor extends, the outer one.

Code we did not write (a plugin, a family file) is never bounded this way: it could ignore,
block or disarm the signal. It runs in a child process that `mathbode.core.child` bounds from
outside; only its families' data reaches the code this module bounds.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator


class OutOfTime(BaseException):
    """The bounded code ran past its bound (caught by whoever set the bound, never by the code)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past its bound of {seconds:g} s")
        self.seconds = seconds


def can_bound() -> bool:
    """Whether a time bound can be armed here (the main thread of a process with SIGALRM)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


_deadlines: list[float] = []
#: After the first, the alarm fires again every so often until the bound ends: an exception raised
#: where Python cannot pass it on (inside a garbage-collector callback, say) is lost, and the next
#: one ends the bounded code.
_RETRY_SECONDS = 0.25


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Run the block for at most `seconds` of wall time, or raise `OutOfTime` inside it."""
    if not can_bound() or not math.isfinite(seconds) or seconds <= 0:
        yield
        return
    start = time.monotonic()
    deadline = start + seconds
    outer = _deadlines[-1] if _deadlines else math.inf
    ours = min(deadline, outer)

    def fire(_signum: int, _frame: object) -> None:
        # The outer bound, if it is the one due, is raised with its own length.
        raise OutOfTime(seconds if ours == deadline else outer - start)

    previous = signal.signal(signal.SIGALRM, fire)
    _deadlines.append(ours)
    signal.setitimer(signal.ITIMER_REAL, max(ours - time.monotonic(), 1e-3), _RETRY_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _deadlines.pop()
        signal.signal(signal.SIGALRM, previous)
        if _deadlines:  # the outer bound's timer, re-armed for what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(_deadlines[-1] - time.monotonic(), 1e-3), _RETRY_SECONDS)


def error_text(err: BaseException, limit: int = 300) -> str:
    """An exception's message for a user, bounded: code we did not write may raise anything, with
    a message of any length, or one whose `str` itself fails (an int past Python's 4300 digits)."""
    try:
        text = str(err)
    except Exception:
        text = f"<a {type(err).__name__} whose message cannot be shown>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
