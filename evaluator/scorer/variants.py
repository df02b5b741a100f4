"""GAP's paired comparison: each variant family against its original, on the same rows.

A paired release (`mathbode-build --variants gap`) holds each original family and its variants
(surface renamings DL, DLC, DLM, GS; kernel rewrites), every variant row keyed like its
original's row. A variant's sweep and its original's sweep with the same key (question,
amplitude, frequency, phase) are one pair, and so are their rows step by step, so every
difference here is paired:

- MB-Core and calibrated MB-Core: variant minus original on the shared sweeps, with the paired
  t interval of `uncertainty.paired_difference` (the difference expanded sweep by sweep, no
  interval with the reason where a cell is too small);
- the mid-band |G - 1| and phase error: variant minus original, the means over the shared mid-band sweeps;
- the exact-row share of each (the answer is the truth truncated to six decimals), and GAP's
  exact McNemar test on the discordant units (a binomial test of one side's count against half
  the discordant pairs: exact at any count, as GAP reports it).

Evidence is counted in units, never in rows: rows that ask the same pair of prompts are one unit
(copies under --dedupe, repeat measurements otherwise), and with two problems or more (a release
built with `--questions N`) the unit is the problem. A distinct prompt is exact when most of its
rows are (strictly more than half); a problem when most of its distinct prompts are. The MB-Core
interval is over problems too when there are two or more (each problem's sweeps of one frequency
taken as one); within one problem it is over sweeps and says so. `mcnemar_p_holm` adjusts the
McNemar p-values over every pair of the submission (Holm).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from mathbode.schema.keys import SweepKey

from ..table import Table
from .aggregate import ScoreConfig
from .dynamics import dynamics_difference
from .uncertainty import by_problem, holm, paired_difference, paired_differences, shared_sweeps

KERNEL = "kernel"


class Paired(NamedTuple):
    """One family's shared sweeps with one variant, as its paired MB-Core difference counted them."""

    variant: Table
    original: Table
    unit: str
    n_units: int


def exact_mcnemar(only_original: int, only_variant: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of `only_variant` of the discordant rows at 1/2."""
    discordant = only_original + only_variant
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(only_variant, discordant, 0.5).pvalue)


def _as_family(sweeps: Table, family: str, renamed: str) -> Table:
    """The sweeps of `family`, their family column set to `renamed` (so they pair with its sweeps)."""
    out = sweeps.take(np.flatnonzero(sweeps["family"] == family))
    out["family"] = [renamed] * len(out)
    return out


def _mid_band_mean(sweeps: Table, column: str, config: ScoreConfig, fold: float | None) -> float:
    mid = sweeps.take(np.flatnonzero(np.isin(sweeps["frequency_cycles"], config.mid_band)))
    if mid.empty:
        return math.nan
    values = np.asarray(mid[column], dtype=float)
    values = np.abs(values - fold) if fold is not None else values
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else math.nan


#: The unit of evidence with two problems or more, and within one.
PROBLEM, PROMPT = "problem", "distinct prompt"


def majority(groups: np.ndarray, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct value of `groups` (in sorted order): whether strictly more than half of its
    `exact` hold, and the position of its first member."""
    values, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(values))
    hits = np.bincount(inverse, weights=exact.astype(float), minlength=len(values))
    return 2 * hits > counts, first


def unit_counts(original: np.ndarray, variant: np.ndarray, prompts: np.ndarray, problems: np.ndarray) -> dict[str, Any]:
    """Exactness counted in units: `original`, `variant` (bool), `prompts` (the unit key of each
    paired row: one value per distinct pair of prompts) and `problems` (each row's problem), flat."""
    prompt_original, first = majority(prompts, original)
    prompt_variant, _ = majority(prompts, variant)
    prompt_problem = problems[first]
    distinct = np.unique(prompt_problem)
    if len(distinct) >= 2:
        unit = PROBLEM
        mine, _ = majority(prompt_problem, prompt_variant)
        theirs, _ = majority(prompt_problem, prompt_original)
    else:
        unit, mine, theirs = PROMPT, prompt_variant, prompt_original
    only_original, only_variant = int((theirs & ~mine).sum()), int((mine & ~theirs).sum())
    return {
        "unit": unit,
        "n_units": int(len(mine)),
        "problems": [int(q) for q in distinct],
        "distinct_prompts": int(len(prompt_original)),
        "units_exact_original": int(theirs.sum()),
        "units_exact_variant": int(mine.sum()),
        "only_original_exact": only_original,
        "only_variant_exact": only_variant,
        "mcnemar_p": exact_mcnemar(only_original, only_variant),
    }


def _pairs(variant: str, original: str, scoped: Sequence[SweepKey]) -> tuple[np.ndarray, np.ndarray]:
    """The positions in `scoped` of the variant's and the original's sweeps that pair, aligned."""
    position = {sweep: i for i, sweep in enumerate(scoped)}
    mine, theirs = [], []
    for i, sweep in enumerate(scoped):
        if sweep.family != variant:
            continue
        j = position.get(sweep._replace(family=original))
        if j is not None:
            mine.append(i)
            theirs.append(j)
    return np.asarray(mine, dtype=np.int64), np.asarray(theirs, dtype=np.int64)


