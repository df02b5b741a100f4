"""Pace of the sequential protocol: SMOKE as 20 conversations against a stub with 200 ms latency.

    python benchmarks/bench_sequential.py [--latency 0.2]

A sweep's 64 turns are sequential by nature, so the floor is 64 x latency however many sweeps
run side by side. The comparison, measured in the same run against the same stub: 20 bare
chains of 64 requests each with the `openai` client (each request carrying its chain's growing
conversation, as the runner's do), all 20 in flight at once. The ratio is the runner's wall time
over the bare chains'.

The stub runs in its own process, so the two share the machine's cores but not a GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import openai
from bench_run import start_stub

from mathbode.builder.oracle import baseline_lines, canonical_reference
from mathbode.runner.config import RunConfig
from mathbode.runner.run import run
from mathbode.schema.layout import layout
from mathbode.schema.selection import select_rows


async def bare_chains(sweeps: list[list[dict]], url: str, history: int) -> float:
    """Each sweep one chain of requests in time order, every chain in flight at once."""
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)

    async def chain(rows: list[dict]) -> None:
        turns: list[dict[str, str]] = []
        for row in rows:
            messages = [*turns[-2 * history :], {"role": "user", "content": row["prompt"]}]
            reply = await client.chat.completions.create(model="anchor", messages=messages)
            turns += [messages[-1], {"role": "assistant", "content": reply.choices[0].message.content or ""}]

    start = time.perf_counter()
    await asyncio.gather(*(chain(rows) for rows in sweeps))
    seconds = time.perf_counter() - start
    await client.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    smoke = select_rows(canonical_reference(list(layout().families)).table, "SMOKE")
    sweeps: dict[tuple, list[dict]] = {}
    for row in smoke:
        sweeps.setdefault((row["family"], row["amplitude_scale"], row["frequency_cycles"]), []).append(row)
    chains = [sorted(rows, key=lambda r: r["time_step"]) for rows in sweeps.values()]
    with tempfile.TemporaryDirectory() as tmp:
        answers = Path(tmp) / "answers.json"
        answers.write_text(
            json.dumps({r["prompt"]: line["response"] for r, line in zip(smoke, baseline_lines(smoke), strict=True)})
        )
        stub, url = start_stub(answers, args.latency)
        try:
            config = RunConfig(model="anchor", base_url=url, concurrency=len(chains), protocol="sequential", history=8)
            result = run(smoke, config, Path(tmp) / "seq.jsonl", {"benchmark": True}, overwrite=True)
            assert not result.failed and result.answered == len(smoke), result.counts()
            floor = asyncio.run(bare_chains(chains, url, 8))
        finally:
            stub.terminate()
    ideal = 64 * args.latency
    print(
        f"SMOKE sequential, {len(chains)} sweeps in flight, {args.latency * 1000:.0f} ms stub: mathbode-run "
        f"{result.seconds:.2f} s; {len(chains)} bare chains of requests {floor:.2f} s; ratio "
        f"{result.seconds / floor:.3f} (ideal for both: {ideal:.1f} s)"
    )


if __name__ == "__main__":
    main()
