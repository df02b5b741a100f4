"""`mathbode score` against the paper authors' own evaluation code (MathBode-Eval), in one run.

    python benchmarks/bench_authors.py --authors PATH [--repeat 5] [--dist dist] [--no-figures]

PATH is a checkout of github.com/charleslwang/MathBode-Eval (public; not part of this
repository, nothing of it is copied here). Its `summarize.py` loads the release from the Hub;
this script copies their `mathbode` package into a temporary folder and puts beside it a
stand-in `data.py` of ours that loads the committed release the way theirs does (the families
concatenated in order, `row_id` = position), so both read the same rows, offline.

On one full 47,040-row submission of exact raw responses (theirs as a parquet keyed by
`row_id`, ours as JSON Lines), the two commands alternate, `--repeat` times each:
- without figures: their `summarize` then `score` (two processes, as their README runs them)
  against `mathbode score --no-plots`;
- with figures: the same plus their `plot_panels` (eleven figures) against `mathbode score`
  with its six.
Ratios are of medians measured here, in this run (their time / ours: above 1, ours is faster).
Both programs run as installed code runs: with Python's bytecode cache (`common.cached_bytecode_env`:
a PYTHONDONTWRITEBYTECODE set in the caller's environment is dropped, so the warm-up run writes each
program's `__pycache__`, theirs in the temporary folder, ours in the package).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from common import cached_bytecode_env, command, write_full_submission

#: A stand-in for their `mathbode/data.py`: the same function, reading the release on disk.
DATA_PY = """
import pandas as pd

ALL_FAMILIES = {families!r}


def load_mathbode(families, max_rows=None):
    frames = []
    for fam in families:
        frame = pd.read_parquet({dist!r} + f"/data/{{fam}}.parquet")
        frame["family"] = fam
        frames.append(frame)
    full = pd.concat(frames, ignore_index=True).reset_index(drop=True)
    full["row_id"] = full.index
    return full.head(max_rows) if max_rows else full
"""


def their_package(authors: Path, dist: Path, families: list[str], tmp: Path) -> Path:
    root = tmp / "authors"
    shutil.copytree(authors / "mathbode", root / "mathbode")
    (root / "mathbode" / "data.py").write_text(DATA_PY.format(families=families, dist=str(dist.resolve())))
    return root


def their_predictions(submission: Path, dist: Path, families: list[str], out: Path) -> None:
    """The submission as their inference parquet: `row_id` (position in the release) and the raw response."""
    import json

    position = {}
    for fam in families:
        table = pq.read_table(dist / "data" / f"{fam}.parquet")
        keys = zip(*(table.column(c).to_pylist() for c in ("family", "question_id", "signal_type")), strict=True)
        rest = zip(*(table.column(c).to_pylist() for c in ("amplitude_scale", "frequency_cycles")), strict=True)
        tail = zip(*(table.column(c).to_pylist() for c in ("phase_deg", "time_step")), strict=True)
        for k, r, t in zip(keys, rest, tail, strict=True):
            position[(*k, *r, *t)] = len(position)
    ids, responses = [], []
    for line in submission.read_text().splitlines():
        row = json.loads(line)
        key = tuple(row[c] for c in ("family", "question_id", "signal_type", "amplitude_scale"))
        key += tuple(row[c] for c in ("frequency_cycles", "phase_deg", "time_step"))
        ids.append(position[key])
        responses.append(row["response"])
    pq.write_table(pa.table({"row_id": ids, "response": responses}), out)


def run(args: list[str], env_path: Path | None = None, cwd: Path | None = None) -> float:
    env = cached_bytecode_env()
    if env_path:
        env["PYTHONPATH"] = str(env_path)
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--authors", type=Path, required=True, help="a checkout of MathBode-Eval")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    parser.add_argument("--no-figures", action="store_true", help="only the comparison without figures (issue #41's)")
    args = parser.parse_args()
    if not (args.authors / "mathbode" / "summarize.py").is_file():
        raise SystemExit(f"{args.authors}: no mathbode/summarize.py; give a checkout of MathBode-Eval")
    import json

    families = list(json.loads((args.dist / "MANIFEST.json").read_text())["families"])
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        sub = tmp / "exact.jsonl"
        write_full_submission(args.dist, sub)
        preds = tmp / "exact.parquet"
        their_predictions(sub, args.dist, families, preds)
        root = their_package(args.authors, args.dist, families, tmp)
        py = sys.executable

        def theirs(figures: bool) -> float:
            summaries, scores = tmp / "summaries", tmp / "scores"
            shutil.rmtree(summaries, ignore_errors=True)
            t = run([py, "-m", "mathbode.summarize", "--inference", str(preds), "--outdir", str(summaries)], root, tmp)
            t += run(
                [py, "-m", "mathbode.score", "--summaries_dir", str(summaries), "--outdir", str(scores)], root, tmp
            )
            if figures:
                plots = [
                    py,
                    "-m",
                    "mathbode.plot_panels",
                    "--summaries_dir",
                    str(summaries),
                    "--outdir",
                    str(tmp / "p"),
                ]
                t += run(plots, root, tmp)
            return t

        def ours(figures: bool) -> float:
            out = tmp / "report"
            argv = [command("mathbode"), "score", str(sub), "--out", str(out)]
            t = run(argv + ([] if figures else ["--no-plots"]), cwd=tmp)
            shutil.rmtree(out)
            return t

        for figures in (False,) if args.no_figures else (False, True):
            a, b = [], []
            theirs(figures), ours(figures)  # warm the file cache and each program's first-run work
            for _ in range(args.repeat):
                a.append(theirs(figures))
                b.append(ours(figures))
            ta, tb = statistics.median(a), statistics.median(b)
            what = "with figures (theirs 11, ours 6)" if figures else "no figures"
            print(f"{what}: authors' code {ta:.2f} s, mathbode score {tb:.2f} s: {ta / tb:.2f}x")


if __name__ == "__main__":
    main()
