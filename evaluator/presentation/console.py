"""What `mathbode score` prints: the console's tables, rendered from results read back from their
documents, with report.md's cells (report.py) and numbers (text.py), so the two never disagree."""

from __future__ import annotations

import json
from typing import Any

from ..ranking import groups
from ..results import Results
from .comparison import describe
from .files import FAMILY_COLUMNS
from .report import (
    BRACKETS,
    accuracy_text,
    answers_text,
    compliance_note,
    conditions_notes,
    coverage_notes,
    diagnostics_lines,
    evidence_lines,
    family_noise_text,
    interval_notes,
    interval_text,
    level_text,
    multitone_table,
    na_notes,
    pooled_lines,
    repeatability_text,
    variants_evidence,
    variants_table,
)
from .text import number_text

#: The family column's least width (the canonical names fit; a longer name widens it).
FAMILY_WIDTH = 22


def text_table(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """A fixed-width table: each column as wide as its widest cell, two spaces apart."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return indent + "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), *(line(row) for row in rows)]


def headline_lines(results: list[Results]) -> list[str]:
    """The ranking: one line a submission, its headline scores with their intervals."""
    lines = []
    width = max(10, *(len(r.label) for r in results))
    wide = any("intervals" in r.extra for r in results)
    core_w = 25 if wide else 7
    grouped = groups(results)
    if grouped:
        head = f"{'submission':<{width}}  {'preset':<8}  {'MB-Core':>{core_w}}  MB-Plus"
        lines.append(f"{head}  {'cal. MB-Plus':>{core_w}}  families")
    for label, members in grouped:
        if len(grouped) > 1:
            lines.append(f"-- {label} (ranked apart) --")
        for r in members:
            mark = "*" if conditions_notes(r) else " "
            lines.append(
                f"{r.label:<{width}}{mark} {r.preset:<8}  {interval_text(r, 'mb_core'):>{core_w}}  "
                f"{number_text(r.overall['mb_plus']):>7}  {interval_text(r, 'mb_plus_calibrated'):>{core_w}}  "
                f"{r.overall['num_families']:>8}"
            )
    return lines


def notes_of(results: list[Results]) -> list[str]:
    """The notes under the ranking: coverage, conditions, why n/a, the units of the intervals."""
    notes = coverage_notes(results)
    for r in results:
        said = compliance_note(r)
        if said and r.extra["non_compliant"]["compliant"] > 0:
            notes.append(f"{r.label}: {said}")
        notes += [f"{r.label}{'*' if len(results) > 1 else ''}: {n}." for n in conditions_notes(r)]
        notes += [f"{r.label}: {n}" for n in na_notes(r)]
        notes += [f"{r.label}: {n}." for n in interval_notes(r)]
        if len(results) == 1 or not r.extra.get("num_sweeps"):
            notes.append(f"{r.label}: {answers_text(r)}.")
        if said_repeat := repeatability_text(r):
            notes.append(f"{r.label}: {said_repeat}.")
        for family, d in r.extra.get("dynamics", {}).items():
            notes.append(f"{r.label}: {family} dynamics: {d['verdict']}.")
            notes += [f"{r.label}: {family}: {flag}." for flag in d.get("flags", [])]
        if len(results) > 1:  # one submission gets the tables below; several, a line each
            notes += [f"{r.label}: {line}" for line in multitone_notes(r)]
        for family, why in (r.extra.get("multitone", {}).get("not_measured") or {}).items():
            notes.append(f"{r.label}: {family} multi-tone: {why}.")
        if len(results) > 1:
            notes += [f"{r.label}: GAP: {line}" for line in [*pooled_lines(r), *variants_evidence(r)]]
    return notes


def multitone_notes(r: Results) -> list[str]:
    """Each family's multi-tone verdict in a line (several submissions: no room for a table each)."""
    families = r.extra.get("multitone", {}).get("families") or {}
    return [
        f"{family} multi-tone: {m['verdict']} (distortion {level_text(m['distortion_db'], m['floor_db'], ' dB')}; "
        f"added even {level_text(m['even_added_db'], m['floor_db'], ' dB')}, odd "
        f"{level_text(m['odd_added_db'], m['floor_db'], ' dB')}; noise {family_noise_text(m)})."
        for family, m in families.items()
    ]


def family_lines(r: Results) -> list[str]:
    """The per-family table; the family column as wide as the longest name (a paired release's
    `exponential_interest__kernel`), so the columns stay under their heads."""
    if not r.families:
        return []
    width = max(FAMILY_WIDTH, *(len(f) for f in r.families))
    lines = [f"{'family':<{width}}" + "".join(f"  {name:>{max(8, len(name))}}" for _, name, _ in FAMILY_COLUMNS)]
    for fam, s in r.families.items():
        cells = "".join(f"  {number_text(s.get(k), d):>{max(8, len(name))}}" for k, name, d in FAMILY_COLUMNS)
        lines.append(f"{fam:<{width}}{cells}")
    return lines


def paired_lines(r: Results) -> list[str]:
    """A paired release read in pairs: GAP's headline per variant kind, then the paired table
    (report.md's, an adjusted McNemar p below 0.05 marked '*')."""
    found = r.extra.get("variants")
    if not found:
        return []
    entries = [v for by_kind in found.values() for v in by_kind.values()]
    originals = r.overall.get("num_families")
    lines = [
        f"GAP, paired (docs/variants.md): the overall above is over the {originals} original "
        f"{'family' if originals == 1 else 'families'}; each variant "
        "is read against its original on the same rows."
    ]
    lines += [f"  {line}" for line in pooled_lines(r)]
    # The console has no bold: its table marks an adjusted p below 0.05 with '*'.
    lines += [f"  {line.replace('bold marks', '* marks')}" for line in evidence_lines(entries)]
    header, rows, _ = variants_table(found, bold=False)
    return [*lines, *text_table(header, rows)]


def multitone_console_lines(r: Results) -> list[str]:
    """The multi-tone verdicts per family (report.md's table; docs/multitone.md)."""
    reading = r.extra.get("multitone", {})
    families = reading.get("families") or {}
    if not families:
        return []
    overall = reading.get("summary", {}).get("distortion_db")
    return [
        "multi-tone (docs/multitone.md; levels in dB relative to the exact answers' mean level at the excited lines; "
        f"overall distortion {number_text(overall, 1)} dB):",
        *text_table(*multitone_table(families)),
    ]


def table_text(results: list[Results], tests: list[dict[str, Any]]) -> str:
    """The console's text, rendered from results read back from their documents."""
    lines = []
    # Nothing compliant is the first thing to say, before a table of n/a.
    for r in results:
        nc = r.extra.get("non_compliant")
        if nc and nc["lines"] and nc["compliant"] == 0:
            lines.append(f"{r.label}: {compliance_note(r)}")
            lines += [f"  e.g. {json.dumps(e, ensure_ascii=False)[:160]}" for e in nc["examples"][:3]]
            lines.append("")
    lines += headline_lines(results)
    notes = notes_of(results)
    if any("intervals" in r.extra for r in results) and groups(results):
        notes.append(f"brackets: {BRACKETS}; cal. = calibrated (exact answers score 1).")
    lines += [f"note: {line}" for line in notes]
    for test in tests:
        lines += [f"test: {line}" for line in describe(test)]
    if len(results) == 1:
        r = results[0]
        for block in (family_lines(r), paired_lines(r), multitone_console_lines(r), diagnostics_lines(r)):
            if block:
                lines += ["", *block]
        accuracy = r.extra.get("accuracy")
        if accuracy and accuracy["rows"]:
            lines.append(accuracy_text(accuracy))
    return "\n".join(lines)
