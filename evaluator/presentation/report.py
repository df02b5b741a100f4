"""The report folder: scores.json, sweeps.csv, frequency_summary.csv, report.md and Bode plots."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Mapping, Sequence

from markupsafe import escape

from mathbode.core.atomic import atomic_folder, check_replaceable
from mathbode.core.errors import UsageError
from mathbode.core.names import check_inside, file_name
from mathbode.schema.parsing import NON_COMPLIANT_KINDS

from ..ranking import conditions_label, groups, unranked
from ..results import (
    HEADLINE,
    Rendering,
    Results,
    dumps,
    from_document,
    json_safe,
    read_comparisons,
    read_document,
    to_document,
)
from ..table import Table
from .background import BackgroundPlotter, draw_here
from .comparison import describe
from .files import (
    COMPARISONS_FILE,
    DEFAULT_FIGURES,
    FAMILY_COLUMNS,
    LEADERBOARD_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    SCORES_FILE,
    FigureOptions,
    report_figures,
    write_tables,
)
from .text import p_text, signed_text, value_text

_num = value_text
_signed = signed_text


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a `|` inside a cell (`|G-1| mid`) is escaped, or it would split the cell."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(header), "|" + "---|" * len(header)] + [line(r) for r in rows]


def leaderboard(results: list[Results]) -> Table:
    """One row per submission: ranked within its group of equal conditions (best MB-Core first,
    MB-Plus breaking ties), with intervals when computed; files with no sinusoid sweep last, unranked."""
    rows = []
    ordered: list[tuple[str, int | None, Results]] = [
        (label, rank + 1, r) for label, members in groups(results) for rank, r in enumerate(members)
    ]
    ordered += [(conditions_label(r), None, r) for r in unranked(results)]
    for label, rank, r in ordered:
        row: dict[str, Any] = {"group": label, "rank": rank, "label": r.label, "model": r.model, "preset": r.preset}
        bounds = r.extra.get("intervals", {}).get("overall") or {}
        for name in HEADLINE:
            row[name] = r.overall.get(name, math.nan)
            if "intervals" in r.extra:
                low, high = bounds.get(name) or (math.nan, math.nan)
                row[f"{name}_low"], row[f"{name}_high"] = low, high
        accuracy = r.extra.get("accuracy", {})
        row["exact_rows"] = accuracy.get("rate", math.nan)
        wilson = accuracy.get("wilson_95") or (math.nan, math.nan)
        row["exact_rows_low"], row["exact_rows_high"] = wilson
        rep = r.extra.get("repeatability", {})
        row["repeatability"] = rep["overall"]["identical_share"] if rep.get("measured") else math.nan
        row["num_sweeps"] = len(r.sweeps)
        row["num_families"] = r.overall["num_families"]
        row.update(r.extra.get("conditions") or {})
        for fam, s in r.families.items():
            row[f"{fam}.mb_core"] = s["mb_core"]
        rows.append(row)
    return Table.from_rows(rows)  # `rank` stays whole numbers, empty for an unranked file


def interval_text(r: Results, name: str, digits: int = 4) -> str:
    """'0.8123 [0.7950, 0.8301]' (the interval only when computed; '0.8123 [no interval]' when
    computed and withheld: `interval_notes` says why)."""
    estimate = r.overall.get(name, math.nan)
    value = _num(estimate, digits)
    intervals = r.extra.get("intervals")
    bounds = r.extra.get("intervals", {}).get("overall", {}).get(name)
    if bounds:
        return f"{value} [{_num(bounds[0], digits)}, {_num(bounds[1], digits)}]"
    if intervals and estimate == estimate:
        return f"{value} [no interval]"
    return value


#: Score names as a reader sees them.
SCORE_NAMES = {
    "mb_core": "MB-Core",
    "mb_plus": "MB-Plus",
    "mb_core_calibrated": "cal. MB-Core",
    "mb_plus_calibrated": "cal. MB-Plus",
}


def interval_notes(r: Results) -> list[str]:
    """Why an overall score that has a value got no 95 % interval, in words (one line per reason)."""
    intervals = r.extra.get("intervals", {})
    reasons = intervals.get("no_interval") or {}
    by_reason: dict[str, list[str]] = {}
    for name in HEADLINE:
        why = reasons.get(f"overall.{name}")
        estimate = r.overall.get(name, math.nan)
        if why and estimate == estimate:
            by_reason.setdefault(why, []).append(SCORE_NAMES[name])
    lines = [f"no 95 % interval for {', '.join(names)}: {why}" for why, names in by_reason.items()]
    if "n_units" in intervals and any(bounds for bounds in (intervals.get("overall") or {}).values()):
        families = len(intervals.get("families") or {}) or 1
        problems = intervals["problems"]
        within = " (one a family): they speak of these problems, not of others" if problems <= families else ""
        lines.append(f"the 95 % intervals are over {intervals['n_units']:,} sweeps of {problems:,} problems{within}")
    return lines


#: What the brackets are and what they leave out (the console's note, for any number of runs).
BRACKETS = (
    "95 % intervals from the spread of the sweeps within each (family, frequency) cell (t intervals, "
    "coverage measured by simulation in benchmarks/bench_coverage.py). They include only the sampling error "
    "of the sweeps, not systematic error: a sequential run's start-up transient (no run-in: every sweep's first "
    "steps answer the cold start, not the steady state) and the truncation of answers to six decimals bias "
    "every sweep alike and are not in them"
)


def brackets(r: Results) -> str:
    """BRACKETS for one run: whether its sweeps started cold is a fact of the run, so it is said."""
    cond = r.extra.get("conditions") or {}
    run_in = cond.get("run_in", "0")
    if cond.get("protocol", "stateless") != "sequential":
        start = "this run is stateless: each answer is asked alone, so no answer carries a start-up transient"
    elif run_in.isdigit() and int(run_in) > 0:
        start = (
            f"this run had a run-in of {run_in} steps before step 0, so a memory shorter than that has settled "
            "before the scored steps (a longer one is flagged under Dynamics)"
        )
    else:
        start = (
            "this run had no run-in: every sweep's first steps answer the cold start, not the steady state, and "
            "bias every sweep alike"
        )
    return (
        "95 % intervals from the spread of the sweeps within each (family, frequency) cell (t intervals, "
        "coverage measured by simulation in benchmarks/bench_coverage.py). They include only the sampling error "
        f"of the sweeps, not systematic error such as a sequential run's start-up transient ({start}) or the "
        "truncation of answers to six decimals"
    )


def diagnostics_lines(r: Results) -> list[str]:
    """The chirp, step and agreement figures of one submission, as fixed-width text."""
    diag = r.extra.get("diagnostics")
    if not diag:
        return []
    lines = []
    if diag["chirp"]:
        first = next(iter(diag["chirp"].values()))["at"]
        heads = [
            f"{k}" if abs(p["frequency_cycles"] - p["requested"]) < 1e-9 else f"{k} (at {p['frequency_cycles']:.2f})"
            for k, p in first.items()
        ]
        lines.append("chirp: gain / phase error (deg) against instantaneous frequency (cycles per 64 steps)")
        lines.append(f"  {'family':<22}" + "".join(f"{h:>18}" for h in heads))
        for fam, c in diag["chirp"].items():
            cells = [f"{_num(p['gain'], 3)} / {_signed(p['phase_err_deg'], 1)}" for p in c["at"].values()]
            lines.append(f"  {fam:<22}" + "".join(f"{cell:>18}" for cell in cells))
    if diag["step"]:
        names: Final = (
            *("pre_error", "steady_state_error", "overshoot", "dead_time"),
            *("rise_time", "settling_time", "delay"),
        )
        lines.append(
            "step response (normalised by the truth's jump; times in steps after the switch; rise 10-90 %, "
            "after the dead time)"
        )
        lines.append(f"  {'family':<22}" + "".join(f"{n:>19}" for n in names))
        for fam, s in diag["step"].items():
            lines.append(
                f"  {fam:<22}"
                + "".join(f"{_signed(s[n], 4) if n.endswith('error') else _num(s[n], 2):>19}" for n in names)
            )
    if diag["agreement"]:
        lines.append(
            "agreement (0 for a unit-gain pure delay; other linear systems read values of their own, a "
            "first-order low-pass with a = 0.2 +1.3 steps and +0.07, so compare with the dynamics fit):"
        )
        for fam, a in diag["agreement"].items():
            parts = []
            for name, value in a.items():
                if isinstance(value, dict):
                    parts.append(
                        f"{name} gain {_signed(value['gain'], 3)}, phase {_signed(value['phase_err_deg'], 1)} deg"
                    )
                else:
                    parts.append(f"{name} {_signed(value, 3)}")
            lines.append(f"  {fam}: " + "; ".join(parts))
    return lines


def dynamics_lines(r: Results) -> list[str]:
    """The system each family's sequential answers show (`dynamics`), as Markdown lines."""
    found = r.extra.get("dynamics")
    if not found:
        return []

    def bracket(iv: Sequence[float | None] | None, digits: int) -> str:
        if not iv:
            return ""
        high = "no bound" if iv[1] is None else f"{iv[1]:.{digits}f}"
        return f" [{iv[0]:.{digits}f}, {high}]"

    header = [
        "family",
        "verdict",
        "delay (steps) [95 %]",
        "delay residual",
        "low-pass a [95 %]",
        "time constant (steps) [95 %]",
        "low-pass residual",
    ]
    rows, flags, notes = [], [], set()
    for family, d in found.items():
        if "delay_steps" not in d:
            rows.append([family, d["verdict"], *["n/a"] * 5])
            continue
        rows.append(
            [
                family,
                d["verdict"],
                f"{d['delay_steps']:.2f}{bracket(d['delay_interval'], 2)} (mod {d['delay_period_steps']:g})",
                f"{d['delay_residual']:.3f}",
                f"{d['low_pass_a']:.3f}{bracket(d['low_pass_a_interval'], 3)}",
                f"{d['time_constant_steps']:.2f}{bracket(d.get('time_constant_interval'), 2)}",
                f"{d['low_pass_residual']:.3f}",
            ]
        )
        flags += [f"{family}: {flag}" for flag in d.get("flags", [])]
        if d.get("interval_note"):
            notes.add(d["interval_note"])
    lines = [
        "Dynamics (sequential protocol): each family's mean complex response across frequencies, fitted by a "
        "pure delay and by a first-order low-pass y_t = y_{t-1} + a (x_t - y_{t-1}); each fit's residual is its "
        "relative misfit (0: exact). A lag is named only when the delay lies beyond noise of 0 at 99.9 % (see How "
        "to read: dynamics).",
        "",
        *_table(header, rows),
    ]
    lines += [""] + [f"- **{flag}**" for flag in flags] if flags else []
    lines += [""] + [f"- {note}" for note in sorted(notes)] if notes else []
    return lines


