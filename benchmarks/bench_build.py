"""Benchmark the build: wall time of the command against the baseline commit's, generation per
family, peak memory, naive ratio.

    python benchmarks/bench_build.py [--repeat 5] [--naive-rows 2000]

Prints figures, not pass/fail. The command is timed turn about with the baseline commit's
(`common.BASELINE_COMMIT`, same Python and files) and with the import floor (`python -c "import
pandas, pyarrow.parquet, sympy"`, issue #41), median of `--repeat`, after a warm-up run of each,
all with Python's bytecode cache as installed code has it (`common.cached_bytecode_env`). The naive way computes
each row's answer with sympy `subs` + `evalf` on the family's solution; it is timed on a sample
of rows and scaled to the full row count (timing all 47,040 rows naively takes minutes).
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BASELINE_COMMIT, baseline_command, cached_bytecode_env

#: The import floor of issue #41: what any build must load before it computes a row.
IMPORT_FLOOR = [sys.executable, "-c", "import pandas, pyarrow.parquet, sympy"]


def command_wall_times(repeat: int, baseline: list[str]) -> tuple[list[float], list[float], list[float]]:
    """(this build's times, the baseline's, the import floor's), run turn about so a slow spell hits all three."""
    exe = [str(Path(sys.executable).with_name("mathbode-build"))]
    times: tuple[list[float], list[float], list[float]] = ([], [], [])
    env = cached_bytecode_env()
    for command in (exe, baseline):  # a warm-up each: the file cache, and the bytecode cache written
        out = Path(tempfile.mkdtemp()) / "dist"
        subprocess.run([*command, "--families", "all", "--out", str(out), "-q"], check=True, env=env)
        shutil.rmtree(out.parent)
    for _ in range(repeat):
        for which, command in enumerate((exe, baseline)):
            out = Path(tempfile.mkdtemp()) / "dist"
            start = time.perf_counter()
            subprocess.run([*command, "--families", "all", "--out", str(out), "-q"], check=True, env=env)
            times[which].append(time.perf_counter() - start)
            shutil.rmtree(out.parent)
        start = time.perf_counter()
        subprocess.run(IMPORT_FLOOR, check=True, env=env)
        times[2].append(time.perf_counter() - start)
    return times


def child_peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def naive_seconds_per_row(sample: int) -> float:
    import sympy as sp

    from mathbode.builder import FAMILIES
    from mathbode.builder.rows import family_table

    rows = []
    for family in FAMILIES.values():
        table = family_table(family).select(["question_id", "p_value"]).to_pylist()
        rows += [(family, r["question_id"], r["p_value"]) for r in table]
    random.Random(0).shuffle(rows)
    rows = rows[:sample]
    start = time.perf_counter()
    for family, q, p in rows:
        expr = family.solution.subs(family.variants[q].exact())
        float(expr.subs(family.parameter, sp.Rational(repr(p))).evalf(30))
    return (time.perf_counter() - start) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--naive-rows", type=int, default=2000)
    args = parser.parse_args()

    from mathbode.builder import FAMILIES
    from mathbode.builder.release import build_release

    with tempfile.TemporaryDirectory() as tmp:
        walls, base_walls, floors = command_wall_times(args.repeat, baseline_command(Path(tmp), "build"))
    peak = child_peak_rss_mb()

    def timed_build():
        out = Path(tempfile.mkdtemp()) / "dist"
        result = build_release(list(FAMILIES.values()), out)
        shutil.rmtree(out.parent)
        return result

    # Per family, the seconds its rows took in the worker that generated them (workers are forked
    # from this process; where they are, solutions and sines are computed in the worker and do
    # not stay cached here, so the second build is about as cold as the first; run in a single
    # process, the second build reuses them).

    cold = timed_build()
    warm = timed_build()
    rows = cold.manifest.num_rows
    generation = sum(warm.generation_seconds.values())

    print(
        f"mathbode-build --families all: median {statistics.median(walls):.3f} s over {args.repeat} runs "
        f"(min {min(walls):.3f}, max {max(walls):.3f})"
    )
    print(
        f"baseline {BASELINE_COMMIT}: median {statistics.median(base_walls):.3f} s; baseline / now = "
        f"{statistics.median(base_walls) / statistics.median(walls):.2f}x (target >= 1.4x)"
    )
    print(
        f"import floor (`import pandas, pyarrow.parquet, sympy`): median {statistics.median(floors):.3f} s; "
        f"build / floor = {statistics.median(walls) / statistics.median(floors):.2f}x (target <= 1.5x)"
    )
    print(f"peak RSS of the command: {peak:.0f} MB; target < 400 MB")
    print("generation inside the process, per family:      cold (first build)   warm (second build)")
    for name in cold.generation_seconds:
        print(
            f"  {name:<22} {cold.generation_seconds[name] * 1000:26.1f} ms "
            f"{warm.generation_seconds[name] * 1000:18.1f} ms"
        )
    cold_total = sum(cold.generation_seconds.values())
    print(
        f"  {'total':<22} {cold_total * 1000:26.1f} ms {generation * 1000:18.1f} ms "
        f"({generation / rows * 1e6:.1f} us/row warm)"
    )
    naive = naive_seconds_per_row(args.naive_rows)
    print(
        f"naive sympy subs/evalf: {naive * 1e6:.0f} us/row on {args.naive_rows:,} sampled rows "
        f"-> {naive * rows:.1f} s for {rows:,} rows"
    )
    print(
        f"ratio naive / builder generation: {naive * rows / generation:.0f}x warm, "
        f"{naive * rows / cold_total:.0f}x cold; target >= 50x"
    )


if __name__ == "__main__":
    main()
