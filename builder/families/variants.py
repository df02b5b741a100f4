"""GAP's variants of a family: the same problem under other names (surface) or in another setting (kernel).

A **surface variant** renders the original's prompts with the texts the family declares
`renamable` replaced by new names, the numbers, the equations and the exact answer unchanged
(GAP, Generalisation-and-Perturbation: four surface kinds):

- `DL`: descriptive long names, made from each text's declared role;
- `DLC`: long names easily confused with one another (one long stem, told apart by a code of
  look-alike letters l and I);
- `DLM`: long names that mislead: each reads like another quantity of the problem (another
  renamable's role; with one renamable, a role the problem does not have);
- `GS`: garbled strings of letters.

The names are drawn from a seeded generator (`surface_seed`, recorded in the release's manifest),
so the same seed gives the same bytes on any machine. A name never holds a digit (the numbers of
a prompt stay its only numbers), never collides with another name or with a word the prompt
already has, and never looks like the answer format's tags; `surface_problems` proves all of it
row by row, with the truth of every surface row equal to its original's bit for bit.

A **kernel variant** is a family of its own (its own setting, constants, answer and truth) that
declares `variant_of` its original and `variant = "kernel"`: the same solution plan in a
changed setting. The built-in ones are in `kernels`.
"""

from __future__ import annotations

import dataclasses
import random
import re
import string
from typing import Mapping

import pyarrow as pa

from mathbode.schema.layout import layout
from mathbode.schema.pairing import SURFACE_KINDS, paired_field_problems

from .family import Family

#: The seed the paired release's names are drawn from (recorded in its manifest).
GAP_SEED = "gap-1"
_NAME = re.compile(r"^[A-Za-z][A-Za-z_]*$")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DL_SUFFIXES = ("value", "amount", "quantity", "measure", "figure")
_DLC_STEMS = ("quantity_under_consideration", "value_of_the_stated_item", "measured_amount_in_question")
_DLM_DECOYS = ("final_total_after_all_steps", "rate_of_change_per_step", "starting_reference_level")
#: A surface variant's family name: the original's, a double underscore and the kind.
_SEPARATOR = "__"


class SurfaceError(ValueError):
    """A surface variant that cannot be made (said with the family's name and what to change)."""


def variant_name(original: str, kind: str) -> str:
    """The family name of `original`'s variant of `kind` (`linear_solve__gs`, `linear_solve__kernel`)."""
    return f"{original}{_SEPARATOR}{kind.lower()}"


def split_variant_name(name: str) -> tuple[str, str] | None:
    """(original, surface kind) for a surface variant's name, else None."""
    base, sep, tail = name.rpartition(_SEPARATOR)
    kind = tail.upper()
    if sep and base and kind in SURFACE_KINDS:
        return base, kind
    return None


def _word_pattern(words: list[str]) -> re.Pattern[str]:
    # Longest first, so a renamable "ABC" is replaced before "AB"; a word character on either side
    # means the text is part of a longer word, never renamed.
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])({alternatives})(?![A-Za-z0-9_])")


def _literal_text(template: str) -> str:
    return "".join(literal for literal, _, _, _ in string.Formatter().parse(template))


def _snake(role: str) -> str:
    return "_".join(re.findall(r"[a-z]+", role.lower())) or "item"


def _draw(family: Family, kind: str, rng: random.Random) -> dict[str, str]:
    texts = list(family.renamable)
    roles = [_snake(family.renamable[t]) for t in texts]
    if kind == "DL":
        return {t: f"{role}_{rng.choice(_DL_SUFFIXES)}" for t, role in zip(texts, roles, strict=True)}
    if kind == "DLC":
        stem = rng.choice(_DLC_STEMS)
        codes = ["".join(c) for c in _letter_codes()]
        rng.shuffle(codes)
        return {t: f"{stem}_{code}" for t, code in zip(texts, codes, strict=False)}
    if kind == "DLM":
        if len(texts) == 1:
            return {texts[0]: rng.choice(_DLM_DECOYS)}
        # A shift by 1..n-1 of the roles: no text keeps its own role (a derangement).
        shift = rng.randrange(1, len(texts))
        return {t: f"{roles[(i + shift) % len(texts)]}_{rng.choice(_DL_SUFFIXES)}" for i, t in enumerate(texts)}
    if kind == "GS":
        letters = string.ascii_letters
        return {t: "".join(rng.choice(letters) for _ in range(rng.randint(6, 9))) for t in texts}
    raise SurfaceError(f"unknown surface kind {kind!r}: one of {', '.join(SURFACE_KINDS)}")


def _letter_codes() -> list[tuple[str, ...]]:
    import itertools

    return list(itertools.product("lI", repeat=4))