def _diff_bracket(iv: list[float | None] | None, digits: int = 4) -> str:
    if not isinstance(iv, list) or not iv:  # null reads back from a document as NaN
        return " (no interval)"
    # A time constant's upper bound is null when the memory has no end; a bound that rounds to 0
    # reads "+0.00" as it always has, never "-0.00".
    return " [" + ", ".join("inf" if x is None else _bound_text(x, digits) for x in iv) + "]"


def _bound_text(x: float, digits: int) -> str:
    text = signed_text(x, digits)
    return text if text.startswith(("+", "-")) or text == "n/a" else "+" + text


def variants_table(found: dict[str, Any], bold: bool = True) -> tuple[list[str], list[list[str]], bool]:
    """(header, rows, sequential) of GAP's paired table: one row a variant, report.md's and the
    console's alike (`bold`: Markdown's mark of an adjusted p below 0.05; the console's is '*')."""
    header = [
        "family",
        "variant",
        "kind",
        "MB-Core diff [95 %]",
        "|G-1| diff",
        "phase diff (deg)",
        "exact units",
        "McNemar p (Holm) [discordant]",
    ]
    # A sequential run's entries carry the dynamics difference (stateless ones have none to compare).
    sequential = any("delay_diff_steps" in v or "dynamics_diff_note" in v for k in found.values() for v in k.values())
    if sequential:
        header += ["delay diff (steps) [95 %]", "time constant diff (steps) [95 %]"]
    rows = []
    for original, by_kind in found.items():
        for kind, v in by_kind.items():
            row = [
                original,
                kind,
                v["kind"],
                f"{_signed(v['mb_core_diff'], 4)}{_diff_bracket(v['mb_core_diff_interval'])}",
                _signed(v["gain_error_diff"], 4),
                _signed(v["phase_err_diff_deg"], 2),
                exact_units_text(v),
                mcnemar_text(v, bold),
            ]
            if sequential:
                if "delay_diff_steps" in v:
                    row += [
                        f"{_signed(v['delay_diff_steps'], 2)}{_diff_bracket(v['delay_diff_interval'], 2)}",
                        _signed(v["time_constant_diff_steps"], 2) + _diff_bracket(v["time_constant_diff_interval"], 2),
                    ]
                else:
                    row += ["not measured", "not measured"]
            rows.append(row)
    return header, rows, sequential


def variants_lines(r: Results) -> list[str]:
    """GAP's paired comparison of each variant with its original (`variants`), as Markdown lines."""
    found = r.extra.get("variants")
    if not found:
        return []

    header, rows, sequential = variants_table(found)
    entries = [v for by_kind in found.values() for v in by_kind.values()]
    notes = sorted({v["dynamics_diff_note"] for k in found.values() for v in k.values() if "dynamics_diff_note" in v})
    return [
        "Variants (GAP, docs/variants.md): each variant minus its original on the same rows; the interval is the "
        "paired t interval, exact the units answered exactly (original -> variant), McNemar's test exact."
        + (
            " Delay and time constant: the identified dynamics, variant minus original, paired sweep by sweep."
            if sequential
            else ""
        ),
        "",
        *[f"- {line}" for line in pooled_lines(r)],
        *([""] if r.extra.get("variants_pooled") else []),
        *evidence_lines(entries),
        "",
        *_table(header, rows),
        *([""] + [f"- {note}" for note in notes] if notes else []),
    ]


def pooled_text(kind: str, pooled: Mapping[str, Any]) -> str:
    """GAP's headline for one kind: 'GS -50.0 pp [-51.2, -48.8] (MB-Core, variant minus original, mean
    over 2 families; 95 % paired t interval over 12 sweeps)'; pp: percentage points of MB-Core."""
    diff, interval = pooled["mb_core_diff"], pooled["mb_core_diff_interval"]
    points = "n/a" if diff is None else signed_text(100 * diff, 1)
    families = len(pooled["families"])
    n, unit = pooled["n_units"], pooled["unit"]
    over = f"{n:,} {unit}{'s' if n != 1 and unit != 'mixed' else ''}" if unit != "mixed" else f"{n:,} units"
    if interval:
        bracket = f"[{signed_text(100 * interval[0], 1)}, {signed_text(100 * interval[1], 1)}]"
        said = f"95 % paired t interval over {over}"
    else:
        bracket, said = "[no interval]", f"no interval: {pooled.get('no_interval')}"
    return (
        f"{kind} {points} pp {bracket} (MB-Core, variant minus original, in percentage points, mean over "
        f"{families} famil{'y' if families == 1 else 'ies'}; {said})"
    )


