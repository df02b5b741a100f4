"""Every identity a release's manifest records, recomputed from its rows and compared.

A fresh split's rows are checked by drawing them again from its seed, any other release's by its
content hashes; the manifest's other records (the prompts hashes, the truth's facts, a split's
overlap with the canonical release) are claims about those rows, in every release, and a claim
nobody recomputes can be edited at will. So each is recomputed here from what the release holds
and a difference is an error (a release from before a record existed may lack it, a split not). A private split's
seed is not in the release, but every one of these records is checkable without it. (Its canary,
a function of the seed's commitment, is part of the release's description: `schema.description`.)
"""

from __future__ import annotations

import math

import pyarrow as pa

from .layout import layout
from .manifest import MANIFEST, Manifest
from .packaged import packaged_rows
from .report import Report
from .splits import prompts_hash, split_hash
from .truth_facts import truth_facts
from .universe import CANONICAL_RELEASE


def _canonical_prompts() -> set[str]:
    return {p for name in layout().families for p in packaged_rows(name).column("prompt").to_pylist()}


def check_split_identity(
    manifest: Manifest, tables: dict[str, tuple[str, pa.Table]], report: Report, prompts_only: bool
) -> None:
    """Recompute what `manifest` records of its split from `tables` (family -> (file, rows)) and
    report every record that differs. Families whose file could not be read are skipped (their
    file's own error says why)."""
    split = manifest.split is not None
    recomputed: dict[str, str] = {}
    for family, entry in manifest.families.items():
        if family not in tables:
            continue
        where, table = tables[family]
        found = prompts_hash(table)
        recomputed[family] = found
        if entry.prompts_hash != found and (entry.prompts_hash is not None or split):
            report.error(
                "split",
                MANIFEST,
                f"families.{family}.prompts_hash",
                f"{found}, the hash of the prompts {where} holds",
                str(entry.prompts_hash),
            )
        if prompts_only:
            continue  # no truth in the rows: its facts are the keeper's to check on the full split
        facts = truth_facts(table)
        if facts is None:  # rows with no 1-cycle sinusoid (multi-tone): no facts to claim
            if entry.truth is not None:
                report.error(
                    "split",
                    MANIFEST,
                    f"families.{family}.truth",
                    f"none: {where} holds no sinusoid to read them on",
                    "facts",
                )
            continue
        if entry.truth is None and not split:
            continue  # recorded by builders since 0.1.0's splits; an older release has none
        said = entry.truth or {}
        for name, value in facts.items():
            claimed = said.get(name)
            if not isinstance(claimed, (int, float)) or isinstance(claimed, bool) or not math.isclose(claimed, value):
                report.error(
                    "split",
                    MANIFEST,
                    f"families.{family}.truth.{name}",
                    f"{value!r}, as the rows of {where} give it",
                    repr(claimed),
                )
    if len(recomputed) == len(manifest.families):
        whole = split_hash([recomputed[f] for f in manifest.families])
        if manifest.prompts_hash != whole and (manifest.prompts_hash or split):
            report.error(
                "split", MANIFEST, "prompts_hash", f"{whole}, the hash of the families' prompts", manifest.prompts_hash
            )
        if split:
            _check_overlap(manifest, tables, report)


def _check_overlap(manifest: Manifest, tables: dict[str, tuple[str, pa.Table]], report: Report) -> None:
    """The overlap with the canonical release is recomputed; with earlier splits (not here to
    read), only what the release itself fixes: how many distinct prompts it holds."""
    ours = {p for _, table in tables.values() for p in table.column("prompt").to_pylist()}
    overlap = manifest.overlap or {}
    if CANONICAL_RELEASE not in overlap:
        report.error(
            "split", MANIFEST, "overlap", f"an entry {CANONICAL_RELEASE!r} (prompts in common with it)", "none"
        )
    for label, said in overlap.items():
        if said.get("of") != len(ours):
            report.error(
                "split", MANIFEST, f"overlap.{label}.of", f"{len(ours)}, the distinct prompts", repr(said.get("of"))
            )
        common = said.get("prompts_in_common")
        if label == CANONICAL_RELEASE:
            expected = len(ours & _canonical_prompts())
            if common != expected:
                report.error(
                    "split",
                    MANIFEST,
                    f"overlap.{label}.prompts_in_common",
                    f"{expected}, the prompts it shares with the canonical release",
                    repr(common),
                )
        elif not isinstance(common, int) or common > len(ours):
            report.error("split", MANIFEST, f"overlap.{label}.prompts_in_common", f"at most {len(ours)}", repr(common))
