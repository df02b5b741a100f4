"""Score a submission against the canonical rows: answers -> sweeps -> frequency means -> scores."""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Callable, Iterator, Mapping, Sequence, cast

import numpy as np

from mathbode.core.errors import UsageError
from mathbode.core.version import __version__
from mathbode.schema.answers import Answers, Prediction
from mathbode.schema.drives import MULTITONE, MultitonePlan
from mathbode.schema.keys import (
    RowKey,
    SweepKey,
    canonical_sweep_order,
    canonical_sweeps,
    preset_sweep_keys,
    row_key_of,
)
from mathbode.schema.layout import CHIRP, SINUSOID, STEP, layout
from mathbode.schema.parsing import NON_COMPLIANT_KINDS, STRICT, Parser, truncate_array
from mathbode.schema.reference import Reference
from mathbode.schema.selection import ALL_PRESET
from mathbode.schema.universe import Universe, universe_of

from ..results import Results
from ..sections import (
    AnsweredRows,
    Diagnostics,
    Intervals,
    Multitone,
    NonCompliant,
    PooledVariants,
    Repeatability,
    Sections,
    VariantComparison,
)
from ..table import Table
from .aggregate import (
    PAPER_CONFIG,
    SWEEP_COLUMN_TYPES,
    SWEEP_COLUMNS,
    ScoreConfig,
    family_scores,
    frequency_summary,
    overall,
)
from .diagnostics import diagnostics, transient_tables
from .dynamics import dynamics
from .metrics import SWEEP_METRICS, sweep_metrics
from .multitone import MultitoneSweep, conclude, measure_family, summarize
from .phase_parts import phase_parts
from .reference_index import ReferenceIndex, reference_index
from .repeatability import repeatability
from .uncertainty import Reported, score_intervals, wilson_interval
from .variants import PROMPT, majority, variant_scores

CUSTOM = "custom"
#: How a file's answers were obtained when its lines' `meta` does not say: the paper's way.
DEFAULT_CONDITIONS = {"answer_format": "free", "prompting": "zero-shot", "protocol": "stateless"}


def sweep_id(sweep: SweepKey) -> str:
    """'linear_solve-q0-sinusoid-f4-ph120-a1' (chirp and step: no frequency or phase): a name for pages and links."""
    parts = [sweep.family, f"q{sweep.question_id}", sweep.signal_type]
    if sweep.frequency_cycles is not None:
        parts.append(f"f{sweep.frequency_cycles:g}")
    if sweep.phase_deg is not None:
        parts.append(f"ph{sweep.phase_deg:g}")
    return "-".join([*parts, f"a{sweep.amplitude_scale:g}"])


def _trace(sweep: SweepKey, truth: np.ndarray, answer: np.ndarray) -> dict[str, Any]:
    return {"id": sweep_id(sweep), "sweep": sweep._asdict(), "truth": truth.tolist(), "answer": answer.tolist()}


class _CorrectRows(Mapping[RowKey, bool]):
    """Row key -> correct, for the rows in scope; the mapping is made when first read (only a
    comparison of two submissions reads it)."""

    def __init__(
        self, rows: np.ndarray, where: np.ndarray, hits: np.ndarray, universe: Universe, prompts: np.ndarray
    ) -> None:
        self._row_ids, self._where, self._hits, self._universe = rows, where, hits, universe
        self._prompts = prompts
        self._made: dict[RowKey, bool] | None = None
        self._units: dict[RowKey, int] | None = None

    def _keys(self) -> list[RowKey]:
        return [row_key_of(row, self._universe) for row in self._row_ids[self._where].tolist()]

    @property
    def _rows(self) -> dict[RowKey, bool]:
        if self._made is None:
            self._made = dict(zip(self._keys(), self._hits.tolist(), strict=True))
        return self._made

    @property
    def units(self) -> dict[RowKey, int]:
        """Row key -> the number of its distinct prompt: rows asking one prompt are one unit of
        evidence (a paired test counts them once)."""
        if self._units is None:
            self._units = dict(zip(self._keys(), self._prompts.tolist(), strict=True))
        return self._units

    def __getitem__(self, key: RowKey) -> bool:
        return self._rows[key]

    def __iter__(self) -> Iterator[RowKey]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._where)