def pooled_headline(r: Results) -> str | None:
    """GAP's headline in one line: 'DL 0.0 pp [0.0, 0.0]; ...; GS -50.0 pp [-51.2, -48.8] (MB-Core,
    variant minus original, in percentage points, ...)': each kind's number, then what they are once."""
    pooled = r.extra.get("variants_pooled", {})
    if not pooled:
        return None
    said = [pooled_text(kind, p) for kind, p in pooled.items()]
    numbers = "; ".join(text.split(" (MB-Core, ")[0] for text in said)
    what = {text.split(" (MB-Core, ", 1)[1] for text in said}
    # One kind's explanation stands for all when they agree (they do when every kind has its intervals).
    return f"{numbers} (MB-Core, {what.pop()}" if len(what) == 1 else "; ".join(said)


def pooled_lines(r: Results) -> list[str]:
    """GAP's headline per variant kind, pooled over the families (`variants_pooled`); none for a
    document scored before it was computed (its per-family differences are still shown)."""
    pooled = r.extra.get("variants_pooled", {})
    return [pooled_text(kind, p) for kind, p in pooled.items()]


def variants_evidence(r: Results) -> list[str]:
    """The console's lines on a paired release: what the evidence counts, then each pair whose
    Holm-adjusted McNemar p is below 0.05."""
    found = r.extra.get("variants", {})
    entries = [v for by_kind in found.values() for v in by_kind.values()]
    lines = list(evidence_lines(entries))
    for original, by_kind in found.items():
        for kind, v in by_kind.items():
            if (v.get("mcnemar_p_holm") or 1.0) < 0.05:
                lines.append(
                    f"{original} {kind}: exact units {exact_units_text(v)}, McNemar p {p_text(v['mcnemar_p'])} "
                    f"(Holm {p_text(v['mcnemar_p_holm'])}; discordant {v['only_original_exact']}/"
                    f"{v['only_variant_exact']})."
                )
    return lines


def _tests_text(n: int) -> str:
    """'25 McNemar tests, Holm-adjusted over all of them', or '1 McNemar test (nothing to adjust)'."""
    return f"{n} McNemar tests, Holm-adjusted over all of them" if n != 1 else "1 McNemar test (nothing to adjust)"


def exact_units_text(v: Mapping[str, Any]) -> str:
    """'12/17 -> 0/17' (units exact, original -> variant); a document from before units, shares of rows."""
    if "n_units" not in v:
        return f"{_num(v['exact_share_original'], 3)} -> {_num(v['exact_share_variant'], 3)}"
    n = v["n_units"]
    return f"{v['units_exact_original']}/{n} -> {v['units_exact_variant']}/{n}"


def mcnemar_text(v: Mapping[str, Any], bold: bool = True) -> str:
    """'**0.0078** (0.0781) [7/0]': the raw p, bold when the Holm-adjusted one (in brackets) is below
    0.05, and the discordant units (only the original exact / only the variant exact); plain text
    (`bold` False) marks it with '*'."""
    holm = v.get("mcnemar_p_holm")
    raw = p_text(v["mcnemar_p"])
    if holm is None:
        return raw
    shown = raw if holm >= 0.05 else f"**{raw}**" if bold else f"{raw}*"
    return f"{shown} ({p_text(holm)}) [{v['only_original_exact']}/{v['only_variant_exact']}]"


