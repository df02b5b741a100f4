"""Validation reports: every problem collected, grouped for people, complete for machines."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth a look) in a file."""

    #: `error` makes the file invalid; `warning` does not.
    severity: str
    #: A short, stable name for the kind of problem (`schema`, `unknown-key`, `duplicate-key`, ...).
    code: str
    #: Where: "line 12", "row 17", "file", or a data file inside a release.
    where: str
    #: The field or column concerned ('' when the problem is about the whole line or file).
    field: str
    #: What the contract expects there.
    expected: str
    #: What was found instead.
    found: str


#: Instances kept of each kind of problem: a file of a million bad lines is counted, not kept.
KEPT_PER_GROUP = 100


@dataclass
class Report:
    """The outcome of validating one path.

    Memory does not grow with the number of problems: each group (severity, code, field,
    expectation) keeps its count and its first `KEPT_PER_GROUP` instances.
    """

    path: str
    #: `dataset` or `submission`.
    kind: str
    #: The kept instances, in order of appearance (all of them, up to `KEPT_PER_GROUP` per group).
    problems: list[Problem] = field(default_factory=list)
    #: Facts found along the way (row counts, coverage, model name...).
    summary: dict[str, Any] = field(default_factory=dict)
    _counts: dict[tuple[str, str, str, str], int] = field(default_factory=dict, repr=False)

    def add(self, severity: str, code: str, where: str, field: str, expected: str, found: str) -> None:
        group = (severity, code, field, expected)
        seen = self._counts.get(group, 0)
        self._counts[group] = seen + 1
        if seen < KEPT_PER_GROUP:
            self.problems.append(Problem(severity, code, where, field, expected, found))

    def error(self, code: str, where: str, field: str, expected: str, found: str) -> None:
        self.add(ERROR, code, where, field, expected, found)

    def warning(self, code: str, where: str, field: str, expected: str, found: str) -> None:
        self.add(WARNING, code, where, field, expected, found)

    def lead(self, code: str, where: str, field: str, expected: str, found: str) -> None:
        """An error shown before every other problem: the one that explains them."""
        self.error(code, where, field, expected, found)
        problem = self.problems.pop()
        self.problems.insert(0, problem)

    def drop(self, code: str) -> int:
        """Forget every problem of `code` (their cause is reported instead); returns how many there were."""
        groups = [group for group in self._counts if group[1] == code]
        dropped = sum(self._counts.pop(group) for group in groups)
        self.problems = [p for p in self.problems if p.code != code]
        return dropped

    @property
    def errors(self) -> list[Problem]:
        """The kept error instances (see `num_errors` for the count)."""
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == WARNING]

    def _count(self, severity: str) -> int:
        return sum(n for group, n in self._counts.items() if group[0] == severity)

    @property
    def num_errors(self) -> int:
        return self._count(ERROR)

    @property
    def num_warnings(self) -> int:
        return self._count(WARNING)

    @property
    def valid(self) -> bool:
        return not any(group[0] == ERROR for group in self._counts)

    def groups(self) -> list[dict[str, Any]]:
        """Problems of the same kind, field and expectation, counted, in order of first appearance."""
        grouped: OrderedDict[tuple, list[Problem]] = OrderedDict()
        for p in self.problems:
            grouped.setdefault((p.severity, p.code, p.field, p.expected), []).append(p)
        names = ("severity", "code", "field", "expected")
        return [
            {**dict(zip(names, key, strict=True)), "count": self._counts[key], "instances": items}
            for key, items in grouped.items()
        ]

    def to_dict(self, max_examples: int = 5) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "valid": self.valid,
            "num_errors": self.num_errors,
            "num_warnings": self.num_warnings,
            "summary": self.summary,
            "problems": [
                {
                    **{k: g[k] for k in ("severity", "code", "field", "expected", "count")},
                    "examples": [{"where": p.where, "found": p.found} for p in g["instances"][:max_examples]],
                }
                for g in self.groups()
            ],
        }

    def format_text(self, max_examples: int = 3) -> str:
        """The human summary: a verdict line, then each group of problems with its first instances."""
        verdict = "valid" if self.valid else "INVALID"
        counts = f"{self.num_errors:,} error(s), {self.num_warnings:,} warning(s)"
        kind = f"{self.kind}, prompts only" if self.summary.get("prompts_only") else self.kind
        lines = [f"{self.path}: {verdict} {kind} ({counts})"]
        for g in self.groups():
            fld = f" field '{g['field']}'" if g["field"] else ""
            times = f" [{g['count']:,} times, first {min(max_examples, g['count'])} shown]" if g["count"] > 1 else ""
            lines.append(f"  {g['severity']} ({g['code']}){fld}: expected {g['expected']}{times}")
            for p in g["instances"][:max_examples]:
                lines.append(f"    {p.where}: found {p.found}")
        for line in self.summary.get("text", []):
            lines.append(f"  {line}")
        return "\n".join(lines)