def answer_values(answers: Answers, parser: Parser = STRICT) -> np.ndarray:
    """The number each line contributes: its parsed response (a text repeated across lines is
    parsed once), or its prediction truncated to six decimals; NaN for none."""
    out = truncate_array(answers.prediction)
    parsed: dict[str | None, float] = {}
    responses = answers.response
    for i in np.flatnonzero(answers.has_response).tolist():
        text = responses[i]
        value = parsed.get(text)
        if value is None:
            value = parsed[text] = parser.parse(text)
        out[i] = value
    return out


@lru_cache(maxsize=8)
def _sinusoid_rows(universe: Universe) -> np.ndarray:
    """Per row_id, whether the row is a sinusoid's."""
    sweeps = [sweep.signal_type == SINUSOID for sweep in canonical_sweep_order(universe)]
    return np.repeat(np.array(sweeps, dtype=bool), layout().time_steps)


def scored_sweeps(preset: str, universe: Universe | None = None) -> frozenset[SweepKey]:
    """The sinusoid sweeps a preset scores, over every family of the universe (default: the canonical
    five; ALL: every sinusoid sweep)."""
    return _scored_sweeps(preset, universe_of(universe))


@lru_cache(maxsize=32)
def _scored_sweeps(preset: str, universe: Universe) -> frozenset[SweepKey]:
    if preset.upper() == ALL_PRESET:
        return frozenset(
            s
            for f in universe.families
            for s in canonical_sweeps(f, universe.drives, universe.questions)
            if s.signal_type == SINUSOID
        )
    return preset_sweep_keys(layout().preset_name(preset), universe)


def detect_preset(
    sweeps: set[SweepKey],
    transient: frozenset[SweepKey] | set[SweepKey] = frozenset(),
    universe: Universe | None = None,
) -> str:
    """The name of the preset whose sweeps (over every family of the universe) are exactly `sweeps`,
    else `custom`.

    A file with no sinusoid rows is named by its chirp and step sweeps (a transient preset).
    """
    if not sweeps:
        names = [n for n in layout().transient_presets if preset_sweep_keys(n, universe) == transient]
        return names[0] if names else CUSTOM
    for name in [*layout().presets, ALL_PRESET]:
        if scored_sweeps(name, universe) == sweeps:
            return name
    return CUSTOM


def transient_scope(preset: str, families: set[str], universe: Universe | None = None) -> set[SweepKey]:
    """The chirp and step sweeps a preset asks for (ALL: every one), in the given families."""
    lay = layout()
    if preset == ALL_PRESET:
        full = universe_of(universe)
        wanted: set[SweepKey] = {s for f in full.families for s in canonical_sweeps(f, full.drives, full.questions)}
    elif preset in lay.transient_presets:
        wanted = set(preset_sweep_keys(preset, universe))
    else:
        return set()
    return {s for s in wanted if s.signal_type != SINUSOID and s.family in families}


def preset_coverage(sweeps: set[SweepKey], universe: Universe | None = None) -> dict[str, Any]:
    """The smallest preset holding every answered sweep, and how many of its sweeps were answered."""
    for name in [*layout().presets, ALL_PRESET]:
        wanted = scored_sweeps(name, universe)
        if sweeps <= wanted:
            return {"preset": name, "sweeps": len(sweeps), "of": len(wanted)}
    return {"preset": ALL_PRESET, "sweeps": len(sweeps), "of": len(scored_sweeps(ALL_PRESET, universe))}


def _preset_rows(preset: str, answered: Mapping[SweepKey, int], universe: Universe | None = None) -> dict[str, Any]:
    """How many of a named preset's rows (every family) the file answered (`answered`: lines per
    sweep): a SMOKE file scored as FULL answers 1,280 of 9,600 rows, and the rest count as
    non-compliant in MB-Plus."""
    lay = layout()
    wanted = scored_sweeps(preset, universe) if preset in [*lay.presets, ALL_PRESET] else frozenset()
    wanted = wanted | transient_scope(preset, set(universe_of(universe).families), universe)
    rows = len(wanted) * lay.time_steps
    return {"preset": preset, "answered": sum(n for s, n in answered.items() if s in wanted), "rows": rows}


