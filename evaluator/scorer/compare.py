"""Test each submission against its neighbour in the ranking (`mathbode.evaluator.ranking`).

Neighbours in a group of equal conditions are compared on what they share: a paired t test of
each tested score on the shared sweeps, and McNemar's test on the shared rows. The lines a
reader sees about a test are written by `presentation.comparison`.
"""

from __future__ import annotations

from typing import Any

from ..ranking import groups
from ..results import Results
from .aggregate import ScoreConfig
from .uncertainty import paired_correctness, paired_differences

#: The scores a neighbour is tested on: the paper's ranking score and the calibrated headline.
TESTED = ("mb_core", "mb_plus_calibrated")


def neighbour_tests(results: list[Results], config: ScoreConfig) -> list[dict[str, Any]]:
    """For each pair of neighbours in a group's ranking that share a sweep: paired differences on
    the shared sweeps and McNemar's test on the shared rows. Pairs with nothing in common are not
    tested (there is nothing to say about them)."""
    out = []
    for label, order in groups(results):
        for upper, lower in zip(order, order[1:], strict=False):
            tests = paired_differences(upper.sweeps, lower.sweeps, config, TESTED)
            shared = tests[TESTED[0]]["shared_sweeps"]
            if not shared:
                continue
            out.append(
                {
                    "first": upper.label,
                    "second": lower.label,
                    "conditions": label,
                    "shared_sweeps": shared,
                    "sweeps": [len(upper.sweeps), len(lower.sweeps)],
                    "scores": tests,
                    "correctness": paired_correctness(upper.correct, lower.correct),
                }
            )
    return out
