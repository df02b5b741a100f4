"""What every framework integration shares, with no framework imported: a task's rows, the
answers a framework collected as the scorer's predictions, and the numbers its metric reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from mathbode.evaluator.results import HEADLINE, Results
from mathbode.evaluator.scorer.aggregate import PAPER_CONFIG, overall
from mathbode.evaluator.scorer.angles import angle_mean
from mathbode.evaluator.scorer.scoring import score
from mathbode.hub.reference import resolve_reference
from mathbode.runner.config import PROTOCOLS, SEQUENTIAL, STATELESS, RunConfig, history_window
from mathbode.runner.run_in import DEFAULT_RUN_IN, MAX_RUN_IN
from mathbode.schema.drives import MULTITONE_SIGNALS
from mathbode.schema.keys import RowKey, row_key
from mathbode.schema.parsing import STRICT, truncate
from mathbode.schema.reference import Reference
from mathbode.schema.selection import KEY_FIELDS, select_rows
from mathbode.schema.submission import Prediction

#: A framework task per preset: task name -> preset.
TASK_PRESETS = {
    "smoke": "SMOKE",
    "mvp": "MVP",
    "mvp_plus": "MVP_PLUS",
    "full": "FULL",
    "chirp_step": "CHIRP_STEP",
    "all": "ALL",
}
#: A sequential sample's metadata field: the sweep's steps in time order, each its key fields,
#: prompt and (once asked) `response`.
STEPS = "mathbode_steps"
#: A sequential sample's run-in: the prompts asked before its step 0 (and, once asked, their answers).
RUN_IN = "mathbode_run_in"
#: lm-eval columns beside a row's own: the reference spec its task read ("" for the canonical
#: rows) and that reference's split (prompts hash). A samples file keeps them in every `doc`, so
#: `mathbode convert` knows what the answers answered.
REFERENCE_COLUMN = "mathbode_reference"
SPLIT_COLUMN = "mathbode_split"


@dataclass(frozen=True)
class TaskRows:
    """The rows a task asks, and what they were read from."""

    preset: str
    families: list[str]
    reference: Reference
    rows: list[dict[str, Any]]


def task_rows(preset: str, families: str | list[str] = "all", reference: str | None = None) -> TaskRows:
    """A preset's rows of `families` (`all`, comma-separated names, or a list of names: inspect's
    `-T families=a,b` gives a list) from the packaged canonical rows, a release folder, or
    `hub:ORG/NAME[@REV]` (a release of any families: `all` is all of its families)."""
    spec = families if isinstance(families, str) else ",".join(map(str, families))
    ref = resolve_reference(spec, reference)  # `all`: every family of the reference
    names = list(ref.family_hashes)
    return TaskRows(preset, names, ref, select_rows(ref.table, preset, ref.universe))


def sample_id(row: Mapping[str, Any]) -> str:
    """A row's (or, without `time_step`, a sweep's) key as a short readable id, unique in the release:
    `linear_solve/q0/sinusoid/a1/f4/p0/t12`."""
    key = [row["family"], f"q{row['question_id']}", row["signal_type"], f"a{row['amplitude_scale']:g}"]
    if row.get("frequency_cycles") is not None and row["signal_type"] == "sinusoid":
        key += [f"f{row['frequency_cycles']:g}", f"p{row['phase_deg']:g}"]
    elif row["signal_type"] in MULTITONE_SIGNALS:  # a multi-tone sweep: its realization and period
        key += [f"r{row['phase_deg']:g}", f"n{row['frequency_cycles']:g}"]
    if "time_step" in row:
        key.append(f"t{row['time_step']}")
    return "/".join(key)


def sweeps(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The rows grouped by sweep (first appearance order), each sweep's steps in time order."""
    by_sweep: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        by_sweep.setdefault(tuple(row_key(row))[:-1], []).append(row)
    return [sorted(steps, key=lambda r: r["time_step"]) for steps in by_sweep.values()]