def _repeatability(
    values: np.ndarray,
    where: np.ndarray,
    in_scope: np.ndarray,
    index: Any,
    conditions: dict[str, str],
    index_families: tuple[str, ...],
) -> dict[str, Any]:
    """Repeatability of the file's answers to the rows in scope (see `repeatability`), or why it
    was not measured."""
    if conditions.get("dedupe") == "yes":
        return {"measured": False, "note": "deduplicated: each distinct prompt was asked once"}
    if conditions.get("protocol", "stateless") != "stateless":
        return {"measured": False, "note": "a conversation's turns are not repeats of one question"}
    answered = (where < index.size) & in_scope
    # An answer's identity: its parsed number (no number: one identity of its own). Texts would
    # differ for a chatty model whose numbers agree ("1.2 % identical, mean spread 0.000000").
    _, identity = np.unique(np.where(np.isnan(values), np.inf, values), return_inverse=True)
    at = where[answered]
    found = repeatability(
        index.family_code[at],
        index.prompt_id[at],
        identity[answered],
        values[answered],
        list(index_families),
    )
    if found is None:
        return {"measured": False, "note": "no prompt was answered twice"}
    return {"measured": True, **found}


def non_compliance(
    lines: list[tuple[Prediction, float]], parser: Parser = STRICT, shown: int = 4, total: int | None = None
) -> dict[str, Any]:
    """How many answered lines were compliant, why the others were not, and a few of them verbatim
    (`lines`: each line with the number it contributed, NaN when none; `total`: the number of
    lines, when `lines` holds only those without a number)."""
    kinds: Counter[str] = Counter()
    examples: list[str] = []
    for p, value in lines:
        if not math.isnan(value):
            continue
        if p.has_response:
            kind = parser.why_non_compliant(p.response)
        else:
            kind = "no-number" if p.prediction is not None else "null"
        kinds[kind or "no-number"] += 1
        text = (p.response or "") if p.has_response else "null"
        if p.has_response and len(examples) < shown and text not in examples:
            examples.append(text)
    total = len(lines) if total is None else total
    return {
        "lines": total,
        "compliant": total - sum(kinds.values()),
        "kinds": {k: kinds[k] for k in NON_COMPLIANT_KINDS if kinds[k]},
        "examples": [e if len(e) <= 300 else e[:297] + "..." for e in examples],
    }


def provenance(reference: Reference, config: ScoreConfig, preset: str, parser: Parser = STRICT) -> dict[str, Any]:
    """What a reader needs to tell how a score was made (in the manner of an eval log's spec)."""
    return {
        "method": "paper" if config.is_paper else CUSTOM,
        "package": "mathbode",
        "version": __version__,
        "scored_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "parser": parser.description,
        "parser_name": parser.name,
        "preset": preset,
        "config": {
            "mid_band": list(config.mid_band),
            "gain_scale": config.gain_scale,
            "phase_scale_deg": config.phase_scale_deg,
            "gain_weight": config.gain_weight,
            "phase_weight": config.phase_weight,
        },
        "reference": reference.provenance(),
    }


