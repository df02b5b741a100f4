"""Fresh splits: every question of a family drawn anew from a seed, on the same grid.

`mathbode-build --seed SEED` replaces each family's three variants by constants drawn from the
ranges the family declares (`Family.draws`). The draw is a pure function of the seed, the family,
the question and an attempt number (sha256 of them), so one seed gives the same bytes on every
machine and under every hash seed or locale; the seed may be any label (`2026-12` for a monthly
split). A drawn question must be a valid one, or it is drawn again (the next attempt, still
deterministic): different constants from every canonical question (no prompt in common with the
canonical release) and from the split's other questions, the answer real and finite on the whole
p range and within the answer format's magnitude, a measurable swing at the smallest amplitude;
then the whole family passes `mathbode family check` (its pin aside: a split's rows are new).

A family without draws cannot make a fresh split: it is left out, and the build says so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pyarrow as pa

from mathbode.core.errors import UsageError
from mathbode.schema.layout import SINUSOID, Sweep, layout
from mathbode.schema.manifest import FileEntry
from mathbode.schema.packaged import packaged_rows
from mathbode.schema.splits import seed_commitment
from mathbode.schema.universe import CANONICAL_RELEASE

from .families.certify import CertificationError, compile_ball, prove_over
from .families.check import MAX_ABS_ANSWER, MIN_SWING, check_family
from .families.family import Family, FamilyDefinitionError, Variant
from .families.roots import RootRuleError
from .families.variants import GAP_SEED, SURFACE_KINDS, surface_variant
from .rows import sweep_p_values, sweep_unit

#: Attempts per question before the family is given up (a family whose draws are mostly invalid
#: has ranges to fix, and is told so).
MAX_ATTEMPTS = 200


class SplitError(UsageError):
    """A family that cannot make a fresh split (no draws, or draws that give no valid question)."""


def _index(seed: str, family: str, question: int, attempt: int, constant: str, size: int) -> int:
    digest = hashlib.sha256(f"{seed}\0{family}\0{question}\0{attempt}\0{constant}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % size


def _draw(family: Family, seed: str, question: int, attempt: int) -> Variant:
    # A question beyond the family's own (a release of --questions N) has the first one's constants.
    template = family.variants[question if question < len(family.variants) else 0].constants
    return Variant(
        {
            name: family.draws[name].value(
                _index(seed, family.name, question, attempt, name, family.draws[name].values())
            )
            for name in template
        }
    )


def _key(variant: Variant) -> tuple:
    return tuple(sorted((k, str(Fraction(str(v)))) for k, v in variant.constants.items()))


def _question_is_valid(family: Family, question: int) -> bool:
    """The drawn question's answer: real, finite and bounded on the whole range, and measurable."""
    try:
        expr = family.question_answer(question)
        ball = compile_ball(expr, family.parameter)
    except (FamilyDefinitionError, RootRuleError, CertificationError, ValueError, TypeError, ZeroDivisionError):
        return False
    lo, hi = (Fraction(str(x)) for x in family.p_range)
    proof = prove_over(ball, lo, hi)
    if not proof.proven or max(abs(proof.low or 0), abs(proof.high or 0)) > MAX_ABS_ANSWER:
        return False
    lay = layout()
    sweep = Sweep(SINUSOID, min(lay.sinusoid_amplitudes), 1.0, 0.0)
    unit, _ = sweep_unit(sweep, lay)
    try:
        answer = family.answer_function(question)
        truth = [answer.float_at(Fraction(p)) for p in sorted(set(sweep_p_values(family, sweep, unit)))]
    except (CertificationError, ZeroDivisionError):
        return False
    return (max(truth) - min(truth)) / 2 >= MIN_SWING


def _with_variants(family: Family, variants: tuple[Variant, ...]) -> Family:
    """`family` with other questions (unpinned: its rows are new). Its solutions are the family's:
    they depend on the equations alone, not on the constants (solving them again for every drawn
    problem was a sixth of a 100-problem draw)."""
    out = dataclasses.replace(family, variants=variants, pins={})
    try:
        out.__dict__["solutions"] = family.solutions
    except (FamilyDefinitionError, NotImplementedError, ValueError, TypeError):
        pass  # the trial's own check says what is wrong with them
    return out


def problem_capacity(family: Family) -> int:
    """How many problems with distinct constants a family's draws hold beside its own questions
    (an upper bound: a drawn problem must also be valid)."""
    names = {name for v in family.variants for name in v.constants}
    capacity = 1
    for name in names:
        capacity *= family.draws[name].values()
    return max(0, capacity - len(family.variants))


