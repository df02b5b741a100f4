"""Repeatability: does the model answer the same question the same way when it is asked again?

Not in the paper; only the stateless protocol can measure it. The canonical rows repeat their
prompts (a prompt names the parameter's value, and a sinusoid revisits values: MVP's 1,920 rows
hold 85 distinct prompts). A file that answers one prompt on several rows gives, per repeated
prompt, whether every answer was identical (the same parsed number, or no number every time:
not the same text, which a chatty model varies around the same number), and the spread of its
numeric answers: their standard deviation in the answer's units (per family: families answer in
different units, an area in the thousands beside a ratio below 1, so absolute spreads are never
pooled), and relative, the standard deviation over the mean magnitude of the answers (per family
and overall). A deterministic server reads 1 and 0; one that samples afresh on every request
reads below 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def repeat_groups(
    families: np.ndarray, prompts: np.ndarray, identities: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One group per (family, prompt): the rows' families, identities and values sorted by group,
    then by identity within it, and each group's first row and size."""
    group = families.astype(np.int64) * (int(prompts.max()) + 1) + prompts
    order = np.lexsort((identities, group))
    group = group[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    return families[order], identities[order], values[order], starts, np.diff(np.r_[starts, len(group)])


def repeatability(
    families: np.ndarray, prompts: np.ndarray, identities: np.ndarray, values: np.ndarray, names: list[str]
) -> dict[str, Any] | None:
    """Per answered row: its family (an index into `names`), its prompt's number, its answer's
    identity (a number: equal answers, equal numbers) and its number (NaN if none). Per family and
    overall: the repeated prompts, the share answered identically and the mean relative spread; per
    family also the mean spread in its units. None when no prompt was answered twice."""
    if not len(prompts):
        return None
    families, identities, values, starts, sizes = repeat_groups(families, prompts, identities, values)
    repeated = sizes >= 2
    if not repeated.any():
        return None
    ends = starts + sizes - 1
    identical = identities[starts] == identities[ends]  # sorted within the group: first == last
    # Most repeated prompts get the same number each time: found per group at once (the finite
    # answers' least and greatest equal), and `_spread` is called for the others only.
    finite = np.isfinite(values)
    counted = np.add.reduceat(finite.astype(np.int64), starts)[repeated]
    least = np.minimum.reduceat(np.where(finite, values, np.inf), starts)[repeated]
    greatest = np.maximum.reduceat(np.where(finite, values, -np.inf), starts)[repeated]
    spreads = np.where(counted < 2, math.nan, 0.0)
    relative = spreads.copy()
    first, size = starts[repeated], sizes[repeated]
    for i in np.flatnonzero((counted >= 2) & (least != greatest)).tolist():
        spreads[i], relative[i] = _spread(values[first[i] : first[i] + size[i]])
    family_of = families[starts[repeated]]
    identical = identical[repeated]

    def mean(of: np.ndarray) -> float:
        finite = of[np.isfinite(of)]
        return float(np.mean(finite)) if finite.size else math.nan

    def summary(mask: np.ndarray) -> dict[str, Any]:
        return {
            "repeated_prompts": int(mask.sum()),
            "identical_share": float(identical[mask].sum() / mask.sum()),
            "spread_relative_mean": mean(relative[mask]),
        }

    everything = np.ones(len(spreads), dtype=bool)
    present = [f for f in dict.fromkeys(family_of.tolist())]
    return {
        "overall": summary(everything),
        "families": {
            names[f]: {**summary(family_of == f), "spread_mean": mean(spreads[family_of == f])} for f in present
        },
    }


def _spread(values: np.ndarray) -> tuple[float, float]:
    """The standard deviation of a prompt's numeric answers, and that over their mean magnitude; 0
    exactly when they are equal (not the rounding of their mean); NaN with fewer than two."""
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return math.nan, math.nan
    if (finite == finite[0]).all():
        return 0.0, 0.0
    spread = float(finite.std())
    return spread, spread / float(np.mean(np.abs(finite)))  # not all equal: some answer is not 0
