"""A release's description: what MANIFEST.json says besides what is recomputed from its rows.

The description (name, versions, format, split, canary, drives, each family's version, origin,
pairing and surface names, the files) is a function of what the builder was asked: the families,
the drives, the seed, the format. The builder writes it with `describe`, and `mathbode validate`
reads the request back from the manifest (`request_of`), rebuilds the description and compares it
whole with the manifest's (`first_difference`). Nothing here lists the fields to check: a field a
new dimension adds to the manifest is compared because the builder writes it, and a field the
builder does not write is a difference. What the request holds is proved by the rows: they are
checked against the builder's rows for that request (its drives, its seed).

The family entries need the family's definition (the builder's, not imported here): a
`FamilyDescriber` gives them, and a family it does not know (a plugin that is not installed) is
reported as not checked, never passed. Without the builder, the canonical families are described
from their pinned versions (`release_hashes`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .drives import MULTITONE, STANDARD, MultitoneDesign, design_of, design_record, record_problem
from .layout import chosen_design, layout
from .release_hashes import RELEASE_FAMILY_VERSIONS
from .report import Report
from .splits import canary, seed_commitment

#: The card's file, listed with the data files.
CARD_FILE = "README.md"
#: What a manifest records of its rows (recomputed from them by the validator, not described):
#: at the top level, and in each family's entry.
ROW_FACTS = ("num_rows", "content_hash", "prompts_hash", "overlap")
FAMILY_ROW_FACTS = ("num_rows", "content_hash", "prompts_hash", "truth")
#: How the parquet writer is recorded: the release's bytes depend on it, its content does not.
_WRITER = re.compile(r"^pyarrow [0-9][0-9A-Za-z.+-]{0,40}$")

#: A family's entry in the description, as the installed builder defines it (version, and when
#: they apply origin, variant_of, variant, surface), or None for a family it does not know.
FamilyDescriber = Callable[[str], "dict[str, Any] | None"]


def data_path(family: str, fmt: str) -> str:
    """Where a family's rows live inside a release (relative, POSIX)."""
    return f"data/{family}.{fmt}"


@dataclass(frozen=True)
class ReleaseRequest:
    """What the builder was asked: everything a release's description is a function of."""

    #: The families, in release order (GAP variants included, as `--variants gap` expanded them).
    families: tuple[str, ...]
    #: `parquet` or `jsonl`.
    format: str
    #: The release's name (`--name`, or the name the builder chose for these families).
    name: str
    builder_version: str
    #: `pyarrow X.Y.Z`: the writer of the data files' bytes.
    parquet_writer: str
    #: `standard` or `multitone`.
    drives: str = STANDARD
    #: A fresh split's `{"seed": ...}` or a private one's `{"seed_sha256": ...}`; None: the families' own questions.
    split: Mapping[str, str] | None = None
    #: The rows carry no ground_truth.
    prompts_only: bool = False
    #: Problems a family (`--variants gap --questions N`); None: the layout's three.
    questions: int | None = None
    #: The multi-tone drives' realizations, periods and level (`--realizations`, `--periods`,
    #: `--rms-level`); None: the layout's. Recorded as `multitone_design`, its drives in `drives`.
    design: MultitoneDesign | None = None


def request_of(raw: Mapping[str, Any]) -> ReleaseRequest:
    """The request a manifest document (one that passed `manifest.schema.json`) says it was built from.

    Only the inputs are read here; everything else in the description is derived from them and
    compared. A recorded writer that is not `pyarrow X.Y.Z` is taken as absent (and so differs)."""
    drives = raw.get("drives")
    writer = raw.get("parquet_writer")
    return ReleaseRequest(
        families=tuple(raw["families"]),
        format=raw["format"],
        name=raw["name"],
        builder_version=raw["builder_version"],
        parquet_writer=writer if isinstance(writer, str) and _WRITER.match(writer) else "pyarrow (a version)",
        drives=drives["drives"] if isinstance(drives, dict) and drives.get("drives") == MULTITONE else STANDARD,
        split=raw.get("split"),
        prompts_only=raw.get("prompts_only") is True,
        questions=questions if type(questions := raw.get("questions")) is int else None,
        design=_recorded_design(raw.get("multitone_design")),
    )


