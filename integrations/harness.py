"""MathBode in lm-evaluation-harness: the functions its task files call (see `lm_eval_tasks/`).

Nothing here imports lm-eval: the task files name these functions, and lm-eval calls them. The
dataset is the preset's rows (from the packaged canonical rows, a release folder or the Hub:
`--metadata '{"reference": "hub:ORG/NAME"}'`); `process_results` keeps each answer with its row's
key, and each Bode metric's aggregation scores all of them at once through MathBode's scorer.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

import datasets

from mathbode.hub.reference import resolve_reference

from .records import (
    REFERENCE_COLUMN,
    SPLIT_COLUMN,
    headline,
    is_exact,
    key_of,
    request_config,
    score_answers,
    task_rows,
)

#: The Bode numbers each task reports, beside `exact` (share of exact answers). lm-eval marks each
#: metric higher- or lower-is-better, and a gain's ideal is 1 and a signed phase's 0, so the
#: mid-band gain and phase are reported as their distances from the ideal (lower is better).
BODE_METRICS = (
    "mb_core",
    "mb_plus",
    "mb_core_calibrated",
    "mb_plus_calibrated",
    "compliance",
    "gain_err_4",
    "phase_abs_deg_4",
    "gain_err_8",
    "phase_abs_deg_8",
)


def load_rows(
    preset: str = "SMOKE", families: str = "all", reference: str | None = None, **_: Any
) -> datasets.DatasetDict:
    """The preset's rows as lm-eval's `test` split (`custom_dataset`); other metadata is ignored."""
    found = task_rows(preset, families, reference)
    # Every row says its reference (the aggregations see only answers) and its split (for convert).
    split = found.reference.split_hash
    rows = [{**row, REFERENCE_COLUMN: reference or "", SPLIT_COLUMN: split} for row in found.rows]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """`exact` (1 when the answer is the truth truncated to six decimals) and, for each Bode
    metric, the answer with its row's key (scored together by the aggregation)."""
    response = results[0] if results and isinstance(results[0], str) else None
    truth = doc.get("ground_truth")  # absent on a prompts-only release: nothing is judged here
    exact = float(is_exact(response, float(truth))) if truth is not None else math.nan
    item = (json.dumps(key_of(doc)), response, doc.get(REFERENCE_COLUMN) or "")
    return {"exact": exact, **{name: item for name in BODE_METRICS}}


@lru_cache(maxsize=4)
def _scores(items: tuple[tuple[str, str | None, str], ...]) -> dict[str, float]:
    """The Bode numbers of a task's answers (cached: every Bode metric aggregates the same answers)."""
    answers = [(json.loads(key), response) for key, response, _ in items]
    reference = items[0][2] or None if items else None
    families = list(dict.fromkeys(fields["family"] for fields, _ in answers))
    found = resolve_reference(families, reference)
    if found.prompts_only:  # no truth to score against: the log is converted and scored by the keeper
        return {}
    scored = score_answers(answers, found, families, "lm-eval", request_config().conditions())
    numbers = headline(scored)
    for f in ("4", "8"):
        if f"gain_{f}" in numbers:
            numbers[f"gain_err_{f}"] = abs(numbers[f"gain_{f}"] - 1)
        if f"phase_deg_{f}" in numbers:
            numbers[f"phase_abs_deg_{f}"] = abs(numbers[f"phase_deg_{f}"])
    return numbers


def _aggregate(name: str, items: list[tuple[str, str | None, str]]) -> float:
    return _scores(tuple(map(tuple, items))).get(name, math.nan)  # items may come back as lists


def mb_core(items: list[Any]) -> float:
    return _aggregate("mb_core", items)


def mb_plus(items: list[Any]) -> float:
    return _aggregate("mb_plus", items)


def mb_core_calibrated(items: list[Any]) -> float:
    return _aggregate("mb_core_calibrated", items)


def mb_plus_calibrated(items: list[Any]) -> float:
    return _aggregate("mb_plus_calibrated", items)


def compliance(items: list[Any]) -> float:
    return _aggregate("compliance", items)


def gain_err_4(items: list[Any]) -> float:
    """|mean gain at 4 cycles - 1| (lower is better)."""
    return _aggregate("gain_err_4", items)


def phase_abs_deg_4(items: list[Any]) -> float:
    """|mean phase error at 4 cycles| in degrees (lower is better)."""
    return _aggregate("phase_abs_deg_4", items)


def gain_err_8(items: list[Any]) -> float:
    """|mean gain at 8 cycles - 1| (lower is better)."""
    return _aggregate("gain_err_8", items)


def phase_abs_deg_8(items: list[Any]) -> float:
    """|mean phase error at 8 cycles| in degrees (lower is better)."""
    return _aggregate("phase_abs_deg_8", items)
