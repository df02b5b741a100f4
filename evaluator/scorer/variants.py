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
  exact McNemar test on the discordant rows (a binomial test of one side's count against half
  the discordant pairs: exact at any count, as GAP reports it).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from mathbode.schema.keys import SweepKey

from ..table import Table
from .aggregate import ScoreConfig
from .dynamics import dynamics_difference
from .uncertainty import paired_difference

KERNEL = "kernel"


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


def _shared_hits(
    variant: str, original: str, scoped: Sequence[SweepKey], hits: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The per-row correctness of the variant's and the original's rows that pair, aligned."""
    position = {sweep: i for i, sweep in enumerate(scoped)}
    mine, theirs = [], []
    for i, sweep in enumerate(scoped):
        if sweep.family != variant:
            continue
        j = position.get(sweep._replace(family=original))
        if j is not None:
            mine.append(i)
            theirs.append(j)
    width = hits.shape[1] if hits.ndim == 2 else 0
    if not mine:
        return np.zeros((0, width), dtype=bool), np.zeros((0, width), dtype=bool)
    return hits[mine], hits[theirs]


def variant_scores(
    sweeps: Table,
    scoped: Sequence[SweepKey],
    hits: np.ndarray,
    variants: Mapping[str, tuple[str, str]],
    config: ScoreConfig,
    sequential: bool = False,
) -> dict[str, dict[str, dict[str, Any]]]:
    """`variants.<original>.<kind>` of scores.json: each variant answered beside its original,
    paired on the same rows (`variants`: variant family -> (original, kind); `hits`: per scoped
    sweep, per step, whether the answer is exact). A sequential run adds the difference in the
    identified dynamics (a stateless model cannot lag, so there is none to compare)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    answered = set(sweeps["family"].tolist()) if not sweeps.empty else set()
    for name, (original, kind) in variants.items():
        if name not in answered or original not in answered:
            continue
        mine = _as_family(sweeps, name, original)
        theirs = _as_family(sweeps, original, original)
        core = paired_difference(mine, theirs, config, "mb_core")
        calibrated = paired_difference(mine, theirs, config, "mb_core_calibrated")
        variant_hits, original_hits = _shared_hits(name, original, scoped, hits)
        only_original = int((original_hits & ~variant_hits).sum())
        only_variant = int((variant_hits & ~original_hits).sum())
        rows = int(original_hits.size)
        entry: dict[str, Any] = {
            "family": name,
            "kind": KERNEL if kind == KERNEL else "surface",
            "shared_sweeps": core["shared_sweeps"],
            "mb_core_diff": core["difference"],
            "mb_core_diff_interval": core["interval"],
        }
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
            "only_original_exact": only_original,
            "only_variant_exact": only_variant,
            "mcnemar_p": exact_mcnemar(only_original, only_variant),
        }
        if sequential:
            entry |= dynamics_difference(mine, theirs)
        out.setdefault(original, {})[kind] = entry
    return out
