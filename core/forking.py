"""When this process may fork workers that share what it has loaded.

Forking copies only the calling thread: a lock another thread holds stays held in the child.
So work is forked only on Linux (fork is the platform's default and well trodden there) and only
from a process with no other thread; elsewhere the caller does the work itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator


def can_fork() -> bool:
    return sys.platform == "linux" and threading.active_count() == 1


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform says)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextmanager
def sigint_held() -> Iterator[None]:
    """Hold (block) SIGINT in this thread while processes are forked inside.

    Ctrl-C reaches the whole process group. A child that receives it between the fork and its
    first line (Python's at-fork hooks run there) prints "Exception ignored ... KeyboardInterrupt"
    of its own. Held, the signal waits: in the parent until this block ends (then the caller's
    handler sees it), in a child until `ignore_sigint` discards it.
    """
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def ignore_sigint() -> None:
    """In a child forked inside `sigint_held`: ignore Ctrl-C (the parent handles it), then let
    signals in again (a held SIGINT is discarded)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
