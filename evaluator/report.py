"""The report folder: scores.json, sweeps.csv, frequency_summary.csv, report.md and Bode plots."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from mathbode.core.atomic import atomic_folder, check_replaceable
from mathbode.schema.parsing import NON_COMPLIANT_KINDS

from .aggregate import FAMILY_SCORE_FIELDS, HEADLINE
from .background import BackgroundPlotter, draw_here
from .compare import describe, ranked
from .files import (
    CHIRP_FILE,
    COMPARISONS_FILE,
    LEADERBOARD_FILE,
    REPORT_MARKER,
    SCORES_FILE,
    STEP_FILE,
    SUMMARY_FILE,
    SWEEPS_FILE,
    figure_files,
)
from .scoring import Scored


def _num(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if not isinstance(x, float):
        return str(x)
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"


def json_safe(obj: Any) -> Any:
    """JSON has no NaN or infinity: write null for a number that is not finite."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    return obj


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def leaderboard(results: list[Scored]) -> pd.DataFrame:
    """One row per submission, best MB-Core first (MB-Plus breaks ties), with intervals when computed."""
    rows = []
    for r in ranked(results):
        row: dict[str, Any] = {"label": r.label, "model": r.model, "preset": r.preset}
        bounds = (r.extra.get("intervals") or {}).get("overall") or {}
        for name in HEADLINE:
            row[name] = r.overall.get(name, math.nan)
            if "intervals" in r.extra:
                low, high = bounds.get(name) or (math.nan, math.nan)
                row[f"{name}_low"], row[f"{name}_high"] = low, high
        accuracy = r.extra.get("accuracy") or {}
        row["exact_rows"] = accuracy.get("rate", math.nan)
        wilson = accuracy.get("wilson_95") or (math.nan, math.nan)
        row["exact_rows_low"], row["exact_rows_high"] = wilson
        row["num_sweeps"] = len(r.sweeps)
        row["num_families"] = r.overall["num_families"]
        row.update(r.extra.get("conditions") or {})
        for fam, s in r.families.items():
            row[f"{fam}.mb_core"] = s["mb_core"]
        rows.append(row)
    return pd.DataFrame(rows)


def interval_text(r: Scored, name: str, digits: int = 4) -> str:
    """'0.8123 [0.7950, 0.8301]' (the interval only when computed)."""
    value = _num(r.overall.get(name, math.nan), digits)
    bounds = ((r.extra.get("intervals") or {}).get("overall") or {}).get(name)
    return f"{value} [{_num(bounds[0], digits)}, {_num(bounds[1], digits)}]" if bounds else value


def _signed(x: Any, digits: int) -> str:
    return "n/a" if x is None or x != x else f"{x:+.{digits}f}"


def diagnostics_lines(r: Scored) -> list[str]:
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
        names = ("pre_error", "steady_state_error", "overshoot", "rise_time", "settling_time", "delay")
        lines.append("step response (normalised by the truth's jump; times in steps after the switch)")
        lines.append(f"  {'family':<22}" + "".join(f"{n:>19}" for n in names))
        for fam, s in diag["step"].items():
            lines.append(
                f"  {fam:<22}"
                + "".join(f"{_signed(s[n], 4) if n.endswith('error') else _num(s[n], 2):>19}" for n in names)
            )
    if diag["agreement"]:
        lines.append("agreement (0 for a model that behaves as one linear time-invariant system):")
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


def compliance_note(r: Scored) -> str | None:
    """'0 of 1,280 responses were compliant: 1,160 had no answer tags at all; ...', or None when all were."""
    nc = r.extra.get("non_compliant")
    if not nc or nc["compliant"] == nc["lines"]:
        return None
    reasons = "; ".join(f"{n:,} {NON_COMPLIANT_KINDS[kind]}" for kind, n in nc["kinds"].items())
    return f"{nc['compliant']:,} of {nc['lines']:,} answers were compliant: {reasons}."


def conditions_notes(r: Scored) -> list[str]:
    """How the answers were obtained when that changes what a score means (constrained format, one-shot)."""
    cond = r.extra.get("conditions") or {}
    notes = []
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


def na_notes(r: Scored) -> list[str]:
    """Why each family's n/a score is n/a (the overall's reason is among the coverage notes)."""
    notes = {fam: s["note"] for fam, s in r.families.items() if s.get("note")}
    if len(notes) > 1 and len(notes) == len(r.families) and len(set(notes.values())) == 1:
        return [f"every family: n/a: {next(iter(notes.values()))}."]
    return [f"{fam}: n/a: {note}." for fam, note in notes.items()]


def coverage_notes(results: list[Scored]) -> list[str]:
    """Why an overall score is n/a, how much of a preset a partial file answered, and when a ranking mixes presets."""
    notes = []
    for r in results:
        if "note" in r.overall:
            notes.append(f"{r.label}: overall n/a: {r.overall['note']}.")
        cov = r.extra.get("coverage")
        if cov and r.preset not in (cov["preset"],) and cov["sweeps"] < cov["of"]:
            notes.append(
                f"{r.label}: answers {cov['sweeps']:,} of the {cov['of']:,} sweeps of {cov['preset']} "
                f"(scored as {r.preset})."
            )
    if len({r.preset for r in results}) > 1:
        notes.append(
            "the submissions cover different rows (" + ", ".join(f"{r.label}: {r.preset}" for r in results) + "); "
            "their scores are not directly comparable."
        )
    return notes


def report_figures(results: list[Scored]) -> list[tuple[str, str]]:
    """(file, caption) of the figures these results get: the one list the report links and the plots draw."""
    return figure_files(
        any(len(r.summary) for r in results), any(len(r.chirp) for r in results), any(len(r.step) for r in results)
    )


