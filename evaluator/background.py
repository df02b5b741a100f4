"""Draw the Bode plot in a second process, so matplotlib's import overlaps with scoring.

Importing matplotlib takes about a quarter of a second and drawing the plot about as long;
scoring itself uses one core. Starting a one-worker process pool before validation lets the
import happen on the other core. Where `fork` is not available the plot is drawn in-process.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from .scoring import Scored


def _warm_up() -> None:
    import mathbode.evaluator.plots  # noqa: F401 - loads matplotlib in the worker


def _draw(results: list[Scored], out: Path) -> Path:
    from .plots import bode_plot

    return bode_plot(results, out)


class BackgroundPlotter:
    """`with BackgroundPlotter() as plotter: ... plotter.plot(results, folder).result()`."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> "BackgroundPlotter":
        if "fork" in multiprocessing.get_all_start_methods():
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
            self._pool.submit(_warm_up)
        return self

    def plot(self, results: list[Scored], out: Path) -> Future:
        if self._pool is None:
            done: Future = Future()
            done.set_result(_draw(results, out))
            return done
        return self._pool.submit(_draw, results, out)

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
