"""The Bode plot worker: imports matplotlib at once, then draws the results it reads from stdin (pickled)."""

from __future__ import annotations

import pickle
import sys

from .plots import WORKER_SHARE, bode_plot


def main() -> None:
    results, out, options = pickle.load(sys.stdin.buffer)
    bode_plot(results, out, WORKER_SHARE, options)


if __name__ == "__main__":
    main()