def _markdown(results: list[Scored], plots: bool, tests: list[dict[str, Any]]) -> str:
    lines = ["# MathBode report", ""]
    if len(results) > 1:
        lines += ["## Leaderboard", ""]
        lines += _table(
            ["rank", "submission", "preset", "MB-Core", "MB-Plus", "calibrated MB-Plus", "exact rows", "families"],
            [
                [
                    str(i + 1),
                    r.label,
                    r.preset,
                    interval_text(r, "mb_core"),
                    _num(r.overall["mb_plus"]),
                    interval_text(r, "mb_plus_calibrated"),
                    _num((r.extra.get("accuracy") or {}).get("rate", math.nan)),
                    str(r.overall["num_families"]),
                ]
                for i, r in enumerate(ranked(results))
            ],
        )
        lines.append("")
        if tests:
            lines += ["Each submission against the next one down (95 % intervals):", ""]
            lines += [f"- {line}" for t in tests for line in describe(t)] + [""]
    notes = coverage_notes(results)
    if notes:
        lines += [f"- {n}" for n in notes] + [""]
    for r in results:
        lines += [f"## {r.label}", ""]
        nc, said = r.extra.get("non_compliant"), compliance_note(r)
        if said:
            lines += [f"**{said}**" if nc and nc["compliant"] == 0 else said, ""]
            if nc and nc["examples"]:
                lines += ["Some of the answers, verbatim:", ""]
                lines += [f"    {json.dumps(e, ensure_ascii=False)}" for e in nc["examples"]] + [""]
        result_notes = [*conditions_notes(r), *na_notes(r)]
        if result_notes:
            lines += [f"- {note}" for note in result_notes] + [""]
        lines += [
            f"Model: {r.model or 'not given'}. Preset: {r.preset}. Sweeps scored: {r.extra.get('num_sweeps')}. "
            f"Compliant answers: {r.extra.get('num_answers'):,}.",
            "",
            f"**MB-Core {interval_text(r, 'mb_core')}**, **MB-Plus {interval_text(r, 'mb_plus')}** "
            f"(the paper's; mean over {r.overall['num_families']} families). Calibrated: MB-Core "
            f"{interval_text(r, 'mb_core_calibrated')}, MB-Plus {interval_text(r, 'mb_plus_calibrated')}. "
            + ("Brackets: 95 % bootstrap intervals over sweeps." if "intervals" in r.extra else ""),
            "",
        ]
        lines += _table(
            ["family", *FAMILY_SCORE_FIELDS],
            [[fam, *(_num(s[k]) for k in FAMILY_SCORE_FIELDS)] for fam, s in r.families.items()],
        )
        extra_lines = diagnostics_lines(r)
        if extra_lines:
            lines += ["", 'Chirp and step measurements (`chirp.csv`, `step.csv`; README, "Chirp and step"):', ""]
            lines += ["```text", *extra_lines, "```"]
        lines += ["", "Per frequency (mean over sweeps):", ""]
        lines += _table(
            ["family", "frequency", "gain", "phase error (deg)", "R2", "res ACF1", "H2/H1", "compliance", "sweeps"],
            [
                [
                    row["family"],
                    f"{row['frequency_cycles']:g}",
                    _num(row["gain"]),
                    _num(row["phase_err_deg"], 2),
                    _num(row["r2"]),
                    _num(row["res_acf1"]),
                    _num(row["h2_over_h1"]),
                    _num(row["compliance"], 3),
                    str(int(row["num_sweeps"])),
                ]
                for _, row in r.summary.iterrows()
            ],
        )
        lines.append("")
    if plots:
        for name, caption in report_figures(results):
            lines += [f"![{caption}]({name})", ""]
    lines += ["Gain 1 and phase error 0 are ideal; a negative phase error is a lag.", ""]
    return "\n".join(lines)


def _write_one(r: Scored, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SCORES_FILE).write_text(json.dumps(json_safe(r.scores_json()), indent=2, allow_nan=False) + "\n")
    r.sweeps.to_csv(folder / SWEEPS_FILE, index=False)
    r.summary.to_csv(folder / SUMMARY_FILE, index=False)
    if len(r.chirp):
        r.chirp.to_csv(folder / CHIRP_FILE, index=False)
    if len(r.step):
        r.step.to_csv(folder / STEP_FILE, index=False)


def write_report(
    results: list[Scored],
    out: str | Path,
    plots: bool = True,
    plotter: BackgroundPlotter | None = None,
    tests: list[dict[str, Any]] | None = None,
) -> Path:
    """Write the report folder atomically; an existing report there is replaced.

    With a `background.BackgroundPlotter`, the plot is drawn in its worker process while the
    other files are written.
    """
    out = Path(out)
    check_replaceable(out, REPORT_MARKER, "a MathBode report")
    with atomic_folder(out) as tmp:
        drawing = plotter.plot(results, tmp) if plots and plotter is not None else None
        if len(results) == 1:
            _write_one(results[0], tmp)
        else:
            for r in results:
                _write_one(r, tmp / r.label)
            leaderboard(results).to_csv(tmp / LEADERBOARD_FILE, index=False)
            if tests:
                document = json.dumps(json_safe(tests), indent=2, allow_nan=False) + "\n"
                (tmp / COMPARISONS_FILE).write_text(document)
        (tmp / REPORT_MARKER).write_text(_markdown(results, plots, tests or []))
        if drawing is not None:
            drawing()
        elif plots:
            draw_here(results, tmp)
    return out
