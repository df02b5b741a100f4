"""Do MathBode's 95 % intervals cover 95 %? A simulation with known population values.

    python benchmarks/bench_coverage.py [--sims 400] [--seed 1]

Each simulated submission is a table of per-sweep metrics (the INPUTS the headline scores are
made from) on the sweep grid of a preset, drawn around KNOWN population means:

- shapes: SMOKE (frequencies 4, 8; 2 sweeps per (family, frequency) cell), MVP (4, 8, 16; 2),
  FULL (1, 2, 4, 8, 16; 6) and a partial file (FULL with holes: mid-band cells of 3 to 6
  sweeps, others of 1 to 6; a cell of a single sweep at 16 cycles, and two of 2 sweeps, which
  MB-Plus depends on through the compliance: those families' MB-Plus get no interval, nor the
  overall MB-Plus);
- per sweep: gain ~ N(mu_g, sd_g) and phase error ~ N(mu_phi, sd_phi) (correlation 0.5 within a
  sweep; the calibrated gain and phase equal them), R2 ~ Beta with mean mu_r2, ACF(1) ~
  N(mu_acf, sd_acf), compliance 1 - Beta with mean 1 - mu_c, calibrated R2 and ACF(1) alike;
- three models: `typical` (gain 0.9 +- 0.08, phase -10 +- 8 deg), `near-exact` (gain 1 +- 0.01,
  phase 0 +- 1 deg, ACF 0.03 +- 0.05: every |.| of the score sits on its kink at 0) and `poor`
  (gain 0.72 +- 0.1, phase -40 +- 20 deg: the gain and phase terms at their clips), each mean
  shifted a little per family and frequency.

The population value of a cell is its population mean (mu_g, mu_phi); the population value of a
score is the scorer's own formula (`uncertainty.family_headline`) applied to the population
means of every cell (the overall: the mean of the five families' population scores). This is
the number a submission's score converges to as the sweeps per cell grow.

Measured per interval: coverage (share of the intervals given that hold the population value),
how many were given (of the simulated cases) and their mean width. A paired test of a model
with itself (two independent submissions drawn from one population) must reject at 5 % or less:
its row's coverage is 1 - the type-I error. The binomial standard error of a coverage near 0.95
from n intervals is sqrt(0.95 x 0.05 / n): 0.011 at n = 400 (cells and families pool several
intervals per simulation, which are independent across cells and families).
"""

from __future__ import annotations

import argparse
import math
import time
import zlib
from collections import defaultdict

import numpy as np

from mathbode.evaluator.results import HEADLINE
from mathbode.evaluator.scorer import uncertainty
from mathbode.evaluator.scorer.aggregate import PAPER_CONFIG, SWEEP_COLUMNS
from mathbode.evaluator.scorer.uncertainty import INPUTS, family_headline, paired_difference, score_intervals
from mathbode.evaluator.table import Table
from mathbode.schema.layout import layout

FAMILIES = tuple(layout().families)
LEVEL = 0.95
TESTED = ("mb_core", "mb_plus_calibrated")


def _partial() -> dict[str, dict[float, int]]:
    sizes = [
        {1.0: 6, 2.0: 3, 4.0: 3, 8.0: 4, 16.0: 4},
        {1.0: 5, 2.0: 6, 4.0: 4, 8.0: 3, 16.0: 6},
        {1.0: 3, 2.0: 2, 4.0: 6, 8.0: 5, 16.0: 3},
        {1.0: 4, 2.0: 5, 4.0: 3, 8.0: 3, 16.0: 2},
        {1.0: 3, 2.0: 4, 4.0: 5, 8.0: 6, 16.0: 1},
    ]
    return dict(zip(FAMILIES, sizes, strict=True))


SHAPES: dict[str, dict[str, dict[float, int]]] = {
    "SMOKE": {f: {4.0: 2, 8.0: 2} for f in FAMILIES},
    "MVP": {f: {4.0: 2, 8.0: 2, 16.0: 2} for f in FAMILIES},
    "FULL": {f: {x: 6 for x in (1.0, 2.0, 4.0, 8.0, 16.0)} for f in FAMILIES},
    "partial": _partial(),
}