def _recorded_design(record: Any) -> MultitoneDesign | None:
    """The design a manifest's record asks for; None for none, a record that is no design, or the
    layout's own (the builder records no design then, so a record of it is a difference)."""
    return chosen_design(design_of(record))


def canonical_family(name: str) -> dict[str, Any] | None:
    """A canonical family's entry, from its pinned version (no builder needed); None for any other."""
    version = RELEASE_FAMILY_VERSIONS.get(name)
    return None if version is None else {"version": version}


def describe(request: ReleaseRequest, describe_family: FamilyDescriber = canonical_family) -> dict[str, Any]:
    """The description of the release `request` builds, in MANIFEST.json's order.

    A family `describe_family` does not know is left out of `families` (the caller says it is
    unchecked); its files are still listed."""
    split = dict(request.split) if request.split is not None else None
    out: dict[str, Any] = {
        "name": request.name,
        "builder_version": request.builder_version,
        "format": request.format,
        "parquet_writer": request.parquet_writer,
    }
    if request.prompts_only:
        out["prompts_only"] = True
    if split is not None:
        out["split"] = split
    commitment = None
    if split is not None:
        commitment = seed_commitment(split["seed"]) if "seed" in split else split.get("seed_sha256")
    out["canary"] = canary(commitment)
    if request.drives != STANDARD:
        out["drives"] = layout(request.drives, None, request.design).multitone.describe()
        if request.design is not None:
            out["multitone_design"] = design_record(request.design)
    if request.questions is not None:
        out["questions"] = request.questions
    families: dict[str, Any] = {}
    for name in request.families:
        entry = describe_family(name)
        if entry is not None:
            families[name] = {**entry, "files": [data_path(name, request.format)]}
    out["families"] = families
    out["files"] = [*(data_path(name, request.format) for name in request.families), CARD_FILE]
    return out


def description_of(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest document's description: the document without what is recomputed from the rows
    (`ROW_FACTS`, `FAMILY_ROW_FACTS`), and its files by name (their sizes and checksums are the
    files' own, checked against them). Every other field stays, whether the builder writes it or not."""
    out = {key: value for key, value in raw.items() if key not in ROW_FACTS}
    families = raw.get("families")
    if isinstance(families, Mapping):
        out["families"] = {
            name: {k: v for k, v in entry.items() if k not in FAMILY_ROW_FACTS} if isinstance(entry, Mapping) else entry
            for name, entry in families.items()
        }
    if isinstance(raw.get("files"), Mapping):
        out["files"] = list(raw["files"])
    return out


#: Stands for a field one side does not have.
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "(absent)"})()


def _same_scalar(a: Any, b: Any) -> bool:
    # JSON's types, strictly: 4 is not 4.0 or true, and NaN equals nothing (not even NaN).
    return type(a) is type(b) and a == b


