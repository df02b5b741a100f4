"""The same instrument on every split: models of known dynamics read the same gain and phase on
the canonical release and on fresh splits.

    python benchmarks/bench_splits.py [--seeds bench-1 bench-2 bench-3] [--preset FULL]

Prints a table, not pass/fail. On each release (the canonical one, then a fresh split per seed,
built here), through the real scorer:

- the symbolic baseline (the exact answers, truncated to six decimals): calibrated MB-Core;
- a fixed gain, stateless: every answer G * truth (G = 0.8): gain G and phase 0 at every frequency;
- a first-order low-pass, sequential with a run-in of 8 steps: y_t = y_(t-1) + a (truth_t -
  y_(t-1)), a = 0.5, the first run-in step answered exactly: gain |H| and phase arg H of
  H = a / (1 - (1 - a) e^(-i w)), w = 2 pi f / 64.

Both models are linear in the truth, so the truth's own distortion does not move the first
harmonic they answer with; what differs between releases is the answer format's truncation,
at most 1e-6 an answer, which moves a gain by at most about 1e-6 / (the truth's smallest swing),
the figure each release's manifest records per family (`truth.smallest_swing`).
"""

from __future__ import annotations

import argparse
import cmath
import math
import tempfile
from decimal import ROUND_DOWN, Decimal
from pathlib import Path

GAIN = 0.8
ALPHA = 0.5
RUN_IN = 8


def _text(value: float) -> str:
    return f"[answer_start] {Decimal(repr(value)).quantize(Decimal('0.000001'), rounding=ROUND_DOWN)} [answer_end]"


def _number(response: str) -> float:
    return float(response.split()[1])


def measure(folder: Path | None, preset: str) -> dict[str, float]:
    from mathbode.builder.oracle import baseline_lines, split_families
    from mathbode.hub.reference import resolve_reference
    from mathbode.integrations.records import headline, score_answers
    from mathbode.schema.keys import row_key
    from mathbode.schema.selection import key_fields, select_rows

    ref = resolve_reference("all", str(folder) if folder else None)
    families = list(ref.family_hashes)
    drawn = split_families(families, ref.split)
    rows = select_rows(ref.table, preset)
    exact = {row_key(r): _number(line["response"]) for r, line in zip(rows, baseline_lines(rows, drawn), strict=True)}
    truth = {row_key(r): r["ground_truth"] for r in ref.table.to_pylist()}
    out: dict[str, float] = {}

    baseline = [(key_fields(r), _text(exact[row_key(r)])) for r in rows]
    scored = score_answers(baseline, ref, families, "baseline", {})
    out["baseline_cal"] = scored.overall["mb_core_calibrated"]

    gain = [(key_fields(r), _text(GAIN * truth[row_key(r)])) for r in rows]
    numbers = headline(score_answers(gain, ref, families, "gain", {}))
    out.update({f"gain_{k}": v for k, v in numbers.items() if k.startswith(("gain_", "phase_deg_"))})

    # The low-pass, sweep by sweep in time order, after the sinusoid's own last RUN_IN steps.
    by_sweep: dict[tuple, list[dict]] = {}
    for r in rows:
        by_sweep.setdefault(tuple(v for k, v in key_fields(r).items() if k != "time_step"), []).append(r)
    lowpass = []
    for steps in by_sweep.values():
        steps.sort(key=lambda r: r["time_step"])
        values = [truth[row_key(r)] for r in steps]
        y = values[-RUN_IN]
        for v in values[-RUN_IN + 1 :]:
            y = y + ALPHA * (v - y)
        for r, v in zip(steps, values, strict=True):
            y = y + ALPHA * (v - y)
            lowpass.append((key_fields(r), _text(y)))
    conditions = {"protocol": "sequential", "history": "8", "run_in": str(RUN_IN)}
    numbers = headline(score_answers(lowpass, ref, families, "lowpass", conditions))
    out.update({f"lowpass_{k}": v for k, v in numbers.items() if k.startswith(("gain_", "phase_deg_"))})
    import json

    # The canonical release's facts are in the committed dist/ (the packaged rows have no manifest).
    where = folder or Path(__file__).resolve().parent.parent / "dist"
    manifest = json.loads((where / "MANIFEST.json").read_text())
    out["smallest_swing"] = min(f["truth"]["smallest_swing"] for f in manifest["families"].values())
    return out


def analytic(f: float) -> tuple[float, float]:
    w = 2 * math.pi * f / 64
    h = ALPHA / (1 - (1 - ALPHA) * cmath.exp(-1j * w))
    return abs(h), math.degrees(cmath.phase(h))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", default=["bench-1", "bench-2", "bench-3"])
    parser.add_argument("--preset", default="FULL")
    args = parser.parse_args()

    from mathbode.builder.families import resolve_families
    from mathbode.builder.release import build_release
    from mathbode.builder.splits import SplitPlan

    results = {"canonical": measure(None, args.preset)}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            folder = Path(tmp) / seed
            build_release(resolve_families("all"), folder, split=SplitPlan(seed))
            results[f"split {seed}"] = measure(folder, args.preset)
    names = [k for k in results["canonical"] if k.startswith(("gain_", "lowpass_"))]
    print(f"{args.preset}, {len(results) - 1} fresh splits; G = {GAIN}, low-pass a = {ALPHA}, run-in {RUN_IN}")
    header = ["release", "baseline cal. MB-Core", *names, "smallest swing"]
    print(" | ".join(header))
    for release, r in results.items():
        cells = [release, f"{r['baseline_cal']:.6f}", *(f"{r.get(n, float('nan')):.6f}" for n in names)]
        cells.append(f"{r.get('smallest_swing', float('nan')):.4g}")
        print(" | ".join(cells))
    print(
        "expected: "
        + ", ".join(
            [f"gain_gain_{f:g} {GAIN}" for f in (4, 8)]
            + [f"lowpass_gain_{f:g} {analytic(f)[0]:.6f}, lowpass_phase_deg_{f:g} {analytic(f)[1]:.4f}" for f in (4, 8)]
        )
    )
    spread = {
        n: max(r[n] for r in results.values() if n in r) - min(r[n] for r in results.values() if n in r) for n in names
    }
    print("largest spread across releases: " + ", ".join(f"{n} {v:.2e}" for n, v in spread.items()))


if __name__ == "__main__":
    main()