#: name -> (gain mean, gain sd, phase mean, phase sd, R2 mean, ACF mean, ACF sd, compliance mean)
MODELS = {
    "typical": (0.90, 0.08, -10.0, 8.0, 0.85, 0.30, 0.10, 0.96),
    "near-exact": (1.00, 0.01, 0.0, 1.0, 0.99, 0.03, 0.05, 0.995),
    "poor": (0.72, 0.10, -40.0, 20.0, 0.50, 0.50, 0.15, 0.80),
}


def population(model: str, shape: dict[str, dict[float, int]]) -> dict[str, dict[float, np.ndarray]]:
    """family -> frequency -> the population mean of each of INPUTS (a (1, len(INPUTS)) row)."""
    g, _, phi, _, r2, acf, _, comp = MODELS[model]
    out: dict[str, dict[float, np.ndarray]] = {}
    for j, family in enumerate(shape):
        out[family] = {}
        for f in shape[family]:
            k = math.log2(f)
            # Small, fixed shifts per family and frequency (the near-exact gain and phase stay on the kink).
            shift = 0.0 if model == "near-exact" else 0.01 * (j - 2) - 0.005 * k
            mean = {
                "gain": g + shift,
                "phase_err_deg": phi * (1 + 0.05 * (j - 2)) - (0.0 if model == "near-exact" else k),
                "r2": r2 - 0.01 * k if model != "near-exact" else r2,
                "res_acf1": acf,
                "compliance": comp,
                "r2_cal": r2 - 0.05 if model != "near-exact" else r2,
                "acf1_cal": -acf / 2,
            }
            mean["gain_cal"], mean["phase_err_cal_deg"] = mean["gain"], mean["phase_err_deg"]
            out[family][f] = np.array([[mean[name] for name in INPUTS]])
    return out


def population_scores(means: dict[str, dict[float, np.ndarray]]) -> dict[str, dict[str, float]]:
    fam = {family: {n: float(v[0]) for n, v in family_headline(m, PAPER_CONFIG).items()} for family, m in means.items()}
    overall = {n: float(np.mean([s[n] for s in fam.values()])) for n in HEADLINE}
    return {"families": fam, "overall": overall}


def _beta(rng: np.random.Generator, mean: float, size: int, concentration: float = 40.0) -> np.ndarray:
    return rng.beta(mean * concentration, (1 - mean) * concentration, size)


def draw(
    rng: np.random.Generator, model: str, means: dict[str, dict[float, np.ndarray]], shape: dict[str, dict[float, int]]
) -> Table:
    """One submission's sweeps: per-sweep INPUTS around the population means."""
    _, sd_g, _, sd_phi, _, _, sd_acf, _ = MODELS[model]
    col = {name: i for i, name in enumerate(INPUTS)}
    rows: dict[str, list] = {c: [] for c in [*SWEEP_COLUMNS, *INPUTS]}
    for family, cells in means.items():
        for f, m in cells.items():
            n = shape[family][f]
            m = m[0]
            z1, z2 = rng.standard_normal(n), rng.standard_normal(n)
            gain = m[col["gain"]] + sd_g * z1
            phase = m[col["phase_err_deg"]] + sd_phi * (0.5 * z1 + math.sqrt(0.75) * z2)
            values = {
                "gain": gain,
                "phase_err_deg": phase,
                "r2": _beta(rng, m[col["r2"]], n),
                "res_acf1": m[col["res_acf1"]] + sd_acf * rng.standard_normal(n),
                "compliance": 1 - _beta(rng, 1 - m[col["compliance"]], n),
                "gain_cal": gain,
                "phase_err_cal_deg": phase,
                "r2_cal": _beta(rng, m[col["r2_cal"]], n),
                "acf1_cal": m[col["acf1_cal"]] + sd_acf * rng.standard_normal(n),
            }
            for name in INPUTS:
                rows[name] += values[name].tolist()
            rows["family"] += [family] * n
            rows["question_id"] += list(range(n))
            rows["amplitude_scale"] += [1.0] * n
            rows["frequency_cycles"] += [f] * n
            rows["phase_deg"] += [0.0] * n
    n = len(rows["family"])
    data = {c: np.array(v, dtype=object if c == "family" else float) for c, v in rows.items()}
    data["question_id"] = data["question_id"].astype(np.int64)
    return Table(data, length=n)


