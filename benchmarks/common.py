"""Helpers shared by the benchmark scripts: timing a command and writing a full submission."""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

KEY = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")


#: "Today's code" of issue #11: main before the columnar reader, scorer and validator. The
#: benchmarks run it beside the installed package, in the same run, so the ratio is measured.
BASELINE_COMMIT = "8976c2d"


def command(name: str) -> str:
    """The console script installed beside this Python."""
    return str(Path(sys.executable).with_name(name))


def cached_bytecode_env() -> dict[str, str]:
    """This environment without PYTHONDONTWRITEBYTECODE: a command timed with it set compiles every
    module of ours from source on every run (80-150 ms of a score or a build), which no installed
    package does (pip writes the bytecode at install), while numpy, pyarrow and sympy, installed,
    load theirs. The first (warm-up) run writes the cache."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def baseline_command(tmp: Path, name: str, commit: str = BASELINE_COMMIT) -> list[str]:
    """`name` (e.g. "validate") as it was at `commit`: that commit's rooms laid out as the
    `mathbode` package in `tmp` (its pyproject's package-dir, read from the commit), run with
    this Python and this venv's dependencies; PYTHONPATH puts it ahead of the installed package."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], capture_output=True, check=True).stdout
    src = tmp / f"baseline-{commit}"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src, filter="data")
    package_dirs = tomllib.loads((src / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    root = tmp / f"baseline-{commit}-path"
    for package, folder in sorted(package_dirs.items()):
        target = root.joinpath(*package.split("."))
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.symlink_to(src / folder, target_is_directory=True)
    code = f"import sys; sys.path.insert(0, {str(root)!r}); from mathbode.cli.{name} import main; main()"
    return [sys.executable, "-c", code]


def time_command(args: list[str], repeat: int, ok_codes: tuple[int, ...] = (0,)) -> tuple[float, list[float], float]:
    """(median seconds, all runs, peak RSS MB of the children so far)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(args, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode not in ok_codes:
            raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return statistics.median(times), times, peak


def peak_rss_mb(args: list[str], ok_codes: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(seconds, peak RSS MB) of one run of `args`, measured alone in a fresh parent process."""
    probe = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "code = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
        "print(code, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True).stdout
    code, seconds, peak = out.split()
    if int(code) not in ok_codes:
        raise SystemExit(f"{' '.join(args)} exited {code}")
    return float(seconds), float(peak)


def write_full_submission(dist: Path, out: Path, model: str = "exact") -> int:
    """Every row of the release, answered with the exact truth in the answer format."""
    import pyarrow.parquet as pq

    manifest = json.loads((dist / "MANIFEST.json").read_text())
    n = 0
    with open(out, "w") as f:
        for fam in manifest["families"].values():
            for rel in fam["files"]:
                for row in pq.read_table(dist / rel).select(list(KEY) + ["ground_truth"]).to_pylist():
                    truth = row.pop("ground_truth")
                    row["response"] = f"[answer_start] {truth:.6f} [answer_end]"
                    row["model"] = model
                    f.write(json.dumps(row) + "\n")
                    n += 1
    return n


def parse_args(doc: str | None) -> argparse.Namespace:
    """--repeat (runs per timing) and --dist (the release to use), shared by the scripts."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    return parser.parse_args()
