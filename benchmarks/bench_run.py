"""Benchmark `mathbode-run`'s own overhead against a stub OpenAI-compatible server on 127.0.0.1.

    python benchmarks/bench_run.py [--rows 6000]

1. Throughput against a stub that answers at once, at concurrency 32 (target: >= 500 answers/s),
   and, in the same run, a plain sequential loop with the `openai` client (what a user would write
   by hand), so the speed claim is a ratio.
2. A SMOKE run (1,280 rows) against a stub with 200 ms latency at concurrency 64 (target: < 10 s;
   the ideal is 1,280 / 64 x 0.2 s = 4 s).

The stub runs in its own process, so the two share the machine's cores but not a GIL.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openai

from mathbode.builder.oracle import baseline_lines, canonical_reference
from mathbode.runner.config import RunConfig
from mathbode.runner.run import run
from mathbode.schema.layout import layout
from mathbode.schema.selection import select_rows

STUB = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "stub_openai.py"


def start_stub(answers: Path, latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(STUB), "--answers", str(answers), "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def timed_run(rows: list[dict], url: str, concurrency: int, out: Path) -> tuple[float, int]:
    config = RunConfig(model="truth", base_url=url, concurrency=concurrency)
    result = run(rows, config, out, {"benchmark": True}, overwrite=True)
    assert not result.failed and result.compliant == result.answered == len(rows), result.counts()
    return result.seconds, result.answered


def sequential_loop(rows: list[dict], url: str) -> float:
    client = openai.OpenAI(base_url=url, api_key="not-needed", max_retries=0)
    start = time.perf_counter()
    for row in rows:
        client.chat.completions.create(model="truth", messages=[{"role": "user", "content": row["prompt"]}])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=6000, help="rows for the throughput figure")
    args = parser.parse_args()
    everything = select_rows(canonical_reference(list(layout().families)).table, "ALL")
    rows = everything[: args.rows]
    smoke = select_rows(canonical_reference(list(layout().families)).table, "SMOKE")
    with tempfile.TemporaryDirectory() as tmp:
        answers = Path(tmp) / "answers.json"
        answers.write_text(
            json.dumps(
                {
                    r["prompt"]: line["response"]
                    for r, line in zip(rows + smoke, baseline_lines(rows + smoke), strict=True)
                }
            )
        )

        stub, url = start_stub(answers, 0.0)
        try:
            seconds, n = timed_run(rows, url, 32, Path(tmp) / "fast.jsonl")
            loop_rows = rows[: min(len(rows), 1000)]
            loop = sequential_loop(loop_rows, url)
        finally:
            stub.terminate()
        rate, loop_rate = n / seconds, len(loop_rows) / loop
        print(
            f"instant stub, concurrency 32: {n:,} answers in {seconds:.2f} s = {rate:,.0f} answers/s "
            f"(target >= 500); sequential openai loop: {loop_rate:,.0f} answers/s; ratio {rate / loop_rate:.1f}x"
        )

        stub, url = start_stub(answers, 0.2)
        try:
            seconds, n = timed_run(smoke, url, 64, Path(tmp) / "slow.jsonl")
        finally:
            stub.terminate()
        ideal = len(smoke) / 64 * 0.2
        print(
            f"200 ms stub, SMOKE at concurrency 64: {n:,} answers in {seconds:.2f} s (target < 10 s; "
            f"ideal {ideal:.1f} s; overhead ratio {seconds / ideal:.2f})"
        )


if __name__ == "__main__":
    main()
