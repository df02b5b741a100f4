"""The family universe: which families a submission may name, and the row_id each of its rows has.

A release may hold any well-named families on the layout's grid, so the families a command works
on come from its reference (the packaged canonical rows, a release folder, a Hub release), not
from the layout. The design, and why:

- **Row ids never change meaning.** A row_id is a position in one order of families. The canonical
  five come first, always, in layout order, in every universe: their row ids are a promise to the
  paper authors' evaluation code (docs/authors-code.md), whatever else a release holds. The other
  families of a release follow in its manifest's order. A canonical family a release lacks keeps
  its place (its ids stay unused), so a mixed release's canonical rows keep their canonical ids.
- **Made from the reference alone.** A universe is a value made from the reference's family names,
  never a process-wide registry: the row ids of a release's families depend on that release only,
  not on what else the process read first, and nothing a canonical run computes can change
  because another release was read beside it.
- **The canonical universe is the default**, for the packaged rows and for any release of canonical
  families only (a submission to it is a submission to the canonical benchmark: a family such a
  release lacks is said when scoring, as it always was). So with no `--reference` every command
  behaves, byte for byte, as it did when the five families were the only ones.
- **Cached on the universe.** A universe is frozen and hashable by its families; functions that
  depend on it (`keys.py`) cache on it, so a result can never be stale for another universe.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Iterable

from mathbode.core.errors import UnknownNameError, unknown_name_message

from .drives import MULTITONE, STANDARD, MultitoneDesign
from .layout import Layout, chosen_design, layout

#: The canonical release's name (MANIFEST.json `name`, and the packaged rows' release).
CANONICAL_RELEASE = "MathBode"


@dataclass(frozen=True)
class Universe:
    """The families a submission may name and the order row ids count them in."""

    #: The families of the reference, canonical ones first (layout order), then the others (manifest order).
    families: tuple[str, ...]
    #: The release they come from, for messages (not part of a universe's identity).
    release: str = field(default=CANONICAL_RELEASE, compare=False)
    #: The release's drives (`drives.STANDARD` or `MULTITONE`): its grid of sweeps, part of its identity.
    drives: str = STANDARD
    #: Problems a family holds (question_ids 0..N-1; `mathbode-build --questions N`); None: the
    #: layout's three. Part of its identity: row ids count a family's questions.
    questions: int | None = None
    #: A multi-tone release's design (realizations, periods, level) when not the contract's; part of
    #: its identity: row ids count its sweeps.
    design: MultitoneDesign | None = None
    #: The families row ids are counted over: the canonical five, then the others of `families`.
    slots: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.design is not None:
            if self.drives != MULTITONE:
                raise ValueError("a multi-tone design is a design of the multitone drives")
            # One universe, one value: the contract's design is None.
            object.__setattr__(self, "design", chosen_design(self.design))
        canonical = layout().families
        object.__setattr__(self, "slots", (*canonical, *(f for f in self.families if f not in canonical)))

    @classmethod
    def of(
        cls,
        names: Iterable[str],
        release: str = CANONICAL_RELEASE,
        drives: str = STANDARD,
        questions: int | None = None,
        design: MultitoneDesign | None = None,
    ) -> Universe:
        """The universe of a release holding `names` (the canonical one when they are all canonical
        and on the canonical grid)."""
        names = list(dict.fromkeys(names))
        canonical = layout().families
        if drives != STANDARD or questions is not None:
            return cls(
                (*(f for f in canonical if f in names), *(f for f in names if f not in canonical)),
                release,
                drives,
                questions,
                design,
            )
        if all(name in canonical for name in names):
            return canonical_universe() if release == CANONICAL_RELEASE else cls(canonical, release)
        ordered = (*(f for f in canonical if f in names), *(f for f in names if f not in canonical))
        return cls(ordered, release)

    @property
    def is_canonical(self) -> bool:
        return self.families == layout().families and self.drives == STANDARD and self.questions is None

    @property
    def layout(self) -> Layout:
        """The layout with this universe's grid of sweeps and its problems a family."""
        return layout(self.drives, self.questions, self.design)

    @property
    def num_rows(self) -> int:
        """Row ids in this universe (its slots' rows, used or not)."""
        return len(self.slots) * self.layout.rows_per_family

    def family_names(self, spec: str) -> list[str]:
        """`all` or a comma-separated list of family names -> names in this universe's order, each once;
        a name not in the universe is an error naming the close matches (and, for a family of another
        release, how to give its release)."""
        if spec.strip() == "all":
            return list(self.families)
        names = [n.strip() for n in spec.split(",") if n.strip()]
        for name in names or [spec]:
            if name not in self.families:
                raise UnknownNameError(self.unknown_family_message(name))
        return [f for f in self.families if f in names]

    def unknown_family_message(self, name: str) -> str:
        """Why `name` is no family here, and what to do: a misspelling gets its close matches; a
        well-named family of another release, how to give that release."""
        message = unknown_name_message("family", name, list(self.families))
        if self.is_canonical and is_family_name(name) and "Did you mean" not in message:
            return message + " " + other_release_hint(name)
        return message

    def enum_text(self) -> str:
        """The families as a JSON Schema `enum` names them in a validation message."""
        return "one of " + ", ".join(json.dumps(f) for f in self.families)


def other_release_hint(name: str) -> str:
    """What to do with a family that is not one of the canonical five."""
    return (
        f"{name!r} is not a family of the canonical MathBode release: build its release with "
        f"`mathbode-build --families {name} --out DIR` and pass `--reference DIR`."
    )


@cache
def canonical_universe() -> Universe:
    """The canonical release's universe: the layout's five families (the default everywhere)."""
    return Universe(layout().families)


def universe_of(universe: Universe | None) -> Universe:
    """`universe`, or the canonical one for None."""
    return canonical_universe() if universe is None else universe


def is_family_name(name: str) -> bool:
    """Whether `name` is a well-formed family name (`layout().family_name_pattern`)."""
    return isinstance(name, str) and _family_pattern().fullmatch(name) is not None


@cache
def _family_pattern() -> re.Pattern[str]:
    return re.compile(layout().family_name_pattern)
