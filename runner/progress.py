"""Progress of a run: a tqdm bar on a terminal, plain periodic lines otherwise (logs, CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm


class Progress:
    """Counts answers, failures and compliant answers; shows rate and ETA."""

    def __init__(
        self, total: int, already: int = 0, stream: TextIO | None = None, interval: float = 10.0, note: str = ""
    ) -> None:
        """`total` rows to ask in this run; `already`, the rows the output held when it resumed;
        `note`, said once as the run starts (after the server answered)."""
        self.total = total
        self.already = already
        self.done = self.failed = self.compliant = 0
        self._stream = stream or sys.stderr
        if note:
            print(note, file=self._stream, flush=True)
        self._interval = interval
        self._start = self._last = time.monotonic()
        self._bar = (
            tqdm(
                total=total,
                file=self._stream,
                unit="row",
                dynamic_ncols=True,
                smoothing=0.1,
                desc=f"{already:,} answered before; this run" if already else None,
            )
            if self._stream.isatty()
            else None
        )
        if already and self._bar is None:
            print(
                f"resuming: {already:,} rows were answered before; {total:,} to ask in this run",
                file=self._stream,
                flush=True,
            )

    def _postfix(self) -> str:
        answered = self.done - self.failed
        share = f"{self.compliant / answered:.0%}" if answered else "n/a"
        return f"failed {self.failed}, compliant {share}"

    def update(self, failed: bool, compliant: bool) -> None:
        self.done += 1
        self.failed += failed
        self.compliant += compliant
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(self._postfix(), refresh=False)
            return
        now = time.monotonic()
        if now - self._last >= self._interval or self.done == self.total:
            self._last = now
            self._line(now)

    def _line(self, now: float) -> None:
        elapsed = now - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = f"{(self.total - self.done) / rate:.0f} s" if rate > 0 else "?"
        before = f" (and {self.already:,} answered before)" if self.already else ""
        print(
            f"{self.done:,}/{self.total:,} rows{before} ({rate:.1f}/s, ETA {eta}), {self._postfix()}",
            file=self._stream,
            flush=True,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
