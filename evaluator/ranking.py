"""Rank submissions, like with like: the groups of equal conditions, each in ranking order.

Submissions are ranked only within a group of equal conditions (answer format, prompting, and
any other condition a file records, such as the protocol): a run whose format the server
constrained, or whose model saw a worked example, answers a different question from a free
zero-shot run. The release scored against is a condition too: a score on a release other than the
canonical MathBode (its name and content hash) is of another benchmark, never ranked beside it.
A file with no scored sinusoid sweep has no MB-Core to rank by and is listed apart.

Read from results documents alone, so both rooms use it: the scorer tests neighbours
(`scorer.compare`), the presentation lists the groups (`presentation.report`, `presentation.site`).
"""

from __future__ import annotations

from .results import Results


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
