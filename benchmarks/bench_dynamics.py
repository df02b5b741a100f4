"""Analytic systems through the real `mathbode run --protocol sequential` and `mathbode score`.

The stand-in model server (`python -m mathbode.runner.stub_model`, here in this process) applies a
known system to the truths of its conversation: a pure delay of k steps (`delay-k`: the truth of
the prompt k turns back) or a first-order low-pass (`anchor-a`: y_t = y_{t-1} + a (truth_t -
y_{t-1}), y_{t-1} its own previous answer). The README's headline figure is these runs' scores. Each is run
cold (--run-in 0) and with run-ins, and the measured mid-band gain, phase and MB-Core are printed
beside their analytic values: the comparison lives here, in the formulas of `analytic`.

    python benchmarks/bench_dynamics.py [--preset SMOKE|MVP|FULL] [--families linear_solve,...]

It prints the requests each run-in costs, which is how the documented default was chosen (docs/running.md).
"""

from __future__ import annotations

import argparse
import cmath
import json
import math
import tempfile
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.evaluator.scorer.angles import angle_mean
from mathbode.evaluator.scorer.scoring import score
from mathbode.hub.reference import resolve_reference
from mathbode.runner.stub_model import StubModel, running, systems_of
from mathbode.runner.systems import parse_system
from mathbode.schema import layout, read_submission
from mathbode.schema.selection import select_rows

T = layout().time_steps


def analytic(model: str, f: float) -> complex:
    """The model's frequency response at f cycles per 64 steps (the stand-in's own definition)."""
    return parse_system(model).response(f, T)


def analytic_core(model: str, mid=(4.0, 8.0)) -> float:
    g = sum(abs(abs(analytic(model, f)) - 1) for f in mid) / len(mid)
    p = sum(abs(math.degrees(cmath.phase(analytic(model, f)))) for f in mid) / len(mid)
    return max(0.0, 1 - 0.5 * min(1.0, g / 0.25) - 0.5 * min(1.0, p / 45))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="SMOKE")
    parser.add_argument("--families", default="all")
    parser.add_argument("--models", default="anchor-0.2,anchor-0.5,delay-2,delay-4")
    parser.add_argument("--run-ins", default="0,4,8,16")
    parser.add_argument("--history", default="all")
    args = parser.parse_args()
    families = layout().families if args.families == "all" else tuple(args.families.split(","))
    ref = resolve_reference(list(families), None)
    asked = len(select_rows(ref.table, args.preset))
    print(f"preset {args.preset}, families {','.join(families)}, history {args.history}; {asked:,} scored rows")
    print(
        f"{'model':<11} {'run-in':>6} {'requests':>9}  {'gain 4':>7} {'gain 8':>7} "
        f"{'phase 4':>8} {'phase 8':>8} {'MB-Core':>8}"
    )
    with running(StubModel(systems_of(None))) as url:
        measure(url, args, families, ref)


def measure(url: str, args: argparse.Namespace, families: tuple[str, ...], ref) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            h4, h8 = analytic(model, 4), analytic(model, 8)
            print(
                f"{model:<11} {'exact':>6} {'':>9}  {abs(h4):7.4f} {abs(h8):7.4f} "
                f"{math.degrees(cmath.phase(h4)):8.2f} {math.degrees(cmath.phase(h8)):8.2f} {analytic_core(model):8.4f}"
            )
            for k in [int(x) for x in args.run_ins.split(",")]:
                out = Path(tmp) / f"{model}-{k}.jsonl"
                argv = ["--base-url", url, "--model", model, "-o", str(out), "--preset", args.preset]
                argv += ["--families", ",".join(families), "--protocol", "sequential", "--history", args.history]
                argv += ["--run-in", str(k), "--concurrency", "16"]
                result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
                if result.exit_code:
                    raise SystemExit(result.output)
                record = json.loads(out.with_name(out.stem + ".run.json").read_text())
                sub = read_submission(out)
                r = score(sub.predictions, ref, model, sub.model, conditions=sub.conditions)
                g = [
                    sum(c["gain"] for c in r.summary.rows() if c["frequency_cycles"] == f) / len(families)
                    for f in (4.0, 8.0)
                ]
                p = [
                    float(
                        angle_mean(
                            np.array([c["phase_err_deg"] for c in r.summary.rows() if c["frequency_cycles"] == f])
                        )
                    )
                    for f in (4.0, 8.0)
                ]
                print(
                    f"{'':<11} {k:>6} {record['counts']['asked']:>9,}  {g[0]:7.4f} {g[1]:7.4f} {p[0]:8.2f} {p[1]:8.2f} "
                    f"{r.overall['mb_core']:8.4f}"
                )


if __name__ == "__main__":
    main()