class Tally:
    def __init__(self) -> None:
        self.hit: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # covered, given, asked
        self.width: dict[tuple[str, str], float] = defaultdict(float)

    def add(self, config: str, name: str, bounds, truth: float) -> None:
        cell = self.hit[(config, name)]
        cell[2] += 1
        if bounds is None or not all(math.isfinite(b) for b in bounds) or not math.isfinite(truth):
            return
        cell[1] += 1
        cell[0] += bounds[0] <= truth <= bounds[1]
        self.width[(config, name)] += bounds[1] - bounds[0]

    def rows(self):
        for (config, name), (covered, given, asked) in self.hit.items():
            width = self.width[(config, name)] / given if given else math.nan
            yield config, name, covered, given, asked, width


def run(sims: int, seed: int, shapes: list[str] | None = None) -> Tally:
    tally = Tally()
    gain, phase = "gain", "phase_err_deg"
    for shape_name, shape in SHAPES.items():
        if shapes and shape_name not in shapes:
            continue
        for model in MODELS:
            config = f"{shape_name} {model}"
            means = population(model, shape)
            truth = population_scores(means)
            rng = np.random.default_rng([seed, zlib.crc32(config.encode())])
            for _ in range(sims):
                sweeps = draw(rng, model, means, shape)
                headline, bars = score_intervals(sweeps, PAPER_CONFIG, FAMILIES)
                for name in HEADLINE:
                    tally.add(config, f"overall {name}", headline["overall"][name], truth["overall"][name])
                    for family in FAMILIES:
                        tally.add(
                            config,
                            f"family {name}",
                            (headline["families"].get(family) or {}).get(name),
                            truth["families"][family][name],
                        )
                for row in bars.rows():
                    m = means[row["family"]][float(row["frequency_cycles"])][0]
                    tally.add(config, "cell gain", [row["gain_low"], row["gain_high"]], m[INPUTS.index(gain)])
                    tally.add(
                        config,
                        "cell phase",
                        [row["phase_err_low_deg"], row["phase_err_high_deg"]],
                        m[INPUTS.index(phase)],
                    )
                other = draw(rng, model, means, shape)
                for name in TESTED:
                    test = paired_difference(sweeps, other, PAPER_CONFIG, name)
                    # Coverage of 0 by the difference's interval, and the test's acceptance.
                    tally.add(config, f"paired {name} interval", test["interval"], 0.0)
                    p = test["p_value"]
                    tally.add(config, f"paired {name} p>=0.05", None if p is None else [0.05, 1.0], p)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400, help="simulated submissions per configuration")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shapes", nargs="*", choices=list(SHAPES), help="only these shapes (default: all)")
    parser.add_argument(
        "--min-sweeps",
        type=int,
        default=uncertainty.MIN_SWEEPS,
        help="give headline intervals from this many sweeps per cell (2: what SMOKE's would cover)",
    )
    args = parser.parse_args()
    uncertainty.MIN_SWEEPS = args.min_sweeps
    start = time.perf_counter()
    tally = run(args.sims, args.seed, args.shapes)
    print(f"{'configuration':<20} {'interval':<34} {'nominal':>7} {'coverage':>8} {'n':>6} {'given':>6} {'width':>9}")
    for config, name, covered, given, asked, width in tally.rows():
        coverage = f"{covered / given:.3f}" if given else "-"
        shown = "-" if name.endswith("p>=0.05") else f"{width:.4g}"
        print(f"{config:<20} {name:<34} {LEVEL:>7.2f} {coverage:>8} {given:>6} {given / asked:>6.0%} {shown:>9}")
    print(f"({args.sims} simulations per configuration, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
