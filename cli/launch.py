"""Where every command starts: Ctrl-C while its modules load ends it quietly.

A command loads numpy, pyarrow and (for some) sympy before click runs; a Ctrl-C in that second
or so would print Python's KeyboardInterrupt traceback. Here, before anything heavy is imported,
SIGINT ends the process with click's own word for it; once the command's module is loaded the
usual handling is back (click says "Aborted!", and every write is atomic, so nothing half-written
stays). This module imports nothing of ours at its top.

Every command also settles pyarrow's question about pandas before its first conversion (see
`core.pandas_probe`): none of ours hands pyarrow a pandas object, and the import would cost
0.2-0.5 s of every command. And figures are drawn as files, with matplotlib's Agg backend.
When the command returns, what it made is frozen for the garbage collector: the process ends next.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
from typing import Any, NoReturn


def _interrupted_while_loading(signum: int, frame: Any) -> NoReturn:
    # Nothing has been written yet: there is nothing to clean up.
    sys.stderr.write("\nAborted!\n")
    sys.stderr.flush()
    os._exit(130)


def _load(module: str, name: str) -> Any:
    # Figures are files: matplotlib draws them with Agg whatever MPLBACKEND names (a notebook's
    # inline backend, set in a shell, made matplotlib's import fail with a 45-line traceback).
    os.environ["MPLBACKEND"] = "agg"
    previous = signal.signal(signal.SIGINT, _interrupted_while_loading)
    try:
        from mathbode.core.pandas_probe import answer_pyarrow_pandas_absent

        answer_pyarrow_pandas_absent()
        return getattr(importlib.import_module(f"mathbode.cli.{module}"), name)
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(command: Any, prog_name: str) -> Any:
    try:
        return command(prog_name=prog_name)
    finally:
        # Python's last collection at exit walks every object the command made (a FULL score's
        # arrays, tables and documents: 20-50 ms of its 0.6 s); frozen, they are left to the
        # process's end, which frees the memory at once.
        gc.freeze()


def mathbode() -> Any:
    return _run(_load("main", "mathbode"), "mathbode")


def _alias(sub: str) -> Any:
    return _run(_load(sub, "main"), f"mathbode-{sub}")


def build() -> Any:
    return _alias("build")


def push() -> Any:
    return _alias("push")


def validate() -> Any:
    return _alias("validate")


def prompts() -> Any:
    return _alias("prompts")


def baseline() -> Any:
    return _alias("baseline")


def score() -> Any:
    return _alias("score")


def run() -> Any:
    return _alias("run")


def convert() -> Any:
    return _alias("convert")
