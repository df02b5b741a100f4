"""What --dedupe saves: requests and wall time with and without it, against a 200 ms stub.

    python benchmarks/bench_dedupe.py [--presets SMOKE,MVP,FULL] [--concurrency 32]

Each preset is run twice in the same process against the same stub (its own process): every row
asked (the paper's protocol), then each distinct prompt once. The two outputs must hold the same
answer on every row; the figures are the stub's count of completions and the runs' wall time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_run import STUB

from mathbode.builder.oracle import baseline_lines, canonical_reference
from mathbode.runner.config import RunConfig
from mathbode.runner.run import run
from mathbode.schema.layout import layout
from mathbode.schema.selection import select_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default="SMOKE,MVP,FULL")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    table = canonical_reference(list(layout().families)).table
    print(f"{args.latency * 1000:.0f} ms stub, concurrency {args.concurrency}")
    print("preset    rows  prompts  requests (all)  requests (dedupe)  wall all  wall dedupe  saving")
    for preset in args.presets.split(","):
        rows = select_rows(table, preset)
        with tempfile.TemporaryDirectory() as tmp:
            answers = Path(tmp) / "answers.json"
            answers.write_text(
                json.dumps({r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)})
            )
            stub = subprocess.Popen(
                [sys.executable, str(STUB), "--answers", str(answers), "--latency", str(args.latency)],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert stub.stdout is not None
            url = stub.stdout.readline().strip()
            try:
                results = {}
                for dedupe in (False, True):
                    config = RunConfig(model="truth", base_url=url, concurrency=args.concurrency, dedupe=dedupe)
                    out = Path(tmp) / f"{dedupe}.jsonl"
                    result = run(rows, config, out, {"benchmark": True}, overwrite=True)
                    assert not result.failed and result.answered == len(rows), result.counts()
                    answers_by_row = {}
                    for line in out.read_text().splitlines():
                        record = json.loads(line)
                        key = tuple(record[k] for k in layout().key)
                        answers_by_row[key] = record["response"]
                    results[dedupe] = (result.asked, result.seconds, answers_by_row)
            finally:
                stub.terminate()
        (asked_all, wall_all, a), (asked_d, wall_d, b) = results[False], results[True]
        assert a == b, "a deduplicated run must answer every row as the full run does"
        prompts = len({r["prompt"] for r in rows})
        print(
            f"{preset:<8} {len(rows):>5,} {prompts:>8,} {asked_all:>15,} {asked_d:>18,} {wall_all:>8.1f}s "
            f"{wall_d:>10.1f}s  {asked_all / asked_d:.1f}x requests, {wall_all / wall_d:.1f}x time"
        )


if __name__ == "__main__":
    main()