def _answered_rows(
    index: Any, where: np.ndarray, answered_at: np.ndarray, y: np.ndarray, names: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    """Per family, of the sinusoid rows in scope: how many there are, how many the file answered,
    and how many of those were compliant (a row not answered is not a non-compliant answer).
    `names`: the families `index.family_code` counts (the universe's slots)."""
    rows = np.bincount(index.family_code[where.ravel()], minlength=len(names))
    answered = np.bincount(index.family_code[answered_at], minlength=len(names))
    compliant = np.bincount(index.family_code[where.ravel()[np.isfinite(y.ravel())]], minlength=len(names))
    return {
        name: {"rows": int(rows[i]), "answered": int(answered[i]), "compliant": int(compliant[i])}
        for i, name in enumerate(names)
        if rows[i]
    }


def recorded_conditions(conditions: dict[str, str] | None) -> dict[str, str]:
    """A submission's conditions with the defaults it was asked under filled in: a sequential
    file from before run-ins existed started every sweep cold (run-in 0)."""
    out = {**DEFAULT_CONDITIONS, **(conditions or {})}
    if out["protocol"] == "sequential":
        out.setdefault("run_in", "0")
    return out


def _quiet_floats(function: Callable[..., Results]) -> Callable[..., Results]:
    """`function` with numpy's floating-point warnings off. An answer near the float limit overflows
    a sweep's sums of squares: its fit and metrics become inf or NaN, which the scores show as n/a
    or as the number they are. numpy's warnings about it printed the scorer's own file paths to the
    user and said nothing the scores do not."""

    @functools.wraps(function)
    def quiet(*args: Any, **kwargs: Any) -> Results:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return function(*args, **kwargs)

    return quiet


@dataclass(frozen=True)
class ScoringContext:
    """What a section of the results document is computed from: one submission's answers laid
    over the reference's rows, the sweeps in scope and the core pipeline's tables. Built once by
    `score`; each entry of `SECTIONS` reads it and nothing else."""

    reference: Reference
    universe: Universe
    index: ReferenceIndex
    config: ScoreConfig
    parser: Parser
    answers: Answers
    #: The number each line contributes (NaN: none), and its row's position in the reference.
    values: np.ndarray
    where_all: np.ndarray
    #: Every answer over the reference's rows (NaN: not answered or non-compliant).
    y_all: np.ndarray
    #: Lines per sweep answered, and the sinusoid sweeps among them.
    answered: dict[SweepKey, int]
    touched: set[SweepKey]
    #: The preset named (None: detected from the answers), and the one scored.
    preset: str | None
    preset_name: str
    #: The sinusoid sweeps in scope, in canonical order; their rows (sweep x step), answers,
    #: hits (the truth to six decimals) and distinct prompts.
    scoped: list[SweepKey]
    where: np.ndarray
    y: np.ndarray
    hits: np.ndarray
    prompts: np.ndarray
    #: sweeps.csv, and frequency_summary.csv with its interval bars when intervals were asked.
    sweeps: Table
    summary: Table
    intervals: Intervals | None
    #: Per line: whether it answers a scoped sinusoid row; whether it answers any row scored
    #: (chirp, step and multi-tone too: what repeatability reads); whether it is a sinusoid's.
    in_scope_line: np.ndarray
    scored_line: np.ndarray
    sinusoid_line: np.ndarray
    transient_sweeps: set[SweepKey]
    transient_where: list[int]
    chirp: Table
    step: Table
    multitone_answered: list[SweepKey]
    #: The conditions recorded: the submission's, the defaults it was asked under, the release.
    conditions: dict[str, str]
    #: What one computation gives two sections (GAP's pairs and their pooled headline).
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def n_sweeps(self) -> int:
        return len(self.scoped)


def _non_compliant(c: ScoringContext) -> NonCompliant:
    unanswered = np.flatnonzero(c.in_scope_line & np.isnan(c.values)).tolist()
    lines = [(c.answers.at(i), c.values[i]) for i in unanswered]
    return cast(NonCompliant, non_compliance(lines, c.parser, total=int(c.in_scope_line.sum())))


def _transient_answers(c: ScoringContext) -> AnsweredRows:
    compliant = int(np.isfinite(c.y_all[c.transient_where]).sum()) if c.transient_where else 0
    return {"rows": len(c.transient_where), "answered": int((~c.sinusoid_line).sum()), "compliant": compliant}


def _repeats(c: ScoringContext) -> Repeatability:
    found = _repeatability(c.values, c.where_all, c.scored_line, c.index, c.conditions, c.universe.slots)
    return cast(Repeatability, found)


def _transient_diagnostics(c: ScoringContext) -> Diagnostics | None:
    if not c.transient_sweeps:
        return None
    return cast(Diagnostics, diagnostics(c.chirp, c.step, c.summary, c.universe.families))


def _paired(c: ScoringContext) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """GAP's pairs and their pooled headline per kind: one computation, two sections (cached on
    the context, whose first section asks)."""
    if not (c.reference.variants and c.n_sweeps):
        return None
    if "paired" not in c.cache:
        sequential = c.conditions.get("protocol") == "sequential"
        c.cache["paired"] = variant_scores(
            c.sweeps, c.scoped, c.hits, c.reference.variants, c.config, sequential, c.prompts
        )
    return cast(tuple[dict[str, Any], dict[str, Any]], c.cache["paired"])


def _variants(c: ScoringContext) -> dict[str, dict[str, VariantComparison]] | None:
    paired = _paired(c)
    return None if paired is None else cast(dict[str, dict[str, VariantComparison]], paired[0])


def _variants_pooled(c: ScoringContext) -> dict[str, PooledVariants] | None:
    paired = _paired(c)
    return None if paired is None else cast(dict[str, PooledVariants], paired[1])


def _multitone(c: ScoringContext) -> Multitone | None:
    if not c.multitone_answered:
        return None
    protocol = c.conditions.get("protocol", "stateless")
    copies = c.conditions.get("dedupe") == "yes"
    plan = c.universe.layout.multitone
    return cast(Multitone, multitone_reading(c.index, c.y_all, c.multitone_answered, plan, protocol, copies))


#: The sections of `scores` after its head, in the order the document writes them: each a function
#: of the scoring context, None where the section does not apply (then it is left out). A new
#: section is one entry here, its type in `evaluator/sections.py` and its schema (docs/internals.md,
#: "Adding a section").
SECTIONS: tuple[tuple[str, Callable[[ScoringContext], Any]], ...] = (
    ("num_sweeps", lambda c: c.n_sweeps),
    ("num_answers", lambda c: int(np.isfinite(c.y).sum())),
    ("num_answered", lambda c: int(c.in_scope_line.sum())),
    ("answered_rows", lambda c: _answered_rows(c.index, c.where, c.where_all[c.in_scope_line], c.y, c.universe.slots)),
    ("num_rows", lambda c: int(c.y.size)),
    ("transient_answers", _transient_answers),
    ("preset_rows", lambda c: _preset_rows(c.preset_name, c.answered, c.universe) if c.preset else None),
    ("coverage", lambda c: preset_coverage(c.touched, c.universe) if c.touched else None),
    ("conditions", lambda c: c.conditions),
    ("non_compliant", _non_compliant),
    ("accuracy", lambda c: exact_units(c.hits, c.prompts, [(s.family, s.question_id) for s in c.scoped])),
    ("intervals", lambda c: c.intervals),
    ("repeatability", _repeats),
    ("diagnostics", _transient_diagnostics),
    ("phase_parts", lambda c: phase_parts(c.sweeps, c.config.mid_band) or None),
    ("variants", _variants),
    ("variants_pooled", _variants_pooled),
    ("multitone", _multitone),
    ("dynamics", lambda c: dynamics(c.sweeps, c.conditions) if c.n_sweeps else None),
)
#: Sections that are written even when None (null in the document: "none", not "not applicable").
_NULL_IS_WRITTEN = frozenset({"preset_rows", "coverage"})


def sections_of(context: ScoringContext) -> Sections:
    """Every section of `SECTIONS` that applies to `context`, in document order."""
    out: dict[str, Any] = {}
    for name, compute in SECTIONS:
        found = compute(context)
        if found is not None or name in _NULL_IS_WRITTEN:
            out[name] = found
    return cast(Sections, out)


@_quiet_floats
def score(
    answers: Answers | Sequence[Prediction],
    reference: Reference,
    label: str,
    model: str | None = None,
    preset: str | None = None,
    config: ScoreConfig = PAPER_CONFIG,
    conditions: dict[str, str] | None = None,
    parser: Parser = STRICT,
    resamples: int = 0,
) -> Results:
    """Measure one submission (its `Answers`, or its lines as `Prediction`s). `preset` limits the
    sweeps; by default every sinusoid sweep it answers.

    `resamples` > 0 adds 95 % intervals of the headline scores and each cell's gain and phase
    (see `uncertainty`; they are computed, not resampled: any number above 0 turns them on).
    The sections after the core pipeline are `SECTIONS`'.
    """
    universe = reference.universe
    answers = answers.in_universe(universe) if isinstance(answers, Answers) else Answers.of(answers, universe)
    lay = layout()
    T = lay.time_steps
    index = reference_index(reference)
    # Every answer in one array over the reference's rows (NaN: not answered or non-compliant).
    values = answer_values(answers, parser)
    where_all = index.position_of_row[answers.row]
    y_all = index.answer_array(values, where_all)
    # The sweeps answered (sweep number = row_id // T), each with its count of lines.
    sinusoid_line = _sinusoid_rows(universe)[answers.row]
    order = canonical_sweep_order(universe)
    sweep_numbers, counts = np.unique(answers.row // T, return_counts=True)
    answered = {order[s]: n for s, n in zip(sweep_numbers.tolist(), counts.tolist(), strict=True)}
    touched: set[SweepKey] = {s for s in answered if s.signal_type == SINUSOID}
    transient_sweeps = {s for s in answered if s.signal_type in (CHIRP, STEP)}
    multitone_answered = [s for s in index.multitone_sweeps if s in answered]
    answered_families = {s.family for s in touched}
    if preset:
        preset_name = lay.preset_name(preset) if preset.upper() != ALL_PRESET else ALL_PRESET
        in_scope = {s for s in scored_sweeps(preset_name, universe) if s.family in answered_families}
        transient_families = answered_families | {s.family for s in transient_sweeps}
        transient_sweeps |= transient_scope(preset_name, transient_families, universe)
        if not (in_scope | transient_scope(preset_name, transient_families, universe)) & answered.keys():
            kinds = ", ".join(sorted({s.signal_type for s in answered})) or "no"
            raise UsageError(
                f"{label}: answers none of the rows of preset {preset_name} (it answers {kinds} rows, "
                f"{len(answered):,} sweeps); score it without --preset, or with the preset it answers."
            )
    elif universe.drives == MULTITONE and not touched:
        # A multi-tone release has one preset, ALL (every row of it): named so when every sweep is answered.
        complete = len(multitone_answered) == len(index.multitone_sweeps)
        in_scope, preset_name = touched, ALL_PRESET if complete else CUSTOM
    else:
        in_scope, preset_name = touched, detect_preset(touched, transient_sweeps, universe)

    # The sweeps in scope, in canonical order (families in layout order), steps in time order.
    scoped = [s for s in index.sinusoid_sweeps if s in in_scope]
    n_sweeps = len(scoped)
    where = np.array([index.steps[s] for s in scoped], dtype=np.int64).reshape(n_sweeps, T)
    y = y_all[where]
    truth = index.truth[where]
    metrics = [sweep_metrics(truth[i], y[i], s.frequency_cycles or 0.0, T) for i, s in enumerate(scoped)]
    sweeps = Table(
        {
            **{c: np.array([getattr(s, c) for s in scoped], dtype=SWEEP_COLUMN_TYPES[c]) for c in SWEEP_COLUMNS},
            **{m: np.array([row[m] for row in metrics], dtype=float) for m in SWEEP_METRICS},
        },
        length=n_sweeps,
    )
    summary = frequency_summary(sweeps)
    fam = family_scores(summary, config)
    # Correct = the answer is the truth truncated to six decimals (missing answers are not).
    hits = y == index.exact[where]
    # The lines in scope: those whose row is a step of a scoped sweep (the rest are not scored).
    scoped_row = np.zeros(index.size + 2, dtype=bool)
    scoped_row[where.ravel()] = True
    in_scope_line = scoped_row[where_all]
    # A paired release is read in pairs: its headline is over the original families alone (the
    # variants are compared with them in `variants`, never averaged in with them).
    originals = tuple(f for f in universe.families if f not in reference.variants)
    total = overall({f: s for f, s in fam.items() if f not in reference.variants}, originals)
    intervals: Intervals | None = None
    if resamples > 0 and n_sweeps:
        # The diagnostics read the summary with its interval bars: intervals are part of the core.
        reported = Reported.of_summary(fam, total, summary)
        found, bars = score_intervals(sweeps, config, universe.families, reported)
        if reference.variants:
            _overall_of_originals(found, sweeps, config, originals, reported)
        intervals = cast(Intervals, found)
        summary = summary.join(bars, on=["family", "frequency_cycles"])
    chirp, step, step_curves = transient_tables(index, y_all, transient_sweeps)
    traces = [_trace(s, truth[i], y[i]) for i, s in enumerate(scoped) if s.frequency_cycles in config.mid_band]
    traces += [
        _trace(s, index.truth[index.steps[s]], y_all[index.steps[s]])
        for s in index.transient_sweeps
        if s in transient_sweeps
    ]
    # The chirp and step rows answered (MB-Core and MB-Plus never use them: they are reported apart).
    transient_where = [i for s in index.transient_sweeps if s in transient_sweeps for i in index.steps[s]]
    scored_row = scoped_row.copy()
    scored_row[transient_where] = True
    # A multisine's periods ask the same prompts again: a stateless run's repeats, read like any other.
    scored_row[[i for s in multitone_answered for i in index.steps[s]]] = True
    context = ScoringContext(
        reference=reference,
        universe=universe,
        index=index,
        config=config,
        parser=parser,
        answers=answers,
        values=values,
        where_all=where_all,
        y_all=y_all,
        answered=answered,
        touched=touched,
        preset=preset,
        preset_name=preset_name,
        scoped=scoped,
        where=where,
        y=y,
        hits=hits,
        prompts=index.prompt_id[where],
        sweeps=sweeps,
        summary=summary,
        intervals=intervals,
        in_scope_line=in_scope_line,
        scored_line=scored_row[where_all],
        sinusoid_line=sinusoid_line,
        transient_sweeps=transient_sweeps,
        transient_where=transient_where,
        chirp=chirp,
        step=step,
        multitone_answered=multitone_answered,
        conditions={**recorded_conditions(conditions), **(reference.release_identity() or {})},
    )
    if not n_sweeps and multitone_answered:
        total["note"] = "no sinusoid rows: a multi-tone release is read by its multitone section"
    elif not n_sweeps:
        total["note"] = "no sinusoid rows: MB-Core and MB-Plus are made from sinusoid sweeps only"
    return Results(
        label=label,
        model=model,
        preset=preset_name,
        sweeps=sweeps,
        summary=summary,
        families=fam,
        overall=total,
        extra=sections_of(context),
        provenance=provenance(reference, config, preset_name, parser),
        correct=_CorrectRows(index.rows, where.ravel(), hits.ravel(), universe, context.prompts.ravel()),
        chirp=chirp,
        step=step,
        step_curves=step_curves,
        traces=traces,
    )


def _overall_of_originals(
    intervals: dict[str, Any], sweeps: Table, config: ScoreConfig, originals: tuple[str, ...], reported: Any
) -> None:
    """The overall intervals of a paired release made again over the original families' sweeps
    alone, as its overall is (each family's own interval stays as computed over all sweeps)."""
    mine = sweeps.take(np.flatnonzero(np.isin(sweeps["family"], list(originals))))
    theirs, _ = score_intervals(mine, config, originals, reported)
    intervals["overall"] = theirs["overall"]
    for held in ("df", "no_interval"):
        kept = {k: v for k, v in intervals[held].items() if not k.startswith("overall.")}
        intervals[held] = {**{k: v for k, v in theirs[held].items() if k.startswith("overall.")}, **kept}
    intervals["n_units"], intervals["problems"] = theirs["n_units"], theirs["problems"]


def exact_units(hits: np.ndarray, prompts: np.ndarray, problems: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """`accuracy` of scores.json: the rows answered exactly, and the Wilson interval over distinct
    prompts (rows asking one prompt are one unit: copies under --dedupe, repeat measurements
    otherwise; a prompt is exact when strictly more than half of its rows are). `problems`: each
    scoped sweep's (family, question), which the units are drawn from."""
    rows = hits.size
    exact, _ = majority(prompts.ravel(), hits.ravel())
    units = int(exact.size)
    return {
        "correct": int(hits.sum()),
        "rows": rows,
        "rate": float(hits.mean()) if rows else math.nan,
        "unit": PROMPT,
        "n_units": units,
        "units_exact": int(exact.sum()),
        "unit_rate": float(exact.mean()) if units else math.nan,
        "problems": len(set(problems)),
        "wilson_95": wilson_interval(int(exact.sum()), units),
    }


def multitone_reading(
    index: Any, y_all: np.ndarray, answered: list[SweepKey], plan: MultitonePlan, protocol: str, copies: bool = False
) -> dict[str, Any]:
    """`multitone` of scores.json: each family's multi-tone measurement (see `multitone`), its claims
    Holm-adjusted over the families, the families not measured and why, and the overall summary."""
    by_family: dict[str, list[MultitoneSweep]] = {}
    rows = np.concatenate([index.steps[s] for s in answered]) if answered else np.zeros(0, dtype=np.int64)
    for s in answered:
        steps = index.steps[s]
        by_family.setdefault(s.family, []).append(
            MultitoneSweep(
                s.signal_type,
                s.question_id,
                int(s.frequency_cycles or 0),
                int(s.phase_deg or 0),
                index.truth[steps],
                y_all[steps],
            )
        )
    measured = {f: measure_family(sweeps, plan, protocol, copies) for f, sweeps in by_family.items()}
    families = conclude({f: m for f, m in measured.items() if m is not None})
    not_measured = {}
    for f in (f for f, m in measured.items() if m is None):
        steps = np.concatenate([index.steps[s] for s in answered if s.family == f])
        compliant = int(np.isfinite(y_all[steps]).sum())
        not_measured[f] = (
            f"not measured: no realization fully answered ({compliant:,} of {steps.size:,} rows compliant; "
            "an experiment needs every step of a period)"
        )
    counts = {"rows": int(rows.size), "answers": int(np.isfinite(y_all[rows]).sum())}
    out = {"protocol": protocol, **counts, "families": families, "summary": summarize(families)}
    if not_measured:
        out["not_measured"] = not_measured
    return out
