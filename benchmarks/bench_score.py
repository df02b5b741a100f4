"""Benchmark `mathbode-score` on a full 47,040-line submission of raw responses.

    python benchmarks/bench_score.py [--repeat 5] [--dist dist]

Prints the median wall time of the whole command (validation, canonical rows, parsing, fits,
report and figures, with the default 1,000 bootstrap resamples), then without the figures, then
without the bootstrap: the difference of the last two is the cost of the intervals (the issue's
budget: at most 2 s for 1,000 resamples).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from common import command, parse_args, time_command, write_full_submission


def main() -> None:
    args = parse_args(__doc__)
    score = command("mathbode-score")
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "full.jsonl"
        lines = write_full_submission(args.dist, sub)
        out = Path(tmp) / "report"
        med, runs, peak = time_command([score, str(sub), "--out", str(out)], args.repeat)
        print(
            f"mathbode-score, {lines:,} raw responses: median {med:.3f} s over {args.repeat} runs "
            f"(min {min(runs):.3f}, max {max(runs):.3f}); target <= 3 s"
        )
        med, runs, _ = time_command([score, str(sub), "--out", str(out), "--no-plots"], args.repeat)
        print(f"  the same with --no-plots: median {med:.3f} s")
        bare, _, _ = time_command([score, str(sub), "--out", str(out), "--no-plots", "--bootstrap", "0"], args.repeat)
        print(f"  --no-plots --bootstrap 0: median {bare:.3f} s; the 1,000 resamples cost {med - bare:+.3f} s")
        print(f"peak RSS: {peak:.0f} MB")


if __name__ == "__main__":
    main()
