"""When this process may fork workers that share what it has loaded.

Forking copies only the calling thread: a lock another thread holds stays held in the child.
So work is forked only on Linux (fork is the platform's default and well trodden there) and only
from a process with no other thread; elsewhere the caller does the work itself.
"""

from __future__ import annotations

import os
import sys
import threading


def can_fork() -> bool:
    return sys.platform == "linux" and threading.active_count() == 1


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform says)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
