"""What a stateless phase can show: a model with no dynamics at all, scored on FULL.

    python benchmarks/memoryless_phase.py [--noise 0.05]

The model answers truth x (1 + noise x z(prompt)), z a fixed standard normal number drawn from
the prompt's own hash (the draw of the stand-in's `fixed-E`, `mathbode.runner.systems`; here
truncated to six decimals): its answer depends on the prompt alone, the same prompt always gets the
same answer, and it never sees an earlier step. It is a memoryless map, so it cannot lag. The
script prints, per frequency, the mean |phase error| of its sweeps (the "phase lag" the
stateless protocol would report) and, for the sweeps that start at phase 0 (all of SMOKE and
MVP), the distinct phase errors found, rounded to 1e-6 degrees.
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict

import numpy as np

from mathbode.builder.oracle import canonical_reference
from mathbode.evaluator.scorer.metrics import sweep_metrics
from mathbode.runner.systems import prompt_normal as z
from mathbode.schema.layout import layout
from mathbode.schema.parsing import truncate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--noise", type=float, default=0.05)
    args = parser.parse_args()
    lay = layout()
    rows = [r for r in canonical_reference(list(lay.families)).table.to_pylist() if r["signal_type"] == "sinusoid"]
    full = {(0, 0.5), (0, 1.0)}  # FULL: the first K = 2 (question, amplitude) pairs of each family
    sweeps: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if (r["question_id"], r["amplitude_scale"]) in full:
            sweeps[(r["family"], r["amplitude_scale"], r["frequency_cycles"], r["phase_deg"])].append(r)
    by_frequency: dict[float, list[float]] = defaultdict(list)
    at_zero: dict[float, set[float]] = defaultdict(set)
    for (_, _, f, phase), steps in sweeps.items():
        steps.sort(key=lambda r: r["time_step"])
        truth = np.array([r["ground_truth"] for r in steps])
        model = np.array([truncate(r["ground_truth"] * (1 + args.noise * z(r["prompt"]))) for r in steps])
        err = sweep_metrics(truth, model, f, lay.time_steps)["phase_err_deg"]
        if math.isfinite(err):
            by_frequency[f].append(abs(err))
            if phase == 0:
                at_zero[f].add(round(abs(err), 6))
    print(f"memoryless model, truth x (1 + {args.noise:g} z(prompt)), FULL ({len(sweeps)} sweeps):")
    print("cycles  mean |phase error| (deg)  sweeps   |phase error| of the phase-0 sweeps (distinct values)")
    for f in sorted(by_frequency):
        zero = ", ".join(f"{v:g}" for v in sorted(at_zero[f]))
        print(f"{f:>6g}  {np.mean(by_frequency[f]):>24.2f}  {len(by_frequency[f]):>6}   {zero}")


if __name__ == "__main__":
    main()
