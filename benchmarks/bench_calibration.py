"""Every verdict's and test's false-claim rate on null models with the presets' own row structure.

    python benchmarks/bench_calibration.py [--repetitions 200] [--only "NAME;..."] [--docs docs/calibration.md]

Builds a multi-tone release and a GAP release (MVP and, with `--questions`, PAIRED) into a
temporary folder, then reads each null model of `calibration.MODELS` on each structure
`--repetitions` times (see `calibration`) and prints one table: each claim's count, its rate, its
nominal rate and the bound a correct method stays under (nominal + 3 binomial standard errors).
`--docs FILE` writes the table between the markers of that file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Callable

from calibration import MODELS, NOMINAL, Prepared, Structure, binomial_bound, calibrate

from mathbode.hub.reference import resolve_reference
from mathbode.schema.reference import Reference

START, END = "<!-- calibration table: begin -->", "<!-- calibration table: end -->"

#: Which models each structure reads (the slow sequential scores carry the lag test's resampling,
#: so they read the nulls a lag claim is tested on: fresh noise and per-prompt errors).
PLAN: list[tuple[str, list[str]]] = [
    ("SMOKE, sequential", ["noise 5 %"]),
    ("MVP, sequential", ["noise 5 %"]),
    ("MVP, stateless", ["fixed per-prompt error"]),
    ("multi-tone, stateless", ["noise 1 %", "noise 5 %", "noise 20 %", "exact answers"]),
    ("multi-tone, stateless --dedupe", ["noise 5 %"]),
    ("multi-tone, sequential", ["noise 5 %", "fixed per-prompt error", "exact answers"]),
    ("GAP MVP, stateless", ["noise 5 %", "fixed per-prompt error"]),
    ("GAP MVP, stateless --dedupe", ["fixed per-prompt error"]),
    ("GAP PAIRED, stateless", ["noise 5 %", "fixed per-prompt error"]),
]


def _build(out: Path, *args: str) -> Path:
    subprocess.run(["mathbode-build", *args, "--out", str(out), "-q"], check=True)
    return out


def structures(tmp: Path) -> dict[str, Callable[[], Structure]]:
    """Each structure by name, made when asked (a release is built once, on first use)."""
    canonical = resolve_reference(None)

    @cache
    def release(*args: str) -> Reference:
        return resolve_reference(None, str(_build(tmp / f"r{abs(hash(args))}", *args)))

    def multitone() -> Reference:
        return release("--drives", "multitone")

    def gap() -> Reference:
        return release("--variants", "gap", "--families", "linear_solve,ratio_saturation")

    def paired() -> Reference:
        return release("--variants", "gap", "--questions", "30", "--families", "linear_solve,ratio_saturation")

    shapes: list[tuple[str, Callable[[], Reference], str, str, bool]] = [
        ("SMOKE, sequential", lambda: canonical, "SMOKE", "sequential", False),
        ("MVP, sequential", lambda: canonical, "MVP", "sequential", False),
        ("MVP, stateless", lambda: canonical, "MVP", "stateless", False),
        ("multi-tone, stateless", multitone, "ALL", "stateless", False),
        ("multi-tone, stateless --dedupe", multitone, "ALL", "stateless", True),
        ("multi-tone, sequential", multitone, "ALL", "sequential", False),
        ("GAP MVP, stateless", gap, "MVP", "stateless", False),
        ("GAP MVP, stateless --dedupe", gap, "MVP", "stateless", True),
        ("GAP PAIRED, stateless", paired, "PAIRED", "stateless", False),
    ]
    return {
        name: (
            lambda name=name, of=of, preset=preset, protocol=protocol, dedupe=dedupe: Structure(
                name, of(), preset, protocol, dedupe
            )
        )
        for name, of, preset, protocol, dedupe in shapes
    }


def table(results: list[dict]) -> list[str]:
    """The Markdown table: one row per (claim, structure, model)."""
    out = [
        "| claim | structure | null model | claimed | readings | rate | nominal | bound (nominal + 3 se) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: (list(NOMINAL).index(r["claim"]), r["structure"], r["model"])):
        nominal = NOMINAL[r["claim"]]
        bound = binomial_bound(nominal, r["readings"])
        out.append(
            f"| {r['claim']} | {r['structure']} | {r['model']} | {r['claimed']:,} | {r['readings']:,} | "
            f"{r['claimed'] / r['readings']:.4f} | {nominal:g} | {bound:.4f} |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--only", default="", help="structures to read (names separated by semicolons), default all")
    parser.add_argument("--json", type=Path, help="append each structure's counts to this JSON Lines file")
    parser.add_argument("--docs", type=Path, help="write the table between the calibration markers of this file")
    parser.add_argument(
        "--from-json", type=Path, nargs="*", default=[], help="make the table from these --json files (run nothing)"
    )
    args = parser.parse_args()
    if args.from_json:
        # Runs split across processes (one structure each) are put together here.
        rows = [json.loads(line) for path in args.from_json for line in path.read_text().splitlines() if line]
        write(table(rows), args.docs)
        return
    wanted = {n.strip() for n in args.only.split(";") if n.strip()}
    results: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        found = structures(Path(tmp))
        for name, models in PLAN:
            if (wanted and name not in wanted) or name not in found:
                continue
            start = time.perf_counter()
            prepared = Prepared.of(found[name]())
            counts = calibrate(prepared, {m: MODELS[m] for m in models}, args.repetitions)
            rows = [
                {
                    "structure": name,
                    "model": m,
                    "claim": c,
                    "claimed": k,
                    "readings": n,
                    "repetitions": args.repetitions,
                }
                for m, by_claim in counts.items()
                for c, (k, n) in by_claim.items()
                if n
            ]
            results += rows
            print(f"{name}: {prepared.requests:,} requests a run, {time.perf_counter() - start:.0f} s", file=sys.stderr)
            if args.json:
                with args.json.open("a") as stream:
                    stream.writelines(json.dumps(r) + "\n" for r in rows)
    write(table(results), args.docs)


def write(text: list[str], docs: Path | None) -> None:
    """Print the table, and write it between the markers of `docs`."""
    print("\n".join(text))
    if docs:
        doc = docs.read_text()
        head, rest = doc.split(START, 1)
        _, tail = rest.split(END, 1)
        docs.write_text(head + START + "\n" + "\n".join(text) + "\n" + END + tail)


if __name__ == "__main__":
    main()
