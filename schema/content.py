"""Is a release the canonical MathBode, and is every row true?

A family whose rows hash to the canonical content hash (`release_hashes`) is proved canonical:
no edit can keep that hash. For any other family, its rows are compared with the truth, the
family's rows recomputed from its definition by the builder (given as `truth`, since this room
does not import the builder), and each wrong row is named: file order first (a row holding
another row's key), then `p_value` (the drive's value at the key), `prompt` (the rendering of
that value) and `ground_truth` (the exact answer at that value).

A release may hold families this installation does not know (a plugin's, not installed): `truth`
gives None for them. Their layout and counts are checked as every family's are; their content
cannot be, and the report says so as a warning naming the package that would check it (the
manifest's `origin`), never as an error: such a release is valid when its layout and counts are.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

from .drives import MultitoneDesign
from .keys import format_key, row_key
from .layout import layout
from .release_hashes import RELEASE_CONTENT_HASHES, release_content_hash
from .report import Report

#: family -> its canonical rows, recomputed from the family's definition (None: a family this
#: installation does not know, whose content cannot be checked here).
TruthRows = Callable[[str], "pa.Table | None"]
#: The columns a row's truth is made of, in the order a reader should hear about them.
CONTENT_COLUMNS = ("p_value", "prompt", "ground_truth")


def _differing(a: pa.ChunkedArray, b: pa.ChunkedArray) -> np.ndarray:
    """Row positions where two equally long columns differ (a null equals only a null)."""
    import pyarrow.compute as pc  # here: the build reaches this module and never compares (40 ms)

    unequal = pc.fill_null(pc.not_equal(a, b), False)
    one_null = pc.xor(pc.is_null(a), pc.is_null(b))
    return np.flatnonzero(pc.or_(unequal, one_null).to_numpy(zero_copy_only=False))


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _row_text(row: dict) -> str:
    """A row's key as a reader sees it; a row that fails its schema (a chirp with a phase, a
    sinusoid without one: its own error names it) by its key fields as they are."""
    try:
        return format_key(row_key(row))
    except (TypeError, ValueError, KeyError):
        return "(" + ", ".join(f"{name}={_shown(row.get(name))}" for name in layout().key) + ")"


def compare_rows(
    table: pa.Table, truth: pa.Table, report: Report, where: str, columns: tuple[str, ...] = CONTENT_COLUMNS
) -> None:
    """Name every row of `table` that differs from the family's true rows (same length, same columns)."""
    lay = layout()
    key_rows = sorted({int(i) for column in lay.key for i in _differing(table[column], truth[column])})
    for i in key_rows:
        report.error(
            "row-order",
            f"{where} row {i}",
            "",
            "the rows in canonical order",
            f"{_row_text(table.slice(i, 1).to_pylist()[0])}, where the canonical row is "
            f"{_row_text(truth.slice(i, 1).to_pylist()[0])}",
        )
    wrong_keys = set(key_rows)
    for column in columns:
        for i in map(int, _differing(table[column], truth[column])):
            if i in wrong_keys:
                continue
            row = table.slice(i, 1).to_pylist()[0]
            report.error(
                "content",
                f"{where} row {i} {_row_text(row)}",
                column,
                f"the {column} recomputed from the family's definition",
                f"{_shown(row[column])}, where the true value is {_shown(truth[column][i].as_py())}",
            )


def split_note(family: str, split: dict[str, str]) -> tuple[str, str]:
    """(expected, found) of the warning for a split's family whose rows this check could not draw."""
    if "seed" in split:
        how = f"a fresh split of seed {split['seed']!r}: `mathbode validate` draws it again and compares every row"
    else:
        how = (
            "a private split: only its keeper, who holds the seed, can draw its rows again "
            "(`mathbode validate --seed SEED`)"
        )
    return ("rows drawn again from the split's seed", f"{family}: content not checked here: {how}")


def unchecked_note(family: str, origin: str | None) -> tuple[str, str]:
    """(expected, found) of the warning for a family whose content this installation cannot check."""
    if origin:
        package = origin.split()[0]
        return (
            f"rows this installation can recompute (install the plugin that defines it: pip install {package})",
            f"{family}: content not checked: a family of {origin}, not installed here; "
            "its layout and counts were checked",
        )
    return (
        "rows this installation can recompute",
        f"{family}: content not checked: a family this installation does not know; its layout and counts were checked",
    )


