"""The Bode plot worker: imports matplotlib at once, then draws the results it reads from stdin (pickled)."""

from __future__ import annotations

import gc
import pickle
import sys

from .plots import WORKER_SHARE, bode_plot


def main() -> None:
    # The process ends when its figures are written, and its memory goes with it: nothing is worth
    # collecting (a figure is tens of thousands of objects in reference cycles), and what it made
    # is frozen so the collection at exit does not walk it either.
    gc.disable()
    results, out, options = pickle.load(sys.stdin.buffer)
    bode_plot(results, out, WORKER_SHARE, options)
    gc.freeze()


if __name__ == "__main__":
    main()
