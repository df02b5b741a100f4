"""Submissions written directly from the packaged rows, scored into report folders, for the site's tests."""

from __future__ import annotations

import random
from pathlib import Path

from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.main import mathbode
from mathbode.core.atomic import write_jsonl
from mathbode.schema.selection import select_rows


def _truth(line: dict) -> float:
    return float(line["response"].split()[1])  # "[answer_start] 8.000000 [answer_end]"


def _key(line: dict) -> dict:
    return {k: v for k, v in line.items() if k not in ("prediction", "response", "model")}


def noisy(lines: list[dict], share: float, seed: int) -> list[dict]:
    """The exact answers with a share of them off by up to 5 %, as a model's responses."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        value = _truth(line)
        if rng.random() < share:
            value *= 1 + rng.uniform(-0.05, 0.05)
        text = f"[answer_start] {value:.6f} [answer_end]"
        out.append({**_key(line), "response": text})
    return out


def submissions(reference, folder: Path) -> dict[str, Path]:
    """Ten submission files (labelled by their names): exact and noisy MVP_PLUS runs, one with no
    compliant answer, one of chirp and step rows only, one sequential (ranked apart)."""
    folder.mkdir(parents=True, exist_ok=True)
    mvp = list(baseline_lines(select_rows(reference.table, "MVP_PLUS")))  # 3 sweeps a cell: intervals
    files = {
        "exact": [{**_key(line), "response": line["response"]} for line in mvp],
        "never-compliant": [{**_key(line), "response": "I think it is 3"} for line in mvp],
        "chirp-step-only": [
            {**_key(line), "response": line["response"]}
            for line in baseline_lines(select_rows(reference.table, "CHIRP_STEP"))
        ],
        "sequential": [{**line, "meta": {"protocol": "sequential", "history": "all"}} for line in noisy(mvp, 0.1, 9)],
    }
    for n, share in enumerate((0.02, 0.05, 0.1, 0.2, 0.3, 0.5)):
        files[f"noisy-{n}"] = noisy(mvp, share, n)
    paths = {}
    for name, lines in files.items():
        paths[name] = folder / f"{name}.jsonl"
        write_jsonl(paths[name], lines)
    return paths


def score(paths: list[Path], out: Path, *extra: str) -> Path:
    result = CliRunner().invoke(mathbode, ["score", *map(str, paths), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


def site(folders: list[Path], out: Path) -> Path:
    result = CliRunner().invoke(mathbode, ["site", *map(str, folders), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out