def seeded(family: Family, seed: str, questions: int | None = None) -> Family:
    """`family` with its questions drawn for the split `seed` (deterministic, checked): its three, or
    `questions` problems (a release of `mathbode-build --questions N`, whose problems differ in
    their constants; the first three are the three-question split's whenever that split's first
    draw passed its check)."""
    missing = [name for v in family.variants for name in v.constants if name not in family.draws]
    if not family.draws or missing:
        raise SplitError(
            f"family {family.name!r} declares no draw for {', '.join(sorted(set(missing))) or 'its constants'}: "
            "give it draws={name: Draw(low, high, step)} to take part in fresh splits"
        )
    count = len(family.variants) if questions is None else questions
    if questions is not None and questions > (room := problem_capacity(family)):
        raise SplitError(
            f"family {family.name!r}: --questions {questions} asks more problems than its draws hold ({room:,} "
            "with constants other than its own questions'): ask fewer, or widen its draws"
        )
    canonical = {_key(v) for v in family.variants}
    for round_ in range(MAX_ATTEMPTS):
        chosen: list[Variant] = [family.variants[q if q < len(family.variants) else 0] for q in range(count)]
        taken: set[tuple] = set()
        for q in range(count):
            for attempt in range(round_ * MAX_ATTEMPTS, (round_ + 1) * MAX_ATTEMPTS):
                drawn = _draw(family, seed, q, attempt)
                if _key(drawn) in canonical or _key(drawn) in taken:
                    continue
                trial = _with_variants(family, (*chosen[:q], drawn, *chosen[q + 1 :]))
                if _question_is_valid(trial, q):
                    chosen[q] = drawn
                    taken.add(_key(drawn))
                    break
            else:
                raise SplitError(
                    f"family {family.name!r}: {MAX_ATTEMPTS} draws of question {q} gave no valid question "
                    "(a pole or complex value in range, no measurable swing): narrow its draws"
                )
        split = _with_variants(family, tuple(chosen))
        report = check_family(split, surfaces=False, questions=questions)
        if all(f.code == "unpinned" for f in report.problems):
            return split
    raise SplitError(f"family {family.name!r}: no drawn split passed its check; narrow its draws")


def drawn_family(
    family: Family, seed: str, drawn: dict[str, Family] | None = None, questions: int | None = None
) -> Family:
    """`family` in the fresh split `seed` (with `questions` problems; None: its three). A surface
    variant is its drawn original renamed, never
    drawn on its own (that would give it other numbers and break its pairing): the same drawn
    questions, its names from its own surface seed. `drawn`: originals already drawn, by name
    (else the original is drawn here: the draw is a pure function of the seed, so it is the same)."""
    kind = family.variant
    if kind is not None and kind in SURFACE_KINDS and family.variant_of is not None:
        original = (drawn or {}).get(family.variant_of)
        if original is None:
            from .families import get_family

            original = seeded(get_family(family.variant_of), seed, questions)
        return surface_variant(original, kind, family.surface_seed or GAP_SEED)
    return seeded(family, seed, questions)


@dataclass(frozen=True)
class SplitPlan:
    """What `mathbode-build --seed` asks: the seed, whether it stays private, whether the rows
    keep their truth, and the earlier splits whose overlap the manifest reports."""

    seed: str
    private: bool = False
    prompts_only: bool = False
    against: tuple[Path, ...] = ()

    @property
    def commitment(self) -> str:
        return seed_commitment(self.seed)

    def record(self) -> dict[str, str]:
        """What the manifest says of the seed: the seed, or (private) only the commitment."""
        return {"seed_sha256": self.commitment} if self.private else {"seed": self.seed}

    def default_name(self, base: str) -> str:
        """MathBode-split-2026-12 (or, private, MathBode-private-<commitment prefix>)."""
        if self.private:
            return f"{base}-private-{self.commitment.removeprefix('sha256:')[:12]}"
        label = re.sub(r"[^A-Za-z0-9._-]+", "-", self.seed).strip("-.")[:40] or "seed"
        return f"{base}-split-{label}"


def _prompts(tables: list[pa.Table]) -> set[str]:
    return {p for t in tables for p in t.column("prompt").to_pylist()}


def overlaps(folder: Path, files: dict[str, FileEntry], against: tuple[Path, ...]) -> dict[str, dict[str, int]]:
    """Distinct prompts of the release in `folder` that the canonical release (and each earlier
    split in `against`) also holds: a fresh split's overlap, expected 0."""
    # The release reader and its schema checks (0.1-0.3 s of imports) load only for a split's build:
    # the canonical build never reads a release back.
    from mathbode.schema.dataset import checked_manifest, open_table

    ours = _prompts([open_table(folder / rel) for rel in files])
    canonical = _prompts([packaged_rows(name) for name in layout().families])
    out = {CANONICAL_RELEASE: {"prompts_in_common": len(ours & canonical), "of": len(ours)}}
    for other in map(Path, against):
        manifest = checked_manifest(other, f"--against {other}")
        try:
            theirs = _prompts([open_table(other / rel) for rel in manifest.data_files])
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as err:
            raise UsageError(f"--against {other}: not a release folder that can be read ({err}).") from None
        label = f"{manifest.name} ({manifest.prompts_hash or manifest.content_hash})"
        out[label] = {"prompts_in_common": len(ours & theirs), "of": len(ours)}
    return out
