"""Benchmark the open families: build time per row by answer kind, the extended build, the check,
and the canonical build against the session's baseline commit.

    python benchmarks/bench_families.py [--repeat 5] [--baseline ea053b6]

Prints figures, not pass/fail:

- generation per row (in this process, warm: each family built once before it is timed) of the
  canonical families (rational, exact integer arithmetic) beside MathBode-Extended's rational,
  algebraic and transcendental families (certified ball arithmetic), and the naive way for the
  irrational kinds (sympy `evalf` at 30 digits per distinct prompt: not certified, and slower);
- `mathbode family check` per family (its proofs over the range and its checks of the rows);
- `mathbode-build --families extended` and `--families all`, wall time of the command;
- the canonical build against the baseline commit's, turn about, median of `--repeat` (the
  baseline is laid out from git by `common.baseline_command`, same Python and dependencies).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

from common import baseline_command, command

#: Main when this round began: the canonical build before the registry was opened.
SESSION_BASELINE = "ea053b6"


def build_walls(commands: dict[str, list[str]], families: str, repeat: int) -> dict[str, list[float]]:
    """Wall seconds of each command building `families`, run turn about so a slow spell hits all."""
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        for label, argv in commands.items():
            out = Path(tempfile.mkdtemp()) / "dist"
            start = time.perf_counter()
            subprocess.run([*argv, "--families", families, "--out", str(out), "-q"], check=True)
            times[label].append(time.perf_counter() - start)
            shutil.rmtree(out.parent)
    return times


def generation_per_row(repeat: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Seconds per row of `family_columns`, per family (best of `repeat`, after a warm-up build),
    and each family's answer kind."""
    from mathbode.builder.families import EXTENDED, FAMILIES
    from mathbode.builder.rows import family_columns
    from mathbode.schema.layout import layout

    rows = layout().rows_per_family
    seconds: dict[str, list[float]] = {}
    kinds: dict[str, str] = {}
    for name, family in {**FAMILIES, **EXTENDED}.items():
        family_columns(family)  # warm: solutions, compiled answers and the drive's sines cached
        runs = []
        for _ in range(repeat):
            family._cache.clear()  # the per-question answer (compiled ball) is made again each run
            start = time.perf_counter()
            family_columns(family)
            runs.append((time.perf_counter() - start) / rows)
        seconds[name] = runs
        kinds[name] = ("canonical " if name in FAMILIES else "extended ") + family.kind
    return seconds, kinds


def irrational_work(sample: int) -> list[tuple[object, int, float]]:
    """(family, question, rendered p) of up to `sample` distinct prompts of the extended families
    whose answers are not rational: the same work for both ways of evaluating them."""
    from mathbode.builder.families import EXTENDED
    from mathbode.builder.rows import family_table

    work = []
    for family in EXTENDED.values():
        if family.kind == "rational":
            continue
        table = family_table(family).select(["question_id", "p_value"]).to_pylist()
        pairs = sorted({(r["question_id"], r["p_value"]) for r in table})
        work += [(family, q, p) for q, p in pairs[: max(1, sample // len(EXTENDED))]]
    return work


def naive_per_prompt(work: list) -> float:
    """Seconds per distinct prompt of sympy's evalf (30 digits): not certified."""
    import sympy as sp

    start = time.perf_counter()
    for family, q, p in work:
        expr = family.question_answer(q)
        float(expr.subs(family.parameter, sp.Rational(repr(p))).evalf(30))
    return (time.perf_counter() - start) / len(work)


def certified_per_prompt(work: list) -> float:
    """Seconds per distinct prompt of the certified evaluation (the answers compiled beforehand)."""
    answers = [(family.answer_function(q), Fraction(repr(p))) for family, q, p in work]
    start = time.perf_counter()
    for answer, p in answers:
        answer.float_at(p)
    return (time.perf_counter() - start) / len(answers)


def check_seconds() -> dict[str, float]:
    from mathbode.builder.families import EXTENDED, FAMILIES
    from mathbode.builder.families.check import check_family

    out = {}
    for name, family in {**FAMILIES, **EXTENDED}.items():
        start = time.perf_counter()
        report = check_family(family)
        out[name] = time.perf_counter() - start
        if not report.passed:
            raise SystemExit(report.format_text())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default=SESSION_BASELINE)
    parser.add_argument("--sample", type=int, default=800, help="distinct prompts timed for naive vs certified")
    args = parser.parse_args()

    seconds, kinds = generation_per_row(args.repeat)
    by_kind: dict[str, list[float]] = defaultdict(list)
    print("generation per row, in this process (best of repeats):")
    for name, runs in seconds.items():
        by_kind[kinds[name]].append(min(runs))
        print(f"  {name:<28} {kinds[name]:<26} {min(runs) * 1e6:8.2f} us/row")
    rational = statistics.mean(by_kind["canonical rational"])
    print("by kind (mean over families):")
    for kind, values in sorted(by_kind.items()):
        mean = statistics.mean(values)
        print(f"  {kind:<26} {mean * 1e6:8.2f} us/row  ({mean / rational:.2f}x the canonical rational path)")

    work = irrational_work(args.sample)
    naive, certified = naive_per_prompt(work), certified_per_prompt(work)
    print(
        f"one irrational answer, per distinct prompt: certified {certified * 1e6:.1f} us, sympy evalf(30) "
        f"{naive * 1e6:.1f} us (uncertified); evalf / certified = {naive / certified:.1f}x"
    )

    checks = check_seconds()
    print(
        f"mathbode family check: {statistics.mean(checks.values()):.2f} s per family on average "
        f"(max {max(checks.values()):.2f} s, {max(checks, key=checks.get)}); all {len(checks)} pass"
    )

    with tempfile.TemporaryDirectory() as tmp:
        then_build = baseline_command(Path(tmp), "build", args.baseline)
        commands = {"now": [command("mathbode-build")], args.baseline: then_build}
        canonical = build_walls(commands, "all", args.repeat)
        extended = build_walls({"now": commands["now"]}, "extended", args.repeat)
    now, then = statistics.median(canonical["now"]), statistics.median(canonical[args.baseline])
    print(
        f"mathbode-build --families all: median {now:.3f} s now, {then:.3f} s at {args.baseline}: "
        f"baseline / now = {then / now:.2f}x"
    )
    print(
        f"mathbode-build --families extended: median {statistics.median(extended['now']):.3f} s over {args.repeat} "
        f"runs (min {min(extended['now']):.3f}, max {max(extended['now']):.3f})"
    )


if __name__ == "__main__":
    sys.exit(main())
