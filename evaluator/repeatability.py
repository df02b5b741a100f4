"""Repeatability: does the model answer the same question the same way when it is asked again?

Not in the paper; only the stateless protocol can measure it. The canonical rows repeat their
prompts (a prompt names the parameter's value, and a sinusoid revisits values: MVP's 1,920 rows
hold 85 distinct prompts). A file that answers one prompt on several rows gives, per repeated
prompt, whether every answer was identical (the same response text, or the same number), and the
spread of its numeric answers (their standard deviation, in the answer's units). A deterministic
server reads 1 and 0; one that samples afresh on every request reads below 1.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np


def repeatability(answers: list[tuple[str, int, Any, float]]) -> dict[str, Any] | None:
    """From (family, prompt id, answer identity, number or NaN) per answered row: per family and
    overall, the repeated prompts, the share answered identically and the mean spread; None when
    no prompt was answered twice."""
    groups: dict[tuple[str, int], list[tuple[Any, float]]] = defaultdict(list)
    for family, prompt, identity, value in answers:
        groups[(family, prompt)].append((identity, value))
    per_family: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for (family, _), group in groups.items():
        if len(group) < 2:
            continue
        identical = len({identity for identity, _ in group}) == 1
        values = np.array([v for _, v in group if math.isfinite(v)])
        # Equal numbers have no spread: 0 exactly, not the rounding of their mean.
        spread = math.nan if values.size < 2 else 0.0 if (values == values[0]).all() else float(values.std())
        per_family[family].append((identical, spread))
    if not per_family:
        return None

    def summary(items: list[tuple[bool, float]]) -> dict[str, Any]:
        spreads = [s for _, s in items if math.isfinite(s)]
        return {
            "repeated_prompts": len(items),
            "identical_share": sum(identical for identical, _ in items) / len(items),
            "spread_mean": float(np.mean(spreads)) if spreads else math.nan,
        }

    everything = [item for items in per_family.values() for item in items]
    return {
        "overall": summary(everything),
        "families": {family: summary(items) for family, items in per_family.items()},
    }