def variant_scores(
    sweeps: Table,
    scoped: Sequence[SweepKey],
    hits: np.ndarray,
    variants: Mapping[str, tuple[str, str]],
    config: ScoreConfig,
    sequential: bool = False,
    prompts: np.ndarray | None = None,
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, Any]]]:
    """(`variants.<original>.<kind>`, `variants_pooled.<kind>`) of scores.json: each variant answered
    beside its original, paired on the same rows, and each kind pooled over its families
    (`pooled_difference`). `variants`: variant family -> (original, kind); `hits`: per scoped
    sweep, per step, whether the answer is exact; `prompts`: the same shape, each row's prompt
    number, so that rows asking one prompt count once). A sequential run adds the difference in
    the identified dynamics (a stateless model cannot lag, so there is none to compare)."""
    if prompts is None:  # every row its own prompt
        prompts = np.arange(hits.size, dtype=np.int64).reshape(hits.shape)
    questions = np.array([s.question_id for s in scoped], dtype=np.int64)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    # Each kind's paired sweeps, family by family, as its per-family differences counted them.
    by_kind: dict[str, list[Paired]] = {}
    answered = set(sweeps["family"].tolist()) if not sweeps.empty else set()
    for name, (original, kind) in variants.items():
        if name not in answered or original not in answered:
            continue
        mine = _as_family(sweeps, name, original)
        theirs = _as_family(sweeps, original, original)
        at_mine, at_theirs = _pairs(name, original, scoped)
        variant_hits, original_hits = hits[at_mine], hits[at_theirs]
        # One unit per distinct pair of prompts: the original's and the variant's prompt numbers.
        pair_key = prompts[at_theirs].astype(np.int64) * (int(prompts.max(initial=0)) + 1) + prompts[at_mine]
        problems = np.repeat(questions[at_theirs], hits.shape[1] if hits.ndim == 2 else 0)
        units = unit_counts(original_hits.ravel(), variant_hits.ravel(), pair_key.ravel(), problems)
        shared_mine, shared_theirs = shared_sweeps(mine, theirs)
        over_problems = units["unit"] == PROBLEM
        if over_problems:
            shared_mine, shared_theirs = by_problem(shared_mine), by_problem(shared_theirs)
        tests = paired_differences(shared_mine, shared_theirs, config, ("mb_core", "mb_core_calibrated"))
        core, calibrated = tests["mb_core"], tests["mb_core_calibrated"]
        rows = int(original_hits.size)
        entry: dict[str, Any] = {
            "family": name,
            "kind": KERNEL if kind == KERNEL else "surface",
            "shared_sweeps": len(at_mine),
            "mb_core_diff": core["difference"],
            "mb_core_diff_interval": core["interval"],
            "mb_core_diff_unit": PROBLEM if over_problems else "sweep",
            "mb_core_diff_n_units": len({int(q) for q in shared_theirs["question_id"]})
            if over_problems
            else core["shared_sweeps"],
        }
        by_kind.setdefault(kind, []).append(
            Paired(shared_mine, shared_theirs, entry["mb_core_diff_unit"], entry["mb_core_diff_n_units"])
        )
        if core["interval"] is None:
            entry["mb_core_diff_no_interval"] = core.get("no_interval") or "no sweep is shared"
        entry |= {
            "mb_core_calibrated_diff": calibrated["difference"],
            "mb_core_calibrated_diff_interval": calibrated["interval"],
            "gain_error_diff": _mid_band_mean(mine, "gain", config, 1.0) - _mid_band_mean(theirs, "gain", config, 1.0),
            "phase_err_diff_deg": _mid_band_mean(mine, "phase_err_deg", config, None)
            - _mid_band_mean(theirs, "phase_err_deg", config, None),
            "shared_rows": rows,
            "exact_share_original": float(original_hits.mean()) if rows else None,
            "exact_share_variant": float(variant_hits.mean()) if rows else None,
            **units,
        }
        if sequential:
            entry |= dynamics_difference(mine, theirs)
        out.setdefault(original, {})[kind] = entry
    entries = [entry for by_kind in out.values() for entry in by_kind.values()]
    for entry, adjusted in zip(entries, holm([e["mcnemar_p"] for e in entries]), strict=True):
        entry["mcnemar_p_holm"] = adjusted
        entry["mcnemar_tests"] = len(entries)
    return out, {kind: pooled_difference(pairs, config) for kind, pairs in by_kind.items()}


def _stacked(tables: Sequence[Table]) -> Table:
    """The rows of `tables` (all of one sweeps table's columns) one after another."""
    columns = tables[0].columns
    return Table({c: np.concatenate([t[c] for t in tables]) for c in columns}, length=sum(len(t) for t in tables))


def pooled_difference(pairs: Sequence[Paired], config: ScoreConfig) -> dict[str, Any]:
    """`variants_pooled.<kind>` of scores.json: GAP's headline for one kind of variant, the paired
    MB-Core difference (variant minus original) averaged over the families that have it, with its
    95 % interval. Each family's shared sweeps enter as its own difference took them (by problem
    where it counted problems), so the pooled interval counts the units the per-family ones count:
    the families' cells are independent, and `paired_difference` over all of them is the mean of
    the families' differences with their variances added (Satterthwaite's degrees of freedom)."""
    core = paired_difference(
        _stacked([p.variant for p in pairs]), _stacked([p.original for p in pairs]), config, "mb_core"
    )
    units = {p.unit for p in pairs}
    out: dict[str, Any] = {
        "mb_core_diff": core["difference"],
        "mb_core_diff_interval": core["interval"],
        "families": [str(p.original["family"][0]) for p in pairs if len(p.original)],
        # A family of one problem counts sweeps, one of several problems: one unit for the pool
        # when they agree (they do within one release: every family has the same problems).
        "unit": units.pop() if len(units) == 1 else "mixed",
        "n_units": sum(p.n_units for p in pairs),
    }
    if core["interval"] is None:
        out["no_interval"] = core.get("no_interval") or "no sweep is shared"
    return out
