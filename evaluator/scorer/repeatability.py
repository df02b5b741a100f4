"""Repeatability: does the model answer the same question the same way when it is asked again?

Not in the paper; only the stateless protocol can measure it. The canonical rows repeat their
prompts (a prompt names the parameter's value, and a sinusoid revisits values: MVP's 1,920 rows
hold 85 distinct prompts). A file that answers one prompt on several rows gives, per repeated
prompt, whether every answer was identical (the same parsed number, or no number every time:
not the same text, which a chatty model varies around the same number), and the spread of its
numeric answers (their standard deviation, in the answer's units). A deterministic
server reads 1 and 0; one that samples afresh on every request reads below 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def repeatability(
    families: np.ndarray, prompts: np.ndarray, identities: np.ndarray, values: np.ndarray, names: list[str]
) -> dict[str, Any] | None:
    """Per answered row: its family (an index into `names`), its prompt's number, its answer's
    identity (a number: equal answers, equal numbers) and its number (NaN if none). Per family and
    overall: the repeated prompts, the share answered identically and the mean spread; None when no
    prompt was answered twice."""
    if not len(prompts):
        return None
    # One group per (family, prompt); rows sorted by group, then by identity within it.
    group = families.astype(np.int64) * (int(prompts.max()) + 1) + prompts
    order = np.lexsort((identities, group))
    group, identities, values, families = group[order], identities[order], values[order], families[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    sizes = np.diff(np.r_[starts, len(group)])
    repeated = sizes >= 2
    if not repeated.any():
        return None
    ends = starts + sizes - 1
    identical = identities[starts] == identities[ends]  # sorted within the group: first == last
    spreads = np.array([_spread(values[a : a + n]) for a, n in zip(starts[repeated], sizes[repeated], strict=True)])
    family_of = families[starts[repeated]]
    identical = identical[repeated]

    def summary(mask: np.ndarray) -> dict[str, Any]:
        finite = spreads[mask][np.isfinite(spreads[mask])]
        return {
            "repeated_prompts": int(mask.sum()),
            "identical_share": float(identical[mask].sum() / mask.sum()),
            "spread_mean": float(np.mean(finite)) if finite.size else math.nan,
        }

    everything = np.ones(len(spreads), dtype=bool)
    present = [f for f in dict.fromkeys(family_of.tolist())]
    return {
        "overall": summary(everything),
        "families": {names[f]: summary(family_of == f) for f in present},
    }


def _spread(values: np.ndarray) -> float:
    """The standard deviation of a prompt's numeric answers; 0 exactly when they are equal (not the
    rounding of their mean); NaN with fewer than two."""
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return math.nan
    return 0.0 if (finite == finite[0]).all() else float(finite.std())