def first_difference(found: Any, expected: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place where `found` differs from `expected`, as (path, found value, expected
    value), a missing side as `ABSENT`; None when they are equal. Objects are walked in the
    expected order, then the keys only `found` has; lists element by element, then by length."""
    if isinstance(expected, Mapping) and isinstance(found, Mapping):
        for key in [*expected, *(k for k in found if k not in expected)]:
            here = f"{path}.{_key_text(key)}" if path else _key_text(key)
            difference = first_difference(found.get(key, ABSENT), expected.get(key, ABSENT), here)
            if difference is not None:
                return difference
        return None
    if isinstance(expected, list) and isinstance(found, list):
        for i, (a, b) in enumerate(zip(found, expected, strict=False)):
            difference = first_difference(a, b, f"{path}[{i}]")
            if difference is not None:
                return difference
        if len(found) != len(expected):
            i = min(len(found), len(expected))
            return (
                f"{path}[{i}]",
                found[i] if i < len(found) else ABSENT,
                expected[i] if i < len(expected) else ABSENT,
            )
        return None
    if isinstance(expected, (Mapping, list)) or isinstance(found, (Mapping, list)):
        return (path, found, expected)
    return None if _same_scalar(found, expected) else (path, found, expected)


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _key_text(key: Any) -> str:
    # A key of the document is whoever wrote it's text: anything but a plain name is quoted and
    # escaped, so a path never carries markup or terminal control to a reader.
    return key if isinstance(key, str) and _PLAIN_KEY.match(key) else shown(key)


def shown(value: Any, limit: int = 80) -> str:
    """A value as JSON text, escaped (no markup or terminal control reaches a reader), shortened."""
    if value is ABSENT:
        return "(absent)"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value).encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_description(
    raw: Mapping[str, Any], report: Report, describe_family: FamilyDescriber | None = None, where: str = "MANIFEST.json"
) -> None:
    """Rebuild the description of the release the manifest document `raw` says was built and
    report the first path where the manifest differs (an error), and each family whose entry
    could not be rebuilt here (a warning: unchecked, not passed)."""
    if "multitone_design" in raw and (problem := record_problem(raw["multitone_design"])):
        # A record that is no design asks the builder for nothing: said as itself, not as the
        # drives a default design would have described.
        key, why = problem
        path = f"multitone_design.{key}" if key else "multitone_design"
        report.error(
            "description",
            where,
            path,
            "a design mathbode-build records (--realizations, --periods, --rms-level)",
            f"{path}: {shown(raw['multitone_design'].get(key) if key else raw['multitone_design'])}: {why}",
        )
        return
    request = request_of(raw)
    describer = describe_family or canonical_family
    found = description_of(raw)
    unknown: list[str] = []

    def entry_of(name: str) -> dict[str, Any] | None:
        entry = describer(name)
        if entry is not None:
            return entry
        # Taken as found, so the rest of the description is still compared: what a family's
        # entry says needs its definition, which this installation does not have.
        unknown.append(name)
        said = found["families"].get(name)
        return {k: v for k, v in said.items() if k != "files"} if isinstance(said, Mapping) else None

    expected = describe(request, entry_of)
    for name in unknown:
        origin = raw["families"][name].get("origin")
        package = shown(origin.split()[0])[1:-1] if isinstance(origin, str) and origin.split() else None
        how = f"install {package}: pip install {package}" if package else "validate it where the family is installed"
        what = (
            f"a family of {shown(origin)[1:-1]}, not installed here"
            if package
            else "a family this installation does not know"
        )
        report.warning(
            "description-unchecked",
            where,
            f"families.{name}",
            f"a family this installation can describe ({how})",
            f"{name}: its version, origin and pairing were not checked: {what}",
        )
    difference = first_difference(found, expected)
    if difference is None:
        return
    path, have, want = difference
    report.error(
        "description",
        where,
        path,
        "what mathbode-build writes for this release's families, drives, variants and seed (rebuild the "
        "release with mathbode-build, or restore the MANIFEST.json it wrote)",
        f"{path}: {shown(have)}, the builder's {shown(want)}",
    )


def unencodable_path(document: Any, path: str = "") -> str | None:
    """The path of the first key or string of a parsed JSON document that is not valid Unicode
    (a lone surrogate, which JSON's `\\ud800` escape can spell), or None."""
    stack: list[tuple[str, Any]] = [(path, document)]
    while stack:  # a loop, not recursion: a document may nest as deep as its parser allowed
        here, value = stack.pop()
        if isinstance(value, str):
            if not _encodable(value):
                return here or "(the document)"
        elif isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                if not _encodable(key):
                    return f"{here}.(a key)" if here else "(a key)"
                stack.append((f"{here}.{_key_text(key)}" if here else _key_text(key), item))
        elif isinstance(value, list):
            stack.extend((f"{here}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
