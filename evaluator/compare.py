"""Rank submissions, like with like, and test each against its neighbour in the ranking.

Submissions are ranked only within a group of equal conditions (answer format, prompting, and
any other condition a file records, such as the protocol): a run whose format the server
constrained, or whose model saw a worked example, answers a different question from a free
zero-shot run. The release scored against is a condition too: a score on a release other than the
canonical MathBode (its name and content hash) is of another benchmark, never ranked beside it.
A file with no scored sinusoid sweep has no MB-Core to rank by and is listed apart.
"""

from __future__ import annotations

from typing import Any

from .aggregate import ScoreConfig
from .results import Results
from .uncertainty import paired_correctness, paired_difference

#: The scores a neighbour is tested on: the paper's ranking score and the calibrated headline.
TESTED = ("mb_core", "mb_plus_calibrated")


def ranked(results: list[Results]) -> list[Results]:
    """Best MB-Core first, MB-Plus breaking ties (n/a last), as the paper ranks; stable otherwise."""

    def key(r: Results) -> tuple[float, float]:
        core, plus = r.overall["mb_core"], r.overall["mb_plus"]
        return (-core if core == core else float("inf"), -plus if plus == plus else float("inf"))

    return sorted(results, key=key)


#: The conditions that change what a score measures (a deduplicated file asks the same questions
#: as a full one: it is ranked with it, and only its repeatability is not measured).
GROUPING = ("release", "release_content_hash", "answer_format", "prompting", "protocol", "history", "run_in")


def conditions_label(r: Results) -> str:
    """'answer format free, prompting zero-shot, protocol stateless' (the grouping conditions, in order)."""
    cond = r.extra.get("conditions") or {}
    words = {"run_in": "run-in", "release_content_hash": "content"}
    return ", ".join(f"{words.get(name, name.replace('_', ' '))} {cond[name]}" for name in GROUPING if name in cond)


def rankable(r: Results) -> bool:
    """Whether a submission has sinusoid sweeps, the only ones MB-Core and MB-Plus are made from."""
    return bool(r.extra.get("num_sweeps"))


def groups(results: list[Results]) -> list[tuple[str, list[Results]]]:
    """The rankable submissions grouped by equal conditions (groups in order of first appearance),
    each group ranked."""
    by_label: dict[str, list[Results]] = {}
    for r in results:
        if rankable(r):
            by_label.setdefault(conditions_label(r), []).append(r)
    return [(label, ranked(members)) for label, members in by_label.items()]


def unranked(results: list[Results]) -> list[Results]:
    """The submissions with no sinusoid sweep (nothing for MB-Core): listed apart, never ranked."""
    return [r for r in results if not rankable(r)]


def neighbour_tests(results: list[Results], config: ScoreConfig) -> list[dict[str, Any]]:
    """For each pair of neighbours in a group's ranking that share a sweep: paired differences on
    the shared sweeps and McNemar's test on the shared rows. Pairs with nothing in common are not
    tested (there is nothing to say about them)."""
    out = []
    for label, order in groups(results):
        for upper, lower in zip(order, order[1:], strict=False):
            tests = {score: paired_difference(upper.sweeps, lower.sweeps, config, score) for score in TESTED}
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
        if interval is None:
            lines.append(f"{a} - {b}, {score}: {t['difference']:+.4f}, no interval or test: {t.get('no_interval')}.")
            continue
        ci = f"[{interval[0]:+.4f}, {interval[1]:+.4f}]"
        p = "p n/a" if t["p_value"] is None else _p_text(t["p_value"])
        lines.append(f"{a} - {b}, {score}: {t['difference']:+.4f} {ci}, {p} (paired t test)")
    c = test["correctness"]
    if c["shared_rows"]:
        lines.append(
            f"{a} vs {b}, exact rows: {c['only_first_correct']:,} right only in {a}, {c['only_second_correct']:,} "
            f"only in {b}, of {c['shared_rows']:,} shared rows; McNemar {_p_text(c['mcnemar_p_value'])}"
        )
    return lines


def _p_text(p: float) -> str:
    """'p = 0.0312', or 'p < 1e-16' where the value is below what a double tells from 0."""
    return "p < 1e-16" if p < 1e-16 else f"p = {p:.3g}"
