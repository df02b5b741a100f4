"""Benchmark `mathbode-validate` on the full dist/ and on a full 47,040-line submission (issue #11).

    python benchmarks/bench_validate.py [--repeat 5] [--dist dist]

Each command is timed beside the baseline commit's (`common.BASELINE_COMMIT`, run from the same
Python on the same files), alternating runs, median of `--repeat`; the ratio is baseline / now.
The submission's check is also timed beside `python -c "import pandas, pyarrow.parquet, sympy"`
(what loading the usual tools costs before reading a line; issue #25 asks for 0.8x of it or less).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import BASELINE_COMMIT, baseline_command, command, parse_args, peak_rss_mb, write_full_submission


def alternate(now: list[str], then: list[str], repeat: int) -> tuple[float, float]:
    """Median seconds of `now` and of `then`, run turn about so a slow spell hits both."""
    import subprocess

    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(repeat):
        for which, args in enumerate((now, then)):
            start = time.perf_counter()
            proc = subprocess.run(args, capture_output=True)
            times[which].append(time.perf_counter() - start)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout.decode()}")
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> None:
    args = parse_args(__doc__)
    validate = command("mathbode-validate")
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "full.jsonl"
        lines = write_full_submission(args.dist, sub)
        baseline = baseline_command(Path(tmp), "validate")
        size = sub.stat().st_size / 1e6
        print(f"median of {args.repeat} runs each, baseline = {BASELINE_COMMIT} (before #11's columnar paths):")
        targets = ((f"{args.dist}/ (release)", args.dist), (f"submission ({lines:,} lines, {size:.1f} MB)", sub))
        for label, target in targets:
            now, then = alternate([validate, str(target)], [*baseline, str(target)], args.repeat)
            print(
                f"  mathbode-validate {label}: {now:.3f} s; baseline {then:.3f} s; baseline / now = {then / now:.2f}x"
            )
        imports = [sys.executable, "-c", "import pandas, pyarrow.parquet, sympy"]
        now, then = alternate([validate, str(sub)], imports, args.repeat)
        print(
            f"  mathbode-validate submission {now:.3f} s; importing pandas, pyarrow.parquet, sympy {then:.3f} s: ",
            end="",
        )
        print(f"{now / then:.2f}x of the imports")
        for label, target in (("release", args.dist), ("submission", sub)):
            _, peak = peak_rss_mb([validate, str(target)])
            _, base_peak = peak_rss_mb([*baseline, str(target)])
            print(f"  peak RSS, {label}: {peak:.0f} MB (baseline {base_peak:.0f} MB)")


if __name__ == "__main__":
    main()
