"""Benchmark `mathbode-score` against the issue's comparison, in one run (issue #11).

    python benchmarks/bench_score.py [--repeat 5] [--dist dist]

On a full 47,040-line submission of raw responses:
- the naive pandas implementation (`naive_pandas_score.py`: pandas JSON reader, merge, a
  parse per row, `groupby` + `lstsq` per sweep and chirp window, the same CSVs); its CSVs are
  checked against the tool's first, so both did the same job;
- `mathbode-score` with its figures (the default: six PNGs), and with `--no-plots`;
- the baseline commit's `mathbode-score` (`common.BASELINE_COMMIT`), same inputs;
- ten full submissions in one call, against one.
Each figure is the median of `--repeat` runs; ratios are of medians measured here, in one run.
Peak memory is the largest resident set of any one process of a run (the figure worker is a
second process beside the scorer: both are shown).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from common import baseline_command, command, parse_args, peak_rss_mb, time_command, write_full_submission

HERE = Path(__file__).resolve().parent
CSVS = ("sweeps.csv", "frequency_summary.csv", "chirp.csv", "step.csv")


def same_csvs(naive: Path, ours: Path) -> str:
    """Check the naive CSVs against the tool's: same rows, columns and labels, numbers to 1e-9.

    The residual ACF(1) of a sweep whose residual is rounding noise (RMS below 1e-12 of the truth's
    amplitude) is the correlation of rounding errors: it is skipped, and counted.
    """
    skipped = 0
    for name in CSVS:
        a, b = pd.read_csv(naive / name), pd.read_csv(ours / name)
        if set(a.columns) <= set(b.columns):
            b = b[list(a.columns)]  # the tool's own extra columns (its intervals) are not the naive's
        if list(a.columns) != list(b.columns) or a.shape != b.shape:
            raise SystemExit(f"{name}: the naive scorer's table differs in shape or columns")
        numbers = [c for c in a.columns if pd.api.types.is_numeric_dtype(b[c])]
        labels = [c for c in a.columns if c not in numbers]
        if not a[labels].fillna("").astype(str).equals(b[labels].fillna("").astype(str)):
            raise SystemExit(f"{name}: the naive scorer's rows differ")
        x, y = a[numbers].to_numpy(float), b[numbers].to_numpy(float)
        close = np.isclose(x, y, rtol=1e-9, atol=1e-9, equal_nan=True)
        # Angles near +-180 may land on either side of the cut (lstsq against a pseudo-inverse):
        # compared the short way round the circle.
        angles = np.array([c.endswith("_deg") and c != "phase_spread_deg" for c in numbers])[None, :]
        turn = np.abs((x - y + 180) % 360 - 180)
        close |= angles & (turn <= 1e-9 * np.maximum(1, np.abs(x)))
        if "res_acf1" in numbers and "res_rms_norm" in numbers:
            noise = (b["res_rms_norm"].to_numpy(float) < 1e-12)[:, None] & (np.array(numbers) == "res_acf1")[None, :]
            skipped += int((noise & ~close).sum())
            close |= noise
        if not close.all():
            row, col = np.argwhere(~close)[0]
            raise SystemExit(f"{name}: {numbers[col]} differs on row {row}: {x[row, col]!r} vs {y[row, col]!r}")
    return f"the naive scorer's CSVs equal the tool's (1e-9; {skipped} rounding-noise ACF(1) values skipped)"


def main() -> None:
    args = parse_args(__doc__)
    score = command("mathbode-score")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        sub = tmp_path / "full.jsonl"
        lines = write_full_submission(args.dist, sub)
        ours, naive_out = tmp_path / "ours", tmp_path / "naive"
        naive = [str(Path(score).with_name("python")), str(HERE / "naive_pandas_score.py")]
        naive += [str(sub), str(args.dist), str(naive_out)]
        baseline = baseline_command(tmp_path, "score")
        time_command([score, str(sub), "--out", str(ours)], 1)  # warm the file cache
        time_command(naive, 1)
        print(same_csvs(naive_out, ours))

        print(f"mathbode-score on {lines:,} raw responses, median of {args.repeat} runs each:")
        t_naive, _, _ = time_command(naive, args.repeat)
        t_plots, _, _ = time_command([score, str(sub), "--out", str(ours)], args.repeat)
        t_bare, _, _ = time_command([score, str(sub), "--out", str(ours), "--no-plots"], args.repeat)
        t_base, _, _ = time_command([*baseline, str(sub), "--out", str(tmp_path / "base")], args.repeat)
        base_bare = [*baseline, str(sub), "--out", str(tmp_path / "b2"), "--no-plots"]
        t_base_bare, _, _ = time_command(base_bare, args.repeat)
        print(f"  naive pandas (no figures, no intervals):  {t_naive:6.3f} s")
        print(f"  mathbode-score, six figures:             {t_plots:6.3f} s   naive / this = {t_naive / t_plots:.2f}x")
        print(f"  mathbode-score --no-plots:               {t_bare:6.3f} s   naive / this = {t_naive / t_bare:.2f}x")
        print(
            f"  baseline {baseline[2].split('baseline-')[1].split('-path')[0]}, six figures:    {t_base:6.3f} s"
            f"   baseline / this = {t_base / t_plots:.2f}x"
        )
        print(
            f"  baseline --no-plots:                     {t_base_bare:6.3f} s"
            f"   baseline / this = {t_base_bare / t_bare:.2f}x"
        )

        _, mem_naive = peak_rss_mb(naive)
        _, mem_plots = peak_rss_mb([score, str(sub), "--out", str(ours)])
        _, mem_bare = peak_rss_mb([score, str(sub), "--out", str(ours), "--no-plots"])
        print(
            f"peak RSS of one process: naive {mem_naive:.0f} MB; mathbode-score {mem_plots:.0f} MB with figures "
            f"(the larger of scorer and figure worker), {mem_bare:.0f} MB --no-plots"
        )

        subs = []
        for i in range(10):
            path = tmp_path / f"model{i}.jsonl"
            with open(sub) as src, open(path, "w") as dst:
                for line in src:
                    obj = json.loads(line)
                    obj["model"] = f"model-{i}"
                    dst.write(json.dumps(obj) + "\n")
            subs.append(str(path))
        t_one, _, _ = time_command([score, subs[0], "--out", str(tmp_path / "one")], max(1, args.repeat // 2))
        t_ten, _, _ = time_command([score, *subs, "--out", str(tmp_path / "ten")], max(1, args.repeat // 2))
        print(f"ten full submissions in one call: {t_ten:.3f} s = {t_ten / t_one:.2f} x one ({t_one:.3f} s)")


if __name__ == "__main__":
    main()
