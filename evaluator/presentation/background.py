"""Draw the Bode plot in a second process, so matplotlib's import overlaps with scoring.

Importing matplotlib takes about a quarter of a second and drawing the plot about as long;
scoring itself uses one core. A worker process (`python -m mathbode.evaluator.presentation.plot_worker`) is
started before validation and imports matplotlib on the other core; the results are sent to it
when they are ready. It is a fresh interpreter, neither forked (unsafe once threads exist, and
unavailable on some platforms) nor spawned by multiprocessing (which re-imports the caller's main
module). If the worker fails for any reason, the plot is drawn in this process instead.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Callable

from ..results import Results
from .files import BODE, DEFAULT_FIGURES, FigureOptions


def draw_here(results: list[Results], out: Path, share: str = "all", options: FigureOptions = DEFAULT_FIGURES) -> Path:
    """Draw the figures in this process: all of them, or the share the worker does not draw."""
    from .plots import FIGURE_STEMS, WORKER_SHARE, bode_plot  # matplotlib loads only when a plot is drawn

    only = None if share == "all" else tuple(n for n in FIGURE_STEMS if n not in WORKER_SHARE)
    return bode_plot(results, out, only, options)


class BackgroundPlotter:
    """`with BackgroundPlotter() as plotter: ... wait = plotter.plot(results, folder); ...; wait()`."""

    def __init__(self) -> None:
        self._worker: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "BackgroundPlotter":
        try:
            self._worker = subprocess.Popen(
                [sys.executable, "-m", "mathbode.evaluator.presentation.plot_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            self._worker = None
        return self

    def plot(self, results: list[Results], out: Path, options: FigureOptions = DEFAULT_FIGURES) -> Callable[[], Path]:
        """Hand the results to the worker; the returned call waits for the PNG (drawn here if the worker failed)."""
        worker, self._worker = self._worker, None
        sent = False
        if worker is not None and worker.stdin is not None:
            try:
                worker.stdin.write(pickle.dumps((results, out, options)))
                worker.stdin.close()
                sent = True
            except OSError:
                worker.kill()

        def wait() -> Path:
            if worker is not None and sent:
                draw_here(results, out, share="rest", options=options)  # on this core, while the worker draws
                try:
                    worker.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    worker.kill()
                if worker.returncode == 0:
                    return out / options.file(BODE)
            return draw_here(results, out, options=options)

        return wait

    def __exit__(self, *exc: object) -> None:
        if self._worker is not None:  # not used: stop it
            self._worker.kill()
            self._worker.wait()
            self._worker = None
