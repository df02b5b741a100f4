"""Benchmark `mathbode site`: 50 FULL submissions build in seconds and stay small (issue #35).

    python benchmarks/bench_site.py [--repeat 3] [--dist dist] [--submissions 50]

Writes FULL submissions (every row of the release: 43,200 sinusoid and 3,840 chirp and step rows
each), the exact answers with a different share of them off by up to 5 % in each, scores them in
one `mathbode score --no-plots --bootstrap 200` call, then builds the site from the report folder
`--repeat` times. Prints the build time (median), the site's size (in all, plotly.js, the
downloads, the pages), the pages' count and the largest page, and `mathbode report`'s time.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import command, peak_rss_mb, time_command, write_full_submission


def noisy_copy(exact: Path, out: Path, share: float, seed: int) -> None:
    """The exact submission with `share` of its answers off by up to 5 %."""
    rng = random.Random(seed)
    with open(exact) as src, open(out, "w") as dst:
        for text in src:
            line = json.loads(text)
            if rng.random() < share:
                value = float(line["response"].split()[1]) * (1 + rng.uniform(-0.05, 0.05))
                line["response"] = f"[answer_start] {value:.6f} [answer_end]"
            line["model"] = out.stem
            dst.write(json.dumps(line) + "\n")


def size(folder: Path, pattern: str = "*") -> int:
    return sum(p.stat().st_size for p in folder.rglob(pattern) if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    parser.add_argument("--submissions", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        exact = tmp / "exact.jsonl"
        rows = write_full_submission(args.dist, exact)
        files = [exact]
        for n in range(1, args.submissions):
            files.append(tmp / f"model-{n:02d}.jsonl")
            noisy_copy(exact, files[-1], share=n / (2 * args.submissions), seed=n)
        report = tmp / "report"
        start = time.perf_counter()
        subprocess.run(
            [command("mathbode"), "score", *map(str, files), "--out", str(report), "--no-plots", "--bootstrap", "200"],
            check=True,
            capture_output=True,
        )
        scored = time.perf_counter() - start
        site = tmp / "site"
        build = [command("mathbode"), "site", str(report), "-o", str(site)]
        seconds, runs, _ = time_command(build, args.repeat)
        _, peak = peak_rss_mb(build)  # alone: the children's peak so far includes the scoring's
        rerender, _, _ = time_command([command("mathbode"), "report", str(report)], 1)
        total = size(site)
        plotly = (site / "assets" / "plotly.min.js").stat().st_size
        downloads = size(site / "data")
        pages = sorted(site.rglob("*.html"), key=lambda p: p.stat().st_size)
        html = sum(p.stat().st_size for p in pages)
        print(f"{args.submissions} FULL submissions ({rows:,} rows each), scored in one call in {scored:.1f} s")
        print(
            f"mathbode site: {seconds:.2f} s (median of {len(runs)}: {', '.join(f'{t:.2f}' for t in runs)}), "
            f"peak RSS {peak:.0f} MB"
        )
        print(f"site: {total / 1e6:.1f} MB in {sum(1 for p in site.rglob('*') if p.is_file()):,} files")
        print(f"  plotly.js (once): {plotly / 1e6:.2f} MB")
        print(
            f"  downloads (each submission's results.json, scores.json and CSVs): {downloads / 1e6:.1f} MB, "
            f"{downloads / args.submissions / 1e6:.2f} MB a submission"
        )
        print(
            f"  pages: {len(pages)}, {html / 1e6:.1f} MB; the largest {pages[-1].relative_to(site)} "
            f"{pages[-1].stat().st_size / 1e3:.0f} kB (its sweeps' answers embedded)"
        )
        index = (site / "index.html").stat().st_size
        page = (site / "submissions" / "exact.html").stat().st_size
        print(f"  the leaderboard {index / 1e3:.0f} kB; a submission page {page / 1e3:.0f} kB")
        print(f"mathbode report (re-render {args.submissions} results documents, no figures): {rerender:.2f} s")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