def check_content(
    tables: dict[str, tuple[str, pa.Table]],
    hashes: dict[str, str],
    report: Report,
    truth: TruthRows | None,
    origins: dict[str, str | None] | None = None,
    split: dict[str, str] | None = None,
    prompts_only: bool = False,
    drives: str = "standard",
    questions: int | None = None,
    design: MultitoneDesign | None = None,
) -> bool:
    """Check each family's rows (family -> (file, table)) against the canonical content, or, for
    a family that is not one of the canonical five, against its truth when this installation
    knows it (`origins`: family -> the package that defines it, from the manifest). `questions`:
    the problems a family holds (`mathbode-build --questions`; None: the layout's); `design`: a
    multi-tone release's design (None: the layout's).

    True when every family is canonical."""
    canonical = True
    columns = tuple(c for c in CONTENT_COLUMNS if not (prompts_only and c == "ground_truth"))
    for family, (where, table) in tables.items():
        if hashes[family] == RELEASE_CONTENT_HASHES.get(family):
            continue
        canonical = False
        grid = layout(drives, questions) if drives == "standard" else layout(drives, None, design)
        if table.num_rows != grid.rows_per_family:
            continue  # the row count error already says what is wrong
        if drives != "standard":  # multi-tone rows: no published hash, the builder's rows say
            driven = truth(family) if truth is not None else None
            if driven is None:
                report.warning(
                    "content-unchecked",
                    where,
                    "family",
                    "rows this installation can recompute",
                    f"{family}: {drives} rows whose content was not checked; their layout and counts were",
                )
            elif driven.num_rows == table.num_rows:  # else the row count's own error says what is wrong
                compare_rows(table, driven.select(table.column_names), report, where, columns)
            continue
        if split is not None:
            drawn = truth(family) if truth is not None else None
            if drawn is None:
                report.warning("content-unchecked", where, "family", *split_note(family, split))
            else:
                drawn = drawn.select(table.column_names)
                compare_rows(table, drawn, report, where, columns)
            continue
        known = family in RELEASE_CONTENT_HASHES
        true_rows = truth(family) if truth is not None else None
        if true_rows is None and not known:
            expected, found = unchecked_note(family, (origins or {}).get(family))
            report.warning("content-unchecked", where, "family", expected, found)
            continue
        if truth is None:
            report.error(
                "content",
                where,
                "",
                f"the canonical rows of {family} (content {RELEASE_CONTENT_HASHES.get(family)})",
                f"rows with content {hashes[family]} (mathbode-validate names the rows that differ)",
            )
            continue
        if true_rows is None:  # a canonical family the truth does not know: its hash alone says it is wrong
            report.error(
                "content",
                where,
                "",
                f"the canonical rows of {family} (content {RELEASE_CONTENT_HASHES.get(family)})",
                f"rows with content {hashes[family]}",
            )
            continue
        before = report.num_errors
        compare_rows(table.select(true_rows.column_names), true_rows, report, where)
        if report.num_errors == before and known:  # same values, other bytes (e.g. types): still not canonical
            report.error("content", where, "", f"content {RELEASE_CONTENT_HASHES.get(family)}", hashes[family])
    return canonical and len(tables) > 0


def verdict(
    canonical: bool,
    hashes: dict[str, str],
    valid: bool = True,
    name: str | None = None,
    content: str | None = None,
    split: str | None = None,
) -> str:
    """The one line a leaderboard keeper reads: canonical release or not (`name` and `content`:
    the release's, from its manifest, said for a release of other families; `split`: a fresh
    split's prompts hash)."""
    everything = list(layout().families)
    if split is not None:
        if not valid:
            return f"NOT a valid release: split {name} (prompts {split}) fails the checks above"
        return f"fresh split {name}, prompts {split}: not the canonical MathBode release (ranked apart from it)"
    others = [f for f in hashes if f not in everything]
    if others:
        which = f"release {name}, content {content}" if name and content else "rows"
        if not valid:
            return f"NOT a valid release: {which}, families {', '.join(hashes)}, fails the checks above"
        return (
            f"{which}: families {', '.join(hashes)}, not the canonical MathBode release "
            "(its scores are ranked apart from the canonical release's)"
        )
    if canonical and not valid:
        return "NOT a canonical release: its rows are the canonical content, but the release fails the checks above"
    if canonical and list(hashes) == everything:
        return f"canonical release: MathBode, content {release_content_hash()}"
    if canonical:
        names = ", ".join(hashes)
        return f"canonical rows of {names} (not the whole release: {len(hashes)} of {len(everything)} families)"
    return "NOT a canonical release: its rows differ from the canonical MathBode content"