def name_problems(family: Family, names: Mapping[str, str]) -> list[str]:
    """Why a set of new names cannot stand for `family`'s renamables (empty: they can)."""
    problems = []
    text = _literal_text(family.template)
    lay = layout()
    tags = {lay.answer_start.strip("[]").lower(), lay.answer_end.strip("[]").lower()}
    words = set(re.findall(r"[A-Za-z0-9_]+", text + " " + lay.answer_instruction()))
    seen: dict[str, str] = {}
    for old, new in names.items():
        if not _NAME.match(new):
            problems.append(f"{new!r} (for {old!r}) is not letters and underscores starting with a letter")
        if new.lower() in seen:
            problems.append(f"{new!r} names both {seen[new.lower()]!r} and {old!r}")
        seen[new.lower()] = old
        if new in words or new in family.renamable:
            problems.append(f"{new!r} (for {old!r}) is already a word of the prompt")
        if any(tag in new.lower() for tag in tags):
            problems.append(f"{new!r} (for {old!r}) looks like the answer format's tags")
    return problems


def surface_names(family: Family, kind: str, seed: str = GAP_SEED) -> dict[str, str]:
    """The new name of each of `family`'s renamables in its `kind` surface variant, drawn from `seed`."""
    if not family.renamable:
        raise SurfaceError(f"family {family.name!r} declares nothing renamable, so it has no surface variants")
    missing = [t for t in family.renamable if not _word_pattern([t]).search(_literal_text(family.template))]
    if missing:
        raise SurfaceError(
            f"family {family.name!r}: renamable {', '.join(map(repr, missing))} is not a whole word of the template's "
            "text (outside its {fields}): declare only texts the prompt shows"
        )
    # One generator per (seed, family, kind): adding a family or a kind never changes another's names.
    rng = random.Random(f"{seed}\x00{family.name}\x00{kind}")
    for _ in range(100):
        names = _draw(family, kind, rng)
        if len(names) == len(family.renamable) and not name_problems(family, names):
            return names
    raise SurfaceError(f"family {family.name!r}: no valid {kind} names in 100 draws from seed {seed!r}")


def rename(text: str, names: Mapping[str, str]) -> str:
    """`text` with every whole-word occurrence of a key of `names` replaced by its value."""
    if not names:
        return text
    return _word_pattern(list(names)).sub(lambda m: names[m.group(1)], text)


def _renamed_template(template: str, names: Mapping[str, str]) -> str:
    parts = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        parts.append(rename(literal, names).replace("{", "{{").replace("}", "}}"))
        if field is not None:
            parts.append("{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
    return "".join(parts)


def surface_variant(family: Family, kind: str, seed: str = GAP_SEED) -> Family:
    """`family` under the `kind` surface: the same definition, its template's renamables renamed."""
    names = surface_names(family, kind, seed)
    return dataclasses.replace(
        family,
        name=variant_name(family.name, kind),
        title=f"{family.title} ({kind} surface)",
        template=_renamed_template(family.template, names),
        pins={},
        renamable={},
        variant_of=family.name,
        variant=kind,
        renamed=names,
        surface_seed=seed,
    )


def surface_problems(original: pa.Table, variant: Family, table: pa.Table) -> list[str]:
    """Everything a surface variant's rows (`table`) must keep of its original's (`original`), row
    by row: the paired fields bit for bit, the same numbers in the same order in every prompt, each
    new name where its text was, and the original prompt back when the names are undone."""
    problems = paired_field_problems(original, table)
    if original.num_rows != table.num_rows:
        return problems
    back = {new: old for old, new in variant.renamed.items()}
    count = {old: _word_pattern([old]) for old in variant.renamed}
    count_new = {new: _word_pattern([new]) for new in back}
    # The prompts repeat (85 distinct in 1,920 rows of MVP): each pair of texts is checked once.
    instruction = "\n\n" + layout().answer_instruction()
    for i, (before, after) in enumerate(
        dict.fromkeys(zip(original.column("prompt").to_pylist(), table.column("prompt").to_pylist(), strict=True))
    ):
        if _NUMBER.findall(before) != _NUMBER.findall(after):
            problems.append(f"prompt {i}: its numbers {_NUMBER.findall(after)} are not its original's")
            break
        # The answer-format sentence is the layout's, never renamed (its article "a" is no coefficient).
        question, renamed_question = before.removesuffix(instruction), after.removesuffix(instruction)
        if not after.endswith(instruction) and before.endswith(instruction):
            problems.append(f"prompt {i}: the answer-format sentence is not its original's")
        for old, new in variant.renamed.items():
            if len(count[old].findall(question)) != len(count_new[new].findall(renamed_question)):
                problems.append(f"prompt {i}: {new!r} is not everywhere {old!r} was")
        if rename(after, back) != before:
            problems.append(f"prompt {i}: undoing the names does not give the original prompt back")
        if problems:
            break
    return problems