def evidence_lines(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the comparison's evidence counts, in words: its units, its problems, its tests."""
    if not entries or "n_units" not in entries[0]:
        return []
    units = sorted({(e["unit"], e["n_units"], len(e["problems"])) for e in entries})
    counted = "; ".join(units_text(n, unit, k) for unit, n, k in units)
    problems = sorted({q for e in entries for q in e["problems"]})
    within = (
        f" All of it lies within problem {problems[0]}: the intervals are over its sweeps and the tests over its "
        "distinct prompts, which says nothing of other problems (build with `--variants gap --questions N` and "
        "run the PAIRED preset for evidence over problems)."
        if len(problems) == 1
        else " Intervals and tests are over problems (each problem counted once)."
    )
    return [
        f"Evidence per pair: {counted} (rows asking one prompt count once; a unit is exact when most of its "
        f"rows are).{within} {_tests_text(entries[0]['mcnemar_tests'])}: bold marks an adjusted p below 0.05."
    ]


def compliance_note(r: Results) -> str | None:
    """'0 of 1,280 responses were compliant: 1,160 had no answer tags at all; ...', or None when all were."""
    nc = r.extra.get("non_compliant")
    if not nc or nc["compliant"] == nc["lines"]:
        return None
    reasons = "; ".join(f"{n:,} {NON_COMPLIANT_KINDS[kind]}" for kind, n in nc["kinds"].items())
    return f"{nc['compliant']:,} of {nc['lines']:,} answers were compliant: {reasons}."


def method_note(r: Results) -> str | None:
    """What a custom scoring configuration means for the numbers (None for the paper's)."""
    if r.provenance.get("method", "paper") == "paper":
        return None
    c = r.provenance.get("config") or {}
    return (
        f"custom scoring (gain scale {c.get('gain_scale'):g}, phase scale {c.get('phase_scale_deg'):g} deg, "
        f"weights {c.get('gain_weight'):g} and {c.get('phase_weight'):g}; the paper's are 0.25, 45 deg, 0.5 and "
        "0.5): these MB-Core and MB-Plus are not the paper's and not comparable with published numbers"
    )


def answers_text(r: Results) -> str:
    """'41,450 of 43,200 sinusoid rows compliant (MB-Core, MB-Plus); 3,840 of 3,840 chirp and step rows ...'."""
    parts = []
    rows = r.extra.get("num_rows") or 0
    if rows:
        answered = r.extra.get("num_answered", rows)
        compliant = r.extra.get("num_answers", 0)
        if answered < rows:  # not answered is not the same as answered non-compliantly
            parts.append(
                f"{answered:,} of {rows:,} sinusoid rows answered, {compliant:,} of them compliant "
                f"(MB-Core, MB-Plus; {rows - answered:,} not answered)"
            )
        else:
            parts.append(f"{compliant:,} of {rows:,} sinusoid rows compliant (MB-Core, MB-Plus)")
    transient = r.extra.get("transient_answers", {})
    if transient.get("rows"):
        parts.append(
            f"{transient['compliant']:,} of {transient['rows']:,} chirp and step rows compliant "
            "(the chirp and step measurements)"
        )
    multitone = r.extra.get("multitone", {})
    if multitone.get("rows"):
        parts.append(
            f"{multitone['answers']:,} of {multitone['rows']:,} multi-tone rows compliant (the multi-tone measurement)"
        )
    return "; ".join(parts) or "no rows scored"


def repeatability_text(r: Results) -> str | None:
    """'repeatability: 85 prompts answered more than once, 100.0 % of them with the same number each
    time (mean relative spread 0.000 %; in each family's units: linear_solve 0, ...)'."""
    rep = r.extra.get("repeatability")
    if not rep:
        return None
    if not rep.get("measured"):
        return f"repeatability not measured: {rep['note']}"
    o = rep["overall"]
    relative = o.get("spread_relative_mean")
    relative_text = "n/a" if relative is None or not math.isfinite(relative) else f"{100 * relative:.3f} %"
    # Absolute spreads per family only: the families' answers have different units.
    units = ", ".join(f"{name} {_num(f.get('spread_mean'), 6)}" for name, f in (rep.get("families") or {}).items())
    return (
        f"repeatability: {o['repeated_prompts']:,} prompts answered more than once, "
        f"{100 * o['identical_share']:.1f} % of them with the same number each time (mean relative spread of "
        f"their numbers {relative_text}" + (f"; in each family's units: {units})" if units else ")")
    )


STATELESS_PHASE = (
    "What these phases can show (stateless protocol): each row was its own request, and a model "
    "that never sees an earlier step cannot lag. In a sweep that starts at phase 0 (all of SMOKE and "
    "MVP) the phase error of answers that depend only on their prompt is 0 or 180 degrees and nothing "
    "between; away from 0 and 180 there it can only come from answers that differ between repeats of a "
    "prompt. Elsewhere per-prompt errors read as a phase that grows with frequency, from sparse "
    "sampling, not timing. To measure lag, run the sequential protocol (`mathbode run --protocol "
    "sequential`)."
)


def phase_parts_lines(r: Results) -> list[str]:
    """Lag and per-prompt inconsistency per family (`phase_parts`), and what the paper's phase term kept."""
    parts = r.extra.get("phase_parts")
    if not parts:
        return []
    rows = [
        [family, _signed(p["lag_deg"], 2), _num(p["inconsistency_deg"], 2), str(p["pairs"])]
        for family, p in parts.items()
    ]
    return [
        "Phase error in two parts, from the mirrored sweep pairs (start phases 120 and 240 degrees visit the same "
        "values in opposite time order) at the mid-band: **lag**, the part common to a pair (a timing: what a "
        "memory shows), and **per-prompt inconsistency**, the part opposite in the pair (what per-prompt errors do "
        "to a fitted phase; a memoryless model's pair is exactly opposite). The paper's phase term, |mean phase| "
        "of a cell, averages each pair and so measures the lag alone.",
        "",
        *_table(["family", "lag (deg)", "per-prompt inconsistency (deg)", "pairs"], rows),
    ]


STATELESS_MULTITONE = (
    "What the multi-tone reading can show (stateless protocol): each row was its own request, so a deterministic "
    "model is a memoryless map and its BLA phase is 0 by construction; no memory is read from it. The multisine "
    "then tells a smooth bias of the answer map (distortion on a few low-order detection lines, even or odd by "
    "its shape) from prompt-specific inconsistency (a spread across realizations, even and odd lines alike). "
    "To read memory, run the sequential protocol with a run-in (`mathbode run --protocol sequential`)."
)


def _db_text(x: Any) -> str:
    return _num(x, 1)


#: A multi-tone level this far under its family's truncation floor is the rounding of the answers'
#: sixth decimal, not a reading (the exact answers' two-tone "added" read -458.3 dB): it is said
#: "below the floor". So is a level of exactly zero power, which has no dB (null in the document).
BELOW_FLOOR_DB = 20.0
BELOW_FLOOR = "below the floor"


def level_text(x: Any, floor_db: Any, unit: str = "") -> str:
    """A multi-tone level (dB) as a reader takes it: its value (with `unit`), or "below the floor"
    when it is more than BELOW_FLOOR_DB under `floor_db` or is exactly zero (null)."""
    missing = x is None or (isinstance(x, float) and math.isnan(x))  # null reads back as NaN
    floor = None if floor_db is None or (isinstance(floor_db, float) and math.isnan(floor_db)) else floor_db
    if missing or (floor is not None and x < floor - BELOW_FLOOR_DB):
        return BELOW_FLOOR
    return _db_text(x) + unit


def _stochastic_text(m: Mapping[str, Any], stochastic_db: Any) -> str:
    """A BLA line's stochastic distortion: 'not detected' where the spread across realizations is no
    more than the noise (zero beyond it: null), n/a where the noise was not measured, else its level."""
    missing = stochastic_db is None or (isinstance(stochastic_db, float) and math.isnan(stochastic_db))
    if missing:
        return "not detected" if (m.get("noise") or {}).get("measured") else "n/a (noise not measured)"
    return level_text(stochastic_db, m["floor_db"])


def _noise_text(m: Mapping[str, Any], noise_db: Any) -> str:
    """A BLA line's noise: 'none' where every period was answered alike (exactly zero, no dB), else
    the level, or n/a where no realization had two periods to compare."""
    missing = noise_db is None or (isinstance(noise_db, float) and math.isnan(noise_db))  # null reads back as NaN
    return "none" if missing and m.get("periods_identical") is True else _db_text(noise_db)


def memory_text(memory: Mapping[str, Any]) -> str:
    """'found: a delay of 2.00 steps [1.98, 2.02] (residuals: delay 0.000, low-pass 0.231; p < 0.0001 Holm)',
    'none found (delay 0.03 steps, p 0.6300 Holm)', or 'not read (stateless)'."""
    if not memory.get("read"):
        return "not read (stateless)"
    d = _num(memory["delay_steps"], 2)
    tested = f"p {p_text(memory.get('p_value_holm'))} Holm" if "p_value_holm" in memory else None
    if memory.get("found") is not True:
        if memory.get("found") is None and "p_value_holm" in memory:
            return f"not tested (one experiment): delay {d} steps"
        return f"none found (delay {d} steps" + (f", {tested})" if tested else ")")
    residuals = (
        f"residuals: delay {_num(memory.get('delay_residual'), 3)}, low-pass {_num(memory.get('lowpass_residual'), 3)}"
    )
    interval = memory.get("delay_interval")
    model = memory.get("model")
    if model == "low-pass":
        named = (
            f"a first-order low-pass, a {_num(memory['lowpass_alpha'], 3)} "
            f"(tau {_num(memory['time_constant_steps'], 2)} steps, gain {_num(memory.get('lowpass_gain'), 3)})"
        )
    elif model == "delay":
        named = f"a delay of {d} steps" + (f" [{_num(interval[0], 2)}, {_num(interval[1], 2)}]" if interval else "")
    else:
        named = f"a lag of {d} steps that neither a delay nor a low-pass fits"
    return f"found: {named} ({residuals}" + (f"; {tested})" if tested else ")")


def detected_text(m: Mapping[str, Any]) -> str:
    """Whether distortion beyond the noise was found: 'yes', 'no', or 'cannot tell (noise not measured)'."""
    found = m.get("distortion_detected")
    if "distortion_detected" not in m:
        return "n/a"
    return "yes" if found is True else "no" if found is False else "cannot tell (noise not measured)"


def family_noise_text(m: Mapping[str, Any]) -> str:
    """The noise at the detection lines: its level, 'none' (every period alike), or 'not measured'."""
    noise = m.get("noise") or {}
    if not noise.get("measured"):
        return "not measured" if noise else "n/a"
    if m.get("periods_identical") is True:
        return "none"
    return f"{_db_text(noise.get('level_db'))} dB"


def _multitone_tests_lines(families: dict[str, Any]) -> list[str]:
    """How the table's claims were tested: the number of tests, the adjustment, the false-claim rate."""
    first = next(iter(families.values()))
    tests = first.get("distortion_tests") or {}
    if "tests" not in tests:
        return []
    memory = first["memory"].get("tests")
    said = (
        f"Distortion is claimed where the added level stands 20 dB above the floor and beyond the noise measured "
        f"across periods (an F test of the detection lines against it: {tests['tests']} tests, even and odd in "
        f"each family, Holm-adjusted, at a false-claim rate of {tests['claim_rate']:g})"
    )
    if memory:
        said += f"; memory where the fitted delay is beyond 0 ({memory} t tests, Holm-adjusted, the same rate)"
    return [said + ".", ""]


#: The multi-tone verdicts' columns, report.md's and the console's.
MULTITONE_HEADER = [
    "family",
    "verdict",
    "distortion (dB)",
    "even added (dB)",
    "odd added (dB)",
    "noise",
    "floor (dB)",
    "beyond the noise",
    "memory",
]


def multitone_table(families: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the multi-tone verdicts, one row a family measured."""
    rows = [
        [
            family,
            m["verdict"],
            level_text(m["distortion_db"], m["floor_db"]),
            level_text(m["even_added_db"], m["floor_db"]),
            level_text(m["odd_added_db"], m["floor_db"]),
            family_noise_text(m),
            _db_text(m["floor_db"]),
            detected_text(m),
            memory_text(m["memory"]),
        ]
        for family, m in families.items()
    ]
    return MULTITONE_HEADER, rows


def multitone_lines(r: Results) -> list[str]:
    """The multi-tone measurement (`multitone` of scores.json, docs/multitone.md) as Markdown."""
    reading = r.extra.get("multitone")
    if not reading or not reading.get("families"):
        return []
    families = reading["families"]
    overall = reading.get("summary", {}).get("distortion_db")
    # The overall level is below the floor only where it is under every family's.
    floors = [f for m in families.values() if isinstance(f := m["floor_db"], (int, float)) and math.isfinite(f)]
    highest_floor = max(floors, default=None)
    out = [
        "### Multi-tone measurement",
        "",
        "Best linear approximation (BLA) from the odd random-phase multisine, the distortion the model adds at the "
        "even and odd detection lines beyond the exact answers' own content passed through its BLA, and the "
        "two-tone products (docs/multitone.md). Levels in dB relative to the exact answers' mean level at the "
        f"excited lines. Overall distortion: {level_text(overall, highest_floor, ' dB')} (exact answers read the "
        "truncation floor).",
        "",
        *_multitone_tests_lines(families),
        *_table(*multitone_table(families)),
        "",
        "BLA at the excited lines, with 95 % intervals over the question x realization experiments; noise is the "
        "spread across periods of one realization (none: every period answered alike, as a deterministic model "
        "does), stochastic distortion the spread across realizations beyond it (not detected: no more than the "
        f"noise); a level more than {BELOW_FLOOR_DB:g} dB under the truncation floor is {BELOW_FLOOR} (rounding of "
        "the sixth decimal, not a reading):",
        "",
    ]
    rows = []
    for family, m in families.items():
        bla = [line for line in m["lines"] if line["kind"] == "excited"]
        for line, iv in zip(bla, m["bla_intervals"], strict=True):
            rows.append(
                [
                    family,
                    str(line["cycles"]),
                    f"{_num(line['gain'], 4)} [{_num(iv['gain_low'], 4)}, {_num(iv['gain_high'], 4)}]",
                    f"{_num(line['phase_deg'], 2)} [{_num(iv['phase_low_deg'], 2)}, {_num(iv['phase_high_deg'], 2)}]",
                    _noise_text(m, iv["noise_db"]),
                    _stochastic_text(m, iv["stochastic_db"]),
                ]
            )
    out += _table(["family", "cycles", "gain", "phase (deg)", "noise (dB)", "stochastic (dB)"], rows)
    two_tone = [(family, p, m["floor_db"]) for family, m in families.items() for p in m.get("two_tone", [])]
    if two_tone:
        out += [
            "",
            "Two-tone: each tone and product, relative to the exact answers' tones (a tone to its own, so the exact "
            "answers read 0.0 dB there; a product to both tones' power mean; truth: their own content there; "
            "error: answers minus exact answers; added: beyond the exact answers' content passed through the BLA):",
            "",
            *_table(
                ["family", "product", "cycles", "level (dB)", "truth (dB)", "error (dB)", "added (dB)"],
                [
                    [
                        family,
                        p["product"],
                        str(p["cycles"]),
                        *(
                            level_text(p[k], floor)
                            for k in ("level_db", "truth_level_db", "error_level_db", "added_db")
                        ),
                    ]
                    for family, p, floor in two_tone
                ],
            ),
        ]
    if reading.get("protocol", "stateless") == "stateless":
        out += ["", STATELESS_MULTITONE]
    return out


def provenance_lines(r: Results) -> list[str]:
    """The conditions the answers were asked under and what scored them, as Markdown bullets."""
    cond = r.extra.get("conditions") or {}
    asked = [f"protocol {cond.get('protocol', 'stateless')}"]
    if cond.get("protocol") == "sequential":
        asked += [f"history {cond.get('history', 'not recorded')}", f"run-in {cond.get('run_in', '0')} steps"]
    asked += [f"answer format {cond.get('answer_format', 'free')}", f"prompting {cond.get('prompting', 'zero-shot')}"]
    if cond.get("dedupe"):
        asked.append("deduplicated prompts")
    prov = r.provenance
    ref = prov.get("reference") or {}
    lines = [
        f"- Asked: {', '.join(asked)}.",
        f"- Scored by mathbode {prov.get('version')} ({prov.get('method', 'paper')} method), "
        f"parser {prov.get('parser')}.",
        f"- Reference rows: {ref.get('source')}, content hash `{ref.get('content_hash')}`.",
    ]
    if prov.get("input"):
        lines.append(f"- Input: `{prov['input']['file']}`, `{prov['input']['sha256']}`.")
    return lines


def release_note(r: Results) -> str | None:
    """Which release a score is of, when it is not the canonical MathBode (a condition, like the protocol)."""
    cond = r.extra.get("conditions") or {}
    if "release" not in cond:
        return None
    return (
        f"scored against release {cond['release']} (content {cond.get('release_content_hash')}), not the "
        "canonical MathBode release: another benchmark, ranked apart from it"
    )


def conditions_notes(r: Results) -> list[str]:
    """How the answers were obtained or scored when that changes what a score means (custom
    scales, constrained format, one-shot, another parser)."""
    cond = r.extra.get("conditions") or {}
    notes = [n for n in [release_note(r), method_note(r)] if n]
    if cond.get("answer_format", "free") != "free":
        notes.append(
            f"answer format {cond['answer_format']} by the server: this measures the model's numbers, "
            "not its format discipline; do not rank it beside free-format runs"
        )
    if cond.get("prompting", "zero-shot") != "zero-shot":
        notes.append(f"prompting: {cond['prompting']}")
    parser = r.provenance.get("parser_name", "strict")
    if parser != "strict":
        notes.append(f"responses parsed with the {parser} rules, not the paper's strict appendix C rules")
    return notes


def na_notes(r: Results) -> list[str]:
    """Why each family's n/a score is n/a (the overall's reason is among the coverage notes)."""
    notes = {fam: s["note"] for fam, s in r.families.items() if s.get("note")}
    if len(notes) > 1 and len(notes) == len(r.families) and len(set(notes.values())) == 1:
        return [f"every family: n/a: {next(iter(notes.values()))}."]
    return [f"{fam}: n/a: {note}." for fam, note in notes.items()]


def coverage_notes(results: list[Results]) -> list[str]:
    """Why an overall score is n/a, how much of a preset a partial file answered, and when a ranking mixes presets."""
    notes = []
    for r in results:
        if "note" in r.overall:
            notes.append(f"{r.label}: overall n/a: {r.overall['note']}.")
        subset = r.overall.get("subset")
        if subset and subset["families"]:
            notes.append(
                f"{r.label}: over the {len(subset['families'])} families answered ({', '.join(subset['families'])}), "
                f"not the benchmark's overall: MB-Core {_num(subset.get('mb_core'))}, MB-Plus "
                f"{_num(subset.get('mb_plus'))}, calibrated MB-Core {_num(subset.get('mb_core_calibrated'))}"
            )
        rows = r.extra.get("preset_rows")
        if rows and rows["answered"] < rows["rows"]:
            missing = rows["rows"] - rows["answered"]
            # A preset of chirp and step sweeps has no MB-Plus for the unanswered rows to count in.
            counted = (
                "count as not compliant (the compliance part of MB-Plus)"
                if r.extra.get("num_sweeps")
                else "are not measured"
            )
            notes.append(
                f"{r.label}: answered {rows['answered']:,} of the {rows['rows']:,} {rows['preset']} rows; the "
                f"{missing:,} unanswered rows {counted}."
            )
        cov = r.extra.get("coverage")
        if cov and not rows and r.preset not in (cov["preset"],) and cov["sweeps"] < cov["of"]:
            notes.append(
                f"{r.label}: answers {cov['sweeps']:,} of the {cov['of']:,} sweeps of {cov['preset']} "
                f"(scored as {r.preset})."
            )
    for r in unranked(results):
        if len(results) > 1:
            notes.append(f"{r.label}: not ranked: it has no sinusoid rows, the only ones MB-Core and MB-Plus use.")
    if len({r.preset for r in results}) > 1:
        notes.append(
            "the submissions cover different rows (" + ", ".join(f"{r.label}: {r.preset}" for r in results) + "); "
            "their scores are not directly comparable."
        )
    return notes


HOW_TO_READ = """## How to read this report

Each sinusoid sweep drives one parameter of a question over 64 steps; a least-squares fit of
y = c + a sin(wt) + b cos(wt) to the model's compliant answers, and to the exact answers, gives
the numbers below. Frequencies are in cycles per 64 steps.

- **gain (G)**: the model's fitted swing over the truth's (1 = tracks the drive fully; 0.5 = half).
  **|G-1|** is its error.
- **phase error (deg)**: the model's fitted phase minus the truth's, in [-180, 180); negative is a
  lag. Means over sweeps are taken on the circle (+180 and -180 are one angle); **spread** is their
  circular standard deviation. A sweep whose answers do not move (fitted swing within the answer
  format's floor, 2e-6) has no phase: it is counted under **flat** and left out of the phase means.
- **mid-band**: frequencies 4 and 8 (the paper's); "mid" columns are means over these two.
- **MB-Core** (the paper's): 1 - (0.5 min(1, |G-1|/0.25) + 0.5 min(1, |phase|/45 deg)) from the
  mid-band means, clipped to [0, 1]; per family, then the plain mean over the five families.
- **MB-Plus** (the paper's): MB-Core x sqrt(R2 mid) x sqrt(1 - |ACF(1)| mid) x sqrt(compliance).
- **R2**: share of the answers' variance the single sinusoid fit explains. **ACF(1)**: lag-1
  autocorrelation of the fit's residual (structure the sinusoid misses). **H2/H1**: second over
  first harmonic amplitude, fitted jointly with the constant (n/a where the harmonic aliases: at
  16 cycles the 2nd harmonic is the Nyquist frequency). **truth's H2/H1**: the same for the exact
  answers on the same steps (p is printed to 3 decimals and the answer is a nonlinear function of
  it, so the truth has harmonics of its own); a model's nonlinearity is what exceeds it.
- **cal. MB-Core, cal. MB-Plus** (calibrated): the same formulas with R2 and ACF(1) measured only
  on what the truth's own shape does not explain, and a flat answer counted as 180 deg off, so the
  exact answers score 1 and a constant answer 0.
- **compliance**: share of a sweep's 64 rows with a parsable answer in the required format;
  unanswered rows count as not compliant.
- **exact rows**: of the sinusoid rows scored, the answers equal to the truth truncated to six
  decimals, with a Wilson 95 % interval (chirp and step rows are measured apart).
- **repeatability** (stateless only): of the prompts the file answers on more than one row (in
  the preset scored), the share answered with the same parsed number each time (the texts may
  differ), and the mean spread of their numbers: relative (standard deviation over the answers'
  mean magnitude), and per family in its own units (families' units differ, so absolute spreads
  are never pooled); 1 and 0 for a deterministic server.
- **Brackets**: 95 % intervals over sweeps: the score's standard error from the spread of the
  sweeps within each family and frequency (each cell's own n - 1 degrees of freedom), times
  Student's t (docs/intervals.md); an interval always holds its estimate.
  Their coverage is measured by simulation (`benchmarks/bench_coverage.py`): 93-97 % where it can
  be reached. "no interval" where it cannot, with the reason: a cell of one sweep has no
  spread, and with 2 sweeps per cell (SMOKE, MVP) the sign of a gain or phase error cannot be
  told from noise, so the overall scores get none (an interval would cover 91-100 % depending on
  where the errors lie); each family's (scores.json) and each frequency's bars are given, wide
  (t = 12.7 on 1 degree of freedom).
- **What the brackets do not include**: systematic error, which every sweep shares and no spread
  of sweeps can show: the start-up transient of the sequential protocol without a run-in (the
  first steps of each conversation answer the cold start, not the steady state, and can put the
  score outside its interval), and the truncation of every answer to six decimals.
- **chirp**: gain and phase error read in 16-step windows of the logarithmic chirp (1 to 16
  cycles) against the instantaneous frequency at each window's centre; "1 (at 1.39)" means the
  octave point 1 is read at the nearest window centre, 1.39 cycles. A point whose window holds
  under one cycle of the drive (1 and 2 cycles: 0.35 and 0.5) is n/a: a level and a swing cannot
  be told apart there. The window sees a delayed chirp at a slightly other frequency, so a pure
  delay reads low (4 steps: gain 0.8 at 8 cycles); a first-order low-pass reads within 0.04 and 2
  degrees of its sinusoid values at 4 and 8 cycles.
- **step** (the drive jumps at step 32; values are normalised by the truth's jump, times are
  steps after it): **pre_error** the settled level before the jump against the truth's;
  **steady_state_error** the mean of the last 16 steps minus 1; **overshoot** the peak above 1;
  **dead_time** the first step at 0.1 or above; **rise_time** the steps from there to the first
  at 0.9 or above (10-90 %: a pure delay has dead time and no rise); **settling_time** the step
  from which the response stays within 0.05 of 1; **delay** the first step at 0.5 or above.
- **agreement**: the chirp against the sinusoids at 4 and 8 cycles, the step's delay against the
  delay the sinusoid phases imply, and the step's final level against the gain at 1 cycle. All 0
  for a unit-gain pure delay; another linear system reads values of its own (a first-order
  low-pass, a = 0.2: +1.3 steps and +0.07), so large values mean nonlinearity only beside a
  dynamics fit that explains the rest.
- **Dynamics** (sequential files): each family's mean complex response H(f) = gain x
  exp(j phase error) is fitted by a pure delay of d steps, exp(-j 2 pi f d / 64), and by a
  first-order low-pass y_t = y_{t-1} + a (x_t - y_{t-1}). **delay (steps)**: the fitted d with
  its 95 % interval. "**mod P**" (modulo): the frequencies measured repeat every P = 64 / (their
  greatest common divisor) steps, so d and d + P read the same phases (SMOKE and MVP: P = 16;
  FULL: 64); d is shown on the side of the wrap nearest 0, between -P/2 and P/2, and a negative d
  (a lead) is named with its equivalent delay d + P. **low-pass a**: the fitted coefficient (1 =
  no memory). **time constant**: tau = -1 / ln(1 - a) steps, the steps in which the low-pass
  forgets all but 1/e of an answer (0 for a = 1; its interval is a's mapped through the same
  formula, "no bound" when a's reaches 0). **delay residual**, **low-pass residual**: each fit's
  relative misfit sqrt(sum |H - M|^2 / sum |H|^2), 0 when the model is exact; a model names the
  system only below 0.1. **verdict**: "cannot tell" when the data cannot show a lag (one sweep at
  a frequency has no spread, or the answers are too noisy for a delay within P/2 to be told from
  0: the verdict says which); "no dynamics detected" when d lies within t(99.9 %) standard errors
  of 0 (a memoryless model's phases scatter around 0; at 95 % one family in 20 of such a model
  would read a lag, at 99.9 % one in 1,000); else a delay or a first-order low-pass, the one with
  the smaller residual, or "a lag that neither fits" when both residuals reach 0.1. Flags (in
  bold) read the same d: a delay at the history window, a memory (|d|, or 3 tau for a low-pass)
  longer than the run-in.
- **multi-tone** (a multi-tone release, docs/multitone.md): the **BLA** (best linear approximation) is
  the model's answers over the exact answers at each excited line of the odd random-phase multisine,
  averaged over realizations; **even added** and **odd added** are what the model's answers hold at the
  even and the odd detection lines beyond the exact answers' own content passed through the BLA (a
  delay or low-pass adds nothing there, a static nonlinearity does, mainly on its own kind of line);
  **noise** is the spread across periods of one realization, **stochastic** the spread across
  realizations beyond it; the **floor** is what truncation to six decimals leaves at one line. All
  in dB relative to the exact answers' mean level at the excited lines; the two-tone levels relative
  to the exact answers' tones. **memory** is the BLA's phase read as a delay and as a first-order
  low-pass (sequential protocol only).
- **n/a**: not measurable, with the reason beside it: too few compliant answers (a sweep needs
  16 of 64), answers that do not move (no phase), a mid-band frequency not answered, or a family
  missing (the overall needs all five).
"""


def _family_table(r: Results) -> list[str]:
    return _table(
        ["family", *(name for _, name, _ in FAMILY_COLUMNS)],
        [[fam, *(_num(s.get(k), d) for k, _, d in FAMILY_COLUMNS)] for fam, s in r.families.items()],
    )


def _frequency_table(r: Results) -> list[str]:
    return _table(
        ["family", "frequency", "gain", "phase error (deg)", "spread (deg)", "flat", "R2", "ACF(1)", "H2/H1"]
        + ["truth's H2/H1", "compliance", "sweeps"],
        [
            [
                row["family"],
                f"{row['frequency_cycles']:g}",
                _num(row["gain"]),
                _num(row["phase_err_deg"], 2),
                _num(row.get("phase_spread_deg"), 2),
                str(int(row.get("num_flat", 0))),
                _num(row["r2"]),
                _num(row["res_acf1"]),
                _num(row["h2_over_h1"]),
                _num(row.get("h2_over_h1_truth")),
                _num(row["compliance"], 3),
                str(int(row["num_sweeps"])),
            ]
            for row in r.summary.rows()
        ],
    )


def _leaderboard_lines(results: list[Results], tests: list[dict[str, Any]]) -> list[str]:
    lines = ["## Leaderboard", ""]
    grouped = groups(results)
    if len(grouped) > 1:
        lines += [
            "Submissions made under different conditions are ranked apart and never tested against each other.",
            "",
        ]
    header = ["rank", "submission", "preset", "MB-Core", "MB-Plus", "cal. MB-Plus", "exact rows", "families"]
    for label, members in grouped:
        if len(grouped) > 1:
            lines += [f"### {label}", ""]
        lines += _table(
            header,
            [
                [
                    str(i + 1),
                    r.label,
                    r.preset,
                    interval_text(r, "mb_core"),
                    _num(r.overall["mb_plus"]),
                    interval_text(r, "mb_plus_calibrated"),
                    _num(r.extra.get("accuracy", {}).get("rate", math.nan)),
                    str(r.overall["num_families"]),
                ]
                for i, r in enumerate(members)
            ],
        )
        lines.append("")
        mine = [t for t in tests if t.get("conditions") == label]
        if mine:
            lines += ["Each submission against the next one down (95 % intervals):", ""]
            lines += [f"- {line}" for t in mine for line in describe(t)] + [""]
    return lines


def _headline(r: Results) -> str:
    whose = "custom scoring, not the paper's" if method_note(r) else "the paper's"
    # A paired release's overall leaves its variants out: they are compared with their originals.
    plural = "family" if r.overall["num_families"] == 1 else "families"
    over = f"original {plural}; the variants are read in pairs under Variants"
    over = over if r.extra.get("variants") else "families"
    return (
        f"**MB-Core {interval_text(r, 'mb_core')}**, **MB-Plus {interval_text(r, 'mb_plus')}** "
        f"({whose}; mean over {r.overall['num_families']} {over}). Calibrated: MB-Core "
        f"{interval_text(r, 'mb_core_calibrated')}, MB-Plus {interval_text(r, 'mb_plus_calibrated')}."
        + (f" Brackets: {brackets(r)}." if "intervals" in r.extra else "")
    )


def name_text(name: str) -> str:
    """A name as Markdown text: HTML's special characters as the site's entities (markupsafe's),
    and the brackets of a Markdown link too (`[x](javascript:...)` would be a link)."""
    return str(escape(name)).replace("[", "&#91;").replace("]", "&#93;")


def _markdown(
    results: list[Results],
    plots: bool,
    tests: list[dict[str, Any]],
    figures: FigureOptions = DEFAULT_FIGURES,
    folders: list[str] | None = None,
) -> str:
    # Names are the submitter's text: escaped as the site escapes them, so a renderer that passes
    # HTML through (mkdocs, an editor's preview) shows `<script>` rather than running it.
    results = [replace(r, label=name_text(r.label), model=r.model and name_text(r.model)) for r in results]
    tests = [{**t, "first": name_text(t["first"]), "second": name_text(t["second"])} for t in tests]
    lines = ["# MathBode report", ""]
    if len(results) > 1 and groups(results):
        lines += _leaderboard_lines(results, tests)
    notes = coverage_notes(results)
    if notes:
        lines += [f"- {n}" for n in notes] + [""]
    for i, r in enumerate(results):
        lines += [f"## {r.label}", ""]
        if folders:
            lines += [f"Its files: `{folders[i]}/` (results.json, scores.json, the CSV tables).", ""]
        nc, said = r.extra.get("non_compliant"), compliance_note(r)
        if said:
            lines += [f"**{said}**" if nc and nc["compliant"] == 0 else said, ""]
            if nc and nc["examples"]:
                lines += ["Some of the answers, verbatim:", ""]
                lines += [f"    {json.dumps(e, ensure_ascii=False)}" for e in nc["examples"]] + [""]
        result_notes = [*conditions_notes(r), *na_notes(r), *interval_notes(r)]
        if result_notes:
            lines += [f"- {note}" for note in result_notes] + [""]
        lines += [
            f"Model: {r.model or 'not given'}. Preset: {r.preset}. Sweeps scored: {r.extra.get('num_sweeps')}. "
            f"Answers: {answers_text(r)}.",
            "",
            *provenance_lines(r),
            "",
        ]
        if r.extra.get("num_sweeps"):
            lines += [_headline(r), ""]
            lines += _family_table(r)
            lines += ["", "Per frequency (mean over sweeps; phases on the circle):", ""]
            lines += _frequency_table(r)
            if (r.extra.get("conditions") or {}).get("protocol", "stateless") == "stateless":
                lines += ["", STATELESS_PHASE]
            said_parts = phase_parts_lines(r)
            if said_parts:
                lines += ["", *said_parts]
            said_dynamics = dynamics_lines(r)
            if said_dynamics:
                lines += ["", *said_dynamics]
            said_variants = variants_lines(r)
            if said_variants:
                lines += ["", *said_variants]
        elif r.extra.get("multitone"):
            lines.append(
                "No sinusoid rows: MB-Core and MB-Plus are made from sinusoid sweeps only; this multi-tone release "
                "is read by its multisine and two-tone rows below (tables `multitone_lines.csv` and "
                "`two_tone.csv`; no `sweeps.csv` or `frequency_summary.csv`, which hold sinusoid sweeps)."
            )
        else:
            lines.append(
                "No sinusoid rows: MB-Core and MB-Plus are made from sinusoid sweeps only, so this file has none; "
                "its chirp and step rows are measured below (no `sweeps.csv` or `frequency_summary.csv`, which hold "
                "sinusoid sweeps)."
            )
        said_multitone = multitone_lines(r)
        if said_multitone:
            lines += ["", *said_multitone]
        said = repeatability_text(r)
        if said:
            lines += ["", said[0].upper() + said[1:] + "."]
        extra_lines = diagnostics_lines(r)
        if extra_lines:
            lines += ["", "Chirp and step measurements (`chirp.csv`, `step.csv`; docs/chirp-step.md):", ""]
            lines += ["```text", *extra_lines, "```"]
        accuracy = r.extra.get("accuracy")
        if accuracy and accuracy["rows"]:
            lines += ["", accuracy_text(accuracy)]
        lines.append("")
    if plots:
        for stem, caption in report_figures(results):
            # Markdown viewers show PNG and SVG images; a PDF figure is a link to its file.
            shown = "" if figures.format == "pdf" else "!"
            lines += [f"{shown}[{caption}]({figures.file(stem)})", ""]
    lines += [HOW_TO_READ]
    return "\n".join(lines)


def accuracy_text(accuracy: Mapping[str, Any]) -> str:
    """'exact (answer = truth truncated to 6 decimals): 85 of 85 distinct prompts of 5 problems = 1.0000
    [0.9571, 1.0000] (Wilson 95 % over distinct prompts; 1,280 of 1,280 rows)'. A document from
    before units were counted says it in rows, as it was scored."""
    low, high = accuracy["wilson_95"]
    if "n_units" not in accuracy:
        return (
            f"exact rows (answer = truth truncated to 6 decimals): {accuracy['correct']:,} of the "
            f"{accuracy['rows']:,} sinusoid rows scored = {accuracy['rate']:.4f} [{_num(low)}, {_num(high)}] "
            "(Wilson 95 %)"
        )
    return (
        f"exact (answer = truth truncated to 6 decimals): {accuracy['units_exact']:,} of "
        f"{units_text(accuracy['n_units'], accuracy['unit'], accuracy['problems'])} = {_num(accuracy['unit_rate'])} "
        f"[{_num(low)}, {_num(high)}] (Wilson 95 % over distinct prompts, each exact when most of its rows are; "
        f"{accuracy['correct']:,} of {accuracy['rows']:,} sinusoid rows)"
    )


def units_text(n: int, unit: str, problems: int | list[int]) -> str:
    """'17 distinct prompts of 1 problem', '30 problems': what a count of evidence counts."""
    plural = unit if n == 1 else (unit + "s" if not unit.endswith("s") else unit)
    if unit == "problem":
        return f"{n:,} {plural}"
    k = len(problems) if isinstance(problems, list) else int(problems)
    return f"{n:,} {plural} of {k:,} problem{'s' if k != 1 else ''}"


def _write_one(r: Results, document_text: str, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULTS_FILE).write_text(document_text, encoding="utf-8")
    (folder / SCORES_FILE).write_text(json.dumps(json_safe(r.scores_json()), indent=2, allow_nan=False) + "\n")
    write_tables(r, folder)


def documents_of(
    results: list[Results], plots: bool = True, figures: FigureOptions = DEFAULT_FIGURES
) -> list[dict[str, Any]]:
    """The results document of each submission scored together, in the order given."""
    shown = {"format": figures.format, "dpi": figures.dpi} if plots else None
    return [to_document(r, Rendering(i, len(results), shown)) for i, r in enumerate(results)]


def write_report(
    results: list[Results],
    out: str | Path,
    plots: bool = True,
    plotter: BackgroundPlotter | None = None,
    tests: list[dict[str, Any]] | None = None,
    figures: FigureOptions = DEFAULT_FIGURES,
) -> Path:
    """Write the report folder atomically (an existing report there is replaced): each
    submission's results document, and everything else rendered from those documents alone.

    With a `background.BackgroundPlotter`, the plot is drawn in its worker process while the
    other files are written.
    """
    render_report(documents_of(results, plots, figures), tests or [], out, plotter)
    return Path(out)


def submission_folders(results: list[Results]) -> list[str]:
    """The folder of each submission in a report of several: its label made a safe file name
    (`core.names.file_name`: `../x`, `a/b` and `a_b`, `results.json` each get a folder of their
    own, inside the report). Labels are unique within one scoring, and the mapping is injective."""
    if len(results) < 2:
        return []
    names = [file_name(r.label) for r in results]
    if len(set(names)) < len(names):  # labels repeated by a hand-edited document: told apart by place
        names = [file_name(f"{r.label}\x00{i}") for i, r in enumerate(results)]
    return names


def render_report(
    documents: list[dict[str, Any]],
    tests: list[dict[str, Any]],
    out: str | Path,
    plotter: BackgroundPlotter | None = None,
) -> list[Results]:
    """Write the report folder from results documents (and the neighbour tests between them)
    alone: what `score` writes and `mathbode report` writes again, byte for byte. Returns the
    results as read back from the documents, for the console."""
    out = Path(out)
    check_replaceable(out, "report")
    # Each presentation reads the document as a reader of the file would: parsed from its text.
    texts = [dumps(d) for d in documents]
    read = [from_document(json.loads(text)) for text in texts]
    results = [r for r, _ in read]
    shown = read[0][1].figures if read else None
    plots = shown is not None
    figures = FigureOptions(shown["format"], shown["dpi"]) if shown else DEFAULT_FIGURES
    tests = json.loads(json.dumps(json_safe(tests), allow_nan=False))
    folders = submission_folders(results)
    check_inside(folders, out, "--out")  # every folder a name makes, proved inside before anything is written
    with atomic_folder(out, "report") as tmp:
        drawing = plotter.plot(results, tmp, figures) if plots and plotter is not None else None
        if len(results) == 1:
            _write_one(results[0], texts[0], tmp)
        else:
            for r, text, name in zip(results, texts, folders, strict=True):
                _write_one(r, text, tmp / name)
            leaderboard(results).to_csv(tmp / LEADERBOARD_FILE)
            if tests:
                document = json.dumps(tests, indent=2, allow_nan=False) + "\n"
                (tmp / COMPARISONS_FILE).write_text(document)
        (tmp / REPORT_FILE).write_text(_markdown(results, plots, tests, figures, folders))
        if drawing is not None:
            drawing()
        elif plots:
            draw_here(results, tmp, options=figures)
    return results


def saved_results(folder: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The results documents of a report folder (its own, or one per submission folder), in the
    order they were scored, and the neighbour tests between them (comparisons.json)."""
    documents, tests = saved_documents(folder)
    return [document for document, _ in documents], tests


def saved_documents(folder: str | Path) -> tuple[list[tuple[dict[str, Any], str]], list[dict[str, Any]]]:
    """`saved_results`, each document with its text (as saved; as this version writes it, when upgraded)."""
    folder = Path(folder)
    paths = [folder / RESULTS_FILE] if (folder / RESULTS_FILE).is_file() else sorted(folder.glob(f"*/{RESULTS_FILE}"))
    if not paths:
        raise UsageError(
            f"{folder}: no {RESULTS_FILE} in it or in its subfolders: not a report folder written by "
            "`mathbode score` (a folder written before results documents existed: score its submissions again)."
        )
    documents = [read_document(path) for path in paths]  # each checked before anything is written
    documents.sort(key=lambda d: d[0]["rendering"]["position"])
    positions = [d["rendering"]["position"] for d, _ in documents]
    if positions != list(range(len(documents))) or any(d["rendering"]["of"] != len(documents) for d, _ in documents):
        raise UsageError(
            f"{folder}: holds {len(documents)} results documents whose places ({positions}) are not those of "
            "one scoring: a report folder is rendered as `mathbode score` wrote it."
        )
    comparisons = folder / COMPARISONS_FILE
    tests = read_comparisons(comparisons) if comparisons.exists() else []
    return documents, tests
