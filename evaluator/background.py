"""Draw the Bode plot in a second process, so matplotlib's import overlaps with scoring.

Importing matplotlib takes about a quarter of a second and drawing the plot about as long;
scoring itself uses one core. A one-worker pool started before validation imports matplotlib
on the other core. The worker is *spawned*, never forked: forking a process that has started
threads (the runner's HTTP client, BLAS) is unsafe, and fork is unavailable on some platforms.
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
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self._pool.submit(_warm_up)
        return self

    def plot(self, results: list[Scored], out: Path) -> Future:
        assert self._pool is not None, "use BackgroundPlotter as a context manager"
        return self._pool.submit(_draw, results, out)

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
