"""Scoring a paired release against FULL, in one run (issue 50).

    python benchmarks/bench_gap_score.py [--repeat 3] [--dist dist]

Builds the paired release of the canonical five (`mathbode-build --variants gap`: 30 families),
answers its MVP rows exactly (`mathbode baseline`: 11,520 rows) and every row of the canonical
release (47,040: FULL's sinusoids with the chirps and steps), then scores each with its figures
and without. A figure is the CPU time (user + system, the scorer and its figure worker together)
of one `mathbode-score`, the median of `--repeat` runs; the ratio is GAP MVP's over FULL's, both
measured here, so a busy machine slows both alike. The issue's goal: GAP MVP with figures within
2x of FULL with figures. The ratios of the runs without figures and of what the figures add
(with minus without) follow it.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import tempfile
from pathlib import Path

from common import command, parse_args, write_full_submission


def cpu_seconds(args: list[str], repeat: int) -> float:
    """Median CPU seconds (user + system of the command and every process it waited for)."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(args, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode:
            raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
        times.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(times)


def main() -> None:
    args = parse_args(__doc__)
    score = command("mathbode-score")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        gap, gap_sub, full_sub = tmp_path / "gap", tmp_path / "gap-mvp.jsonl", tmp_path / "full.jsonl"
        subprocess.run([command("mathbode-build"), "--variants", "gap", "--out", str(gap), "-q"], check=True)
        baseline = [command("mathbode"), "baseline", "--reference", str(gap), "--preset", "MVP", "-o", str(gap_sub)]
        subprocess.run(baseline, check=True, capture_output=True)
        full_lines = write_full_submission(args.dist, full_sub)
        gap_lines = sum(1 for _ in gap_sub.open())
        runs = {
            "FULL, figures": [score, str(full_sub), "--out", str(tmp_path / "full")],
            "FULL, --no-plots": [score, str(full_sub), "--out", str(tmp_path / "full-bare"), "--no-plots"],
            "GAP MVP, figures": [score, str(gap_sub), "--reference", str(gap), "--out", str(tmp_path / "gap-report")],
            "GAP MVP, --no-plots": [
                *[score, str(gap_sub), "--reference", str(gap)],
                *["--out", str(tmp_path / "gap-bare"), "--no-plots"],
            ],
        }
        cpu_seconds(runs["FULL, --no-plots"], 1)  # warm the file cache and the bytecode
        seconds = {name: cpu_seconds(argv, args.repeat) for name, argv in runs.items()}
        print(
            f"CPU seconds of mathbode-score, median of {args.repeat} runs (FULL: {full_lines:,} rows; GAP MVP: "
            f"{gap_lines:,} rows of 30 families):"
        )
        for name, value in seconds.items():
            print(f"  {name:<22} {value:6.2f} s")
        ratio = seconds["GAP MVP, figures"] / seconds["FULL, figures"]
        print(f"GAP MVP / FULL, both with figures: {ratio:.2f}x (goal: at most 2x)")
        # Apart, the two halves of the ratio: scoring (with the paired release's check, which the
        # packaged canonical rows need not pass) and what the figures add (their worker too).
        bare = seconds["GAP MVP, --no-plots"] / seconds["FULL, --no-plots"]
        full, gap = (seconds[f"{kind}, figures"] - seconds[f"{kind}, --no-plots"] for kind in ("FULL", "GAP MVP"))
        print(f"Without figures: {bare:.2f}x; figures add FULL {full:.2f} s, GAP MVP {gap:.2f} s ({gap / full:.2f}x)")


if __name__ == "__main__":
    main()
