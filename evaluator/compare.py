"""Rank submissions and test each against its neighbour in the ranking."""

from __future__ import annotations

from typing import Any

from .aggregate import ScoreConfig
from .scoring import Scored
from .uncertainty import DEFAULT_RESAMPLES, paired_correctness, paired_difference

#: The scores a neighbour is tested on: the paper's ranking score and the calibrated headline.
TESTED = ("mb_core", "mb_plus_calibrated")


def ranked(results: list[Scored]) -> list[Scored]:
    """Best MB-Core first, MB-Plus breaking ties (n/a last), as the paper ranks; stable otherwise."""

    def key(r: Scored) -> tuple[float, float]:
        core, plus = r.overall["mb_core"], r.overall["mb_plus"]
        return (-core if core == core else float("inf"), -plus if plus == plus else float("inf"))

    return sorted(results, key=key)


def neighbour_tests(
    results: list[Scored], config: ScoreConfig, resamples: int = DEFAULT_RESAMPLES
) -> list[dict[str, Any]]:
    """For each pair of neighbours in the ranking: paired differences on the shared sweeps and rows."""
    order = ranked(results)
    out = []
    for upper, lower in zip(order, order[1:], strict=False):  # neighbours
        tests = {score: paired_difference(upper.sweeps, lower.sweeps, config, score, resamples) for score in TESTED}
        shared = tests[TESTED[0]]["shared_sweeps"]
        out.append(
            {
                "first": upper.label,
                "second": lower.label,
                "shared_sweeps": shared,
                "sweeps": [len(upper.sweeps), len(lower.sweeps)],
                "scores": tests,
                "correctness": paired_correctness(upper.correct, lower.correct),
            }
        )
    return out


def describe(test: dict[str, Any]) -> list[str]:
    """The lines a reader sees about one neighbour test."""
    a, b = test["first"], test["second"]
    lines = []
    if test["shared_sweeps"] < max(test["sweeps"]):
        lines.append(
            f"{a} vs {b}: compared only on the {test['shared_sweeps']:,} sweeps both were scored on "
            f"({test['sweeps'][0]:,} and {test['sweeps'][1]:,})."
        )
    for score, t in test["scores"].items():
        if t["difference"] is None or t["difference"] != t["difference"]:
            lines.append(f"{a} - {b}, {score}: n/a on the shared sweeps.")
            continue
        interval = t["interval"]
        ci = f"[{interval[0]:+.4f}, {interval[1]:+.4f}]" if interval else "[n/a]"
        resolution = 1 / t["resamples"]
        if t["p_value"] is None:
            p = "p n/a"
        elif t["p_value"] < resolution:
            p = f"p < {resolution:g}"  # no replicate crossed zero
        else:
            p = f"p = {t['p_value']:.3f}"
        lines.append(f"{a} - {b}, {score}: {t['difference']:+.4f} {ci}, {p} (paired bootstrap)")
    c = test["correctness"]
    lines.append(
        f"{a} vs {b}, exact rows: {c['only_first_correct']:,} right only in {a}, {c['only_second_correct']:,} "
        f"only in {b}, of {c['shared_rows']:,} shared rows; McNemar p = {c['mcnemar_p_value']:.3g}"
    )
    return lines