def key_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The seven key fields of a mapping that carries them (and maybe more)."""
    return {name: fields[name] for name in KEY_FIELDS}


def request_config(
    protocol: str = STATELESS, history: int | None = None, one_shot: bool = False, run_in: int = 0
) -> RunConfig:
    """How a framework task asks, as the runner's own request settings: its prompts (the history
    window, the one-shot example, the run-in) and the conditions every answer is recorded with."""
    return RunConfig(model="framework", protocol=protocol, history=history, one_shot=one_shot, run_in=run_in)


def parse_run_in(run_in: int | str | None, protocol: str) -> int:
    """A task's `run_in` option: steps asked before each sweep's step 0 (sequential only)."""
    if run_in is None:
        return DEFAULT_RUN_IN if protocol == SEQUENTIAL else 0
    text = str(run_in).strip()
    if not text.isdigit() or not 0 <= int(text) <= MAX_RUN_IN:
        raise ValueError(f"run_in={run_in!r}: give a number of steps from 0 to {MAX_RUN_IN}")
    if int(text) and protocol != SEQUENTIAL:
        raise ValueError("run_in goes with protocol=sequential: a stateless request has no earlier steps")
    return int(text)


def parse_history(history: int | str | None) -> int | None:
    """A task's `history` option: a positive number of earlier exchanges, or `all` (None)."""
    if history is None:
        return None
    try:
        return history_window(history)
    except ValueError:
        raise ValueError(f"history={history!r}: give a positive number of earlier exchanges, or 'all'") from None


def check_protocol(protocol: str) -> str:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol={protocol!r}: choose {STATELESS!r} (the paper's) or {SEQUENTIAL!r}")
    return protocol


def is_exact(response: str | None, truth: float) -> bool:
    """Whether a response's number is the truth truncated to six decimals (the scorer's `correct`)."""
    value = STRICT.parse(response) if response is not None else math.nan
    return not math.isnan(value) and value == truncate(truth)


def predictions(answers: Iterable[tuple[Mapping[str, Any], str | None]]) -> list[Prediction]:
    """(key fields, raw response or None for no answer) -> the scorer's predictions; the last
    answer to a row wins (a framework that retried a row keeps its final answer)."""
    by_key: dict[RowKey, Prediction] = {}
    for line, (fields, response) in enumerate(answers, start=1):
        key = row_key(fields)
        by_key[key] = Prediction(key, line, response, None, response is not None)
    return list(by_key.values())


def score_answers(
    answers: Iterable[tuple[Mapping[str, Any], str | None]],
    reference: Reference,
    families: list[str],
    label: str,
    how: Mapping[str, str] | None = None,
) -> Results:
    """Score a framework's answers as `mathbode score` scores a file; the overall score is over
    the task's `families` (a task of two families has an overall score of those two)."""
    scored = score(predictions(answers), reference, label, conditions=dict(how or {}))
    scored.overall = overall(scored.families, tuple(families))
    return scored


def headline(scored: Results) -> dict[str, float]:
    """The numbers a framework's metric reports, each measurable one: MB-Core and MB-Plus (the
    paper's and calibrated), compliance, and at each mid-band frequency the
    families' mean gain and phase error (degrees). Unmeasurable numbers are left out, not NaN."""
    out = {name: scored.overall.get(name, math.nan) for name in HEADLINE}
    summary = scored.summary
    if len(summary):
        out["compliance"] = float(np.nanmean(summary["compliance"]))
    for frequency in PAPER_CONFIG.mid_band:
        cell = summary[summary["frequency_cycles"] == frequency] if len(summary) else None
        gains = cell["gain"][np.isfinite(cell["gain"])] if cell is not None else np.array([])
        phases = cell["phase_err_deg"][np.isfinite(cell["phase_err_deg"])] if cell is not None else np.array([])
        out[f"gain_{frequency:g}"] = float(gains.mean()) if gains.size else math.nan
        out[f"phase_deg_{frequency:g}"] = float(angle_mean(phases)) if phases.size else math.nan
    return {name: float(value) for name, value in out.items() if value is not None and math.isfinite(value)}
