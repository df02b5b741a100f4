"""Multi-tone drives (issue 42): do the BLA's 95 % intervals cover 95 %?

    python benchmarks/bench_multitone.py [--sims 2000] [--seed 1]

**Coverage.** Each simulated family is the release's multisine grid (3 questions x 4 realizations x
2 periods, the plan of schema/layout.json) with exact answers c + A_q u_r(t) (A_q = 1, 1.1, 1.2:
questions of different swing) and answers from a KNOWN linear system plus errors, read by the
scorer's own `measure_family`. The population BLA is the system's frequency response at each
excited line, so an interval covers when it holds that value. Systems:

- `per-prompt`: gain 1 plus an error per prompt, N(0, 0.05 A_q) drawn once per row and repeated in
  both periods (a deterministic model asked the same prompt twice answers the same);
- `delay+noise`: 0.9 x a delay of 2 steps plus an error per row and period, N(0, 0.05 A_q);
- `low-pass+per-prompt`: the first-order low-pass a = 0.3 plus per-prompt errors N(0, 0.1 A_q).

Gain and phase intervals at the 6 excited lines: 6 of each a simulation, independent across
simulations; the binomial standard error of a coverage near 0.95 from n intervals is
sqrt(0.95 x 0.05 / n) (0.0020 at 2,000 simulations of 6 lines; lines of one simulation are nearly
independent: each line's error is its own DFT bin of white errors).

What a multi-tone run costs is not measured here: docs/multitone.md's cost table is made from
`mathbode run --dry-run` by tests/test_cost_table.py, so it follows the runner's defaults.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from mathbode.evaluator.scorer.multitone import MultitoneSweep, measure_family
from mathbode.runner.systems import parse_system
from mathbode.schema.drives import MultitonePlan
from mathbode.schema.layout import layout

PLAN: MultitonePlan = layout("multitone").multitone
QUESTIONS = 3
SYSTEMS = ("per-prompt", "delay+noise", "low-pass+per-prompt")


def unit_multisine(plan: MultitonePlan, realization: int) -> np.ndarray:
    """The plan's unit multisine in floats (the builder's is exact decimal arithmetic)."""
    t = np.arange(plan.time_steps)
    amplitude = 1 / math.sqrt(len(plan.excited_lines))
    return sum(
        amplitude * np.cos(2 * np.pi * (k * t / plan.time_steps + float(plan.phase_turns(realization, k))))
        for k in plan.excited_lines
    )


def response(system: str, cycles: np.ndarray, T: int) -> np.ndarray:
    """The population BLA of `system` at `cycles` (the stand-in's delay-2 and anchor-0.3, `runner.systems`)."""
    linear = {"per-prompt": "truth", "delay+noise": "delay-2", "low-pass+per-prompt": "anchor-0.3"}[system]
    gain = 0.9 if system == "delay+noise" else 1.0
    return np.array([gain * parse_system(linear).response(float(f), T) for f in np.asarray(cycles)])


def _apply(system: str, x: np.ndarray, T: int) -> np.ndarray:
    """The system's steady-state output for a periodic input (on the DFT lines: exact for a period)."""
    H = response(system, np.arange(T // 2 + 1), T)
    H[0] = 1.0 if system != "delay+noise" else 0.9  # its static gain (the level passes as the lines do)
    return np.fft.irfft(H * np.fft.rfft(x), T)


def simulate(system: str, rng: np.random.Generator, plan: MultitonePlan = PLAN) -> list[MultitoneSweep]:
    """One family's answered multisine sweeps under `system`."""
    T = plan.time_steps
    sweeps = []
    for q in range(QUESTIONS):
        A = 1 + 0.1 * q
        for r in range(plan.realizations):
            x = 8 + A * unit_multisine(plan, r)
            clean = _apply(system, x - 8, T) + 8
            per_prompt = rng.normal(0, {"per-prompt": 0.05, "low-pass+per-prompt": 0.1}.get(system, 0) * A, T)
            for period in range(plan.periods):
                per_row = rng.normal(0, 0.05 * A, T) if system == "delay+noise" else 0
                sweeps.append(MultitoneSweep("multisine", q, period, r, x, clean + per_prompt + per_row))
    return sweeps


def coverage(system: str, sims: int, seed: int, plan: MultitonePlan = PLAN) -> dict[str, float]:
    """Share of the gain and of the phase intervals (all excited lines) that hold the population BLA."""
    rng = np.random.default_rng([seed, SYSTEMS.index(system)])
    truth = response(system, np.array(plan.excited_lines), plan.time_steps)
    gain_hits = phase_hits = total = 0
    widths = []
    for _ in range(sims):
        m = measure_family(simulate(system, rng, plan), plan, "sequential")
        assert m is not None
        for iv, g in zip(m["bla_intervals"], truth, strict=True):
            gain_hits += iv["gain_low"] <= abs(g) <= iv["gain_high"]
            want = math.degrees(np.angle(g))
            phase_hits += iv["phase_low_deg"] <= want <= iv["phase_high_deg"]
            widths.append(iv["phase_high_deg"] - iv["phase_low_deg"])
            total += 1
    return {"gain": gain_hits / total, "phase": phase_hits / total, "n": total, "phase_width": float(np.mean(widths))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"BLA interval coverage (nominal 0.95), {args.sims} simulations x {len(PLAN.excited_lines)} lines each:")
    se = math.sqrt(0.95 * 0.05 / (args.sims * len(PLAN.excited_lines)))
    for system in SYSTEMS:
        c = coverage(system, args.sims, args.seed)
        print(
            f"  {system:22s} gain {c['gain']:.4f}  phase {c['phase']:.4f}  (n = {c['n']:,}, se {se:.4f}; "
            f"mean phase interval {c['phase_width']:.2f} deg)"
        )
    print(f"  ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
