"""The layout contract (columns, grid, presets), loaded once from `layout.json`.

Everything that needs a fact about the shape of the dataset (the builder, the validator, the
card, the evaluator, the tests) asks this module rather than repeating a literal.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import pyarrow as pa

from mathbode.core.errors import UnknownNameError, unknown_name_message

from .drives import MULTISINE, MULTITONE, STANDARD, TWO_TONE, MultitoneDesign, MultitonePlan, plan_of

SINUSOID, CHIRP, STEP = "sinusoid", "chirp", "step"
#: The drives a release may be built with.
DRIVE_NAMES = (STANDARD, MULTITONE)
#: Signal types whose frequency_cycles and phase_deg are part of a row's key.
KEYED_SIGNALS = (SINUSOID, MULTISINE, TWO_TONE)


@dataclass(frozen=True, order=True)
class Sweep:
    """One driven sequence of `time_steps` rows within a question.

    `frequency_cycles` and `phase_deg` are set only for sinusoids: a chirp's frequency changes
    at every step (it is a per-row value), and a step has neither.
    """

    signal_type: str
    amplitude_scale: float
    frequency_cycles: float | None = None
    phase_deg: float | None = None


@dataclass(frozen=True)
class Preset:
    """A subset of sinusoid sweeps: the paper's appendix B names four for cheaper runs (of the first
    K base keys); PAIRED asks one sweep of every question (docs/variants.md, many problems)."""

    name: str
    #: Frequencies (cycles per T steps) included.
    frequencies: tuple[int, ...]
    #: Frequencies at which all start phases are used; the others use the default phase only.
    tri_phase_frequencies: tuple[int, ...]
    #: With `every_question`, the amplitudes asked of each; None: the first K base keys' (the paper's).
    amplitude_scales: tuple[float, ...] | None = None
    #: Every question of the release, not only the base keys' (the evidence is over problems).
    every_question: bool = False

    @property
    def is_papers(self) -> bool:
        """One of the paper's presets (appendix B), which the dataset card lists."""
        return not self.every_question and self.amplitude_scales is None


@dataclass(frozen=True)
class TransientPreset:
    """Every chirp and/or step sweep of some questions: what the transient measurements need."""

    name: str
    signal_types: tuple[str, ...]
    question_ids: tuple[int, ...]


@dataclass(frozen=True)
class Layout:
    """The facts of `layout.json`, typed."""

    time_steps: int
    column_names: tuple[str, ...]
    column_descriptions: dict[str, str]
    arrow_schema: pa.Schema
    key: tuple[str, ...]
    #: The canonical release's families (the paper's dataset), in its order.
    families: tuple[str, ...]
    #: What any family's name must match: `name` built in, `namespace.name` from a plugin package
    #: (a valid file name and Hub config name either way).
    family_name_pattern: str
    #: What a release's name (MANIFEST.json `name`) must match.
    release_name_pattern: str
    question_ids: tuple[int, ...]
    sinusoid_amplitudes: tuple[float, ...]
    sinusoid_frequencies: tuple[float, ...]
    sinusoid_phases_deg: tuple[float, ...]
    chirp_amplitudes: tuple[float, ...]
    chirp_start_cycles: float
    chirp_end_cycles: float
    step_amplitudes: tuple[float, ...]
    step_switch: int
    presets: dict[str, Preset]
    #: Presets of chirp and step sweeps (not the paper's; see docs/chirp-step.md).
    transient_presets: dict[str, TransientPreset]
    preset_base_keys_per_family: int
    preset_default_phase_deg: float
    answer_start: str
    answer_end: str
    answer_decimals: int
    #: The multi-tone drives' plan (lines, realizations, periods, phases).
    multitone: MultitonePlan
    #: Which grid `sweeps()` gives: `standard` (the paper's) or `multitone` (see `drives`).
    drives: str = STANDARD

    # -- the grid ---------------------------------------------------------------------------
    def sweeps(self) -> tuple[Sweep, ...]:
        """The sweeps of one question, in the dataset's row order."""
        if self.drives == MULTITONE:
            return self._multitone_sweeps()
        sinusoids = [
            Sweep(SINUSOID, s, f, ph)
            for s in self.sinusoid_amplitudes
            for f in self.sinusoid_frequencies
            for ph in self.sinusoid_phases_deg
        ]
        chirps = [Sweep(CHIRP, s) for s in self.chirp_amplitudes]
        steps = [Sweep(STEP, s) for s in self.step_amplitudes]
        return tuple(sinusoids + chirps + steps)

    def _multitone_sweeps(self) -> tuple[Sweep, ...]:
        # Realization r, period k: frequency_cycles = k, phase_deg = r (see `drives`).
        plan = self.multitone
        out = [
            Sweep(MULTISINE, s, float(k), float(r))
            for s in plan.amplitude_scales
            for r in range(plan.realizations)
            for k in range(plan.periods)
        ]
        out += [Sweep(TWO_TONE, s, float(k), 0.0) for s in plan.amplitude_scales for k in range(plan.two_tone_periods)]
        return tuple(out)

    @property
    def rows_per_question(self) -> int:
        return len(self.sweeps()) * self.time_steps

    @property
    def rows_per_family(self) -> int:
        return len(self.question_ids) * self.rows_per_question

    def rows_per_signal_type(self) -> dict[str, int]:
        """Rows of one family per signal type."""
        counts: dict[str, int] = {}
        for sweep in self.sweeps():
            counts[sweep.signal_type] = counts.get(sweep.signal_type, 0) + self.time_steps
        return {k: v * len(self.question_ids) for k, v in counts.items()}

    # -- the answer format -------------------------------------------------------------------
    def answer_instruction(self) -> str:
        """The answer-format sentence that ends every prompt (paper, appendix C)."""
        example = "X." + "Y" * self.answer_decimals
        return (
            f"Reply with only the final answer in the form {self.answer_start} {example} {self.answer_end}, "
            f"written as a decimal number with exactly {self.answer_decimals} digits after the decimal point "
            "and no other text."
        )

    # -- presets ----------------------------------------------------------------------------
    def preset(self, name: str) -> Preset:
        key = name.upper()
        if key not in self.presets:
            raise UnknownNameError(unknown_name_message("preset", name, list(self.presets)))
        return self.presets[key]

    def preset_name(self, name: str) -> str:
        """The canonical name of a paper or transient preset (any case); an unknown name is an error."""
        key = name.upper()
        if key not in self.presets and key not in self.transient_presets:
            known = [*self.presets, *self.transient_presets]
            raise UnknownNameError(unknown_name_message("preset", name, known))
        return key

    def preset_base_keys(self, preset: Preset | None = None) -> tuple[tuple[int, float], ...]:
        """The (question_id, amplitude_scale) pairs a preset uses: the paper's, the first K in sorted
        order; one that asks every question (PAIRED), each question at its amplitudes."""
        if preset is not None and preset.every_question:
            amplitudes = preset.amplitude_scales or self.sinusoid_amplitudes
            return tuple((q, s) for q in self.question_ids for s in amplitudes)
        pairs = sorted((q, s) for q in self.question_ids for s in self.sinusoid_amplitudes)
        return tuple(pairs[: self.preset_base_keys_per_family])

    def preset_grid(self, name: str) -> tuple[tuple[int, Sweep], ...]:
        """(question_id, sweep) pairs of a preset, the same for every family."""
        if name.upper() in self.transient_presets:
            transient = self.transient_presets[name.upper()]
            return tuple(
                (q, s) for q in transient.question_ids for s in self.sweeps() if s.signal_type in transient.signal_types
            )
        preset = self.preset(name)
        out = []
        for q, s in self.preset_base_keys(preset):
            for f in preset.frequencies:
                phases = (
                    self.sinusoid_phases_deg if f in preset.tri_phase_frequencies else (self.preset_default_phase_deg,)
                )
                for ph in phases:
                    out.append((q, Sweep(SINUSOID, s, float(f), float(ph))))
        return tuple(out)


_ARROW_TYPES = {"string": pa.string(), "int64": pa.int64(), "double": pa.float64()}


def chosen_design(design: MultitoneDesign | None) -> MultitoneDesign | None:
    """`design`, or None when it is the layout's own: a release, a request and a universe of the
    layout's design are written and keyed as one built without options (byte for byte the same)."""
    return None if design is None or design == layout(MULTITONE).multitone.design else design


#: The most problems a family of a release may hold (`mathbode-build --questions`): 1,000 problems
#: are 3.1 M rows a family, a release of the canonical five and their GAP variants 94 M.
MAX_QUESTIONS = 1000


@cache
def layout(drives: str = STANDARD, questions: int | None = None, design: MultitoneDesign | None = None) -> Layout:
    """The layout contract, parsed once per process; `drives` picks the grid of `sweeps()`,
    `questions` how many problems a family holds (None: the contract's, question_ids 0, 1, 2),
    `design` the multi-tone drives' realizations, periods and level (None: the contract's)."""
    if design is not None:
        if drives != MULTITONE:
            raise ValueError("a multi-tone design is a design of the multitone drives")
        base = layout(drives, questions)
        plan = base.multitone.designed(design)
        return base if plan == base.multitone else dataclasses.replace(base, multitone=plan)
    if questions is not None:
        if not 1 <= questions <= MAX_QUESTIONS:
            raise ValueError(f"questions = {questions}: a family holds 1 to {MAX_QUESTIONS:,} problems")
        base = layout(drives)
        ids = tuple(range(questions))
        return base if ids == base.question_ids else dataclasses.replace(base, question_ids=ids)
    if drives != STANDARD:
        if drives not in DRIVE_NAMES:
            raise UnknownNameError(unknown_name_message("drives", drives, list(DRIVE_NAMES)))
        return dataclasses.replace(layout(), drives=drives, presets={}, transient_presets={})
    raw = json.loads(resources.files(__package__).joinpath("layout.json").read_text("utf-8"))
    sig = raw["signals"]
    schema = pa.schema(
        [pa.field(c["name"], _ARROW_TYPES[c["arrow_type"]], nullable=c["nullable"]) for c in raw["columns"]]
    )
    floats = lambda xs: tuple(float(x) for x in xs)  # noqa: E731 - JSON ints are grid floats
    return Layout(
        time_steps=raw["time_steps"],
        column_names=tuple(c["name"] for c in raw["columns"]),
        column_descriptions={c["name"]: c["description"] for c in raw["columns"]},
        arrow_schema=schema,
        key=tuple(raw["key"]),
        families=tuple(raw["families"]),
        family_name_pattern=raw["family_name_pattern"],
        release_name_pattern=raw["release_name_pattern"],
        question_ids=tuple(raw["question_ids"]),
        sinusoid_amplitudes=floats(sig[SINUSOID]["amplitude_scales"]),
        sinusoid_frequencies=floats(sig[SINUSOID]["frequencies"]),
        sinusoid_phases_deg=floats(sig[SINUSOID]["phases_deg"]),
        chirp_amplitudes=floats(sig[CHIRP]["amplitude_scales"]),
        chirp_start_cycles=float(sig[CHIRP]["start_cycles"]),
        chirp_end_cycles=float(sig[CHIRP]["end_cycles"]),
        step_amplitudes=floats(sig[STEP]["amplitude_scales"]),
        step_switch=int(sig[STEP]["switch_step"]),
        presets={
            name: Preset(
                name,
                tuple(p["frequencies"]),
                tuple(p["tri_phase_frequencies"]),
                floats(p["amplitude_scales"]) if "amplitude_scales" in p else None,
                bool(p.get("every_question", False)),
            )
            for name, p in raw["presets"].items()
        },
        transient_presets={
            name: TransientPreset(name, tuple(p["signal_types"]), tuple(p["question_ids"]))
            for name, p in raw.get("transient_presets", {}).items()
        },
        preset_base_keys_per_family=raw["preset_base_keys_per_family"],
        preset_default_phase_deg=float(raw["preset_default_phase_deg"]),
        answer_start=raw["answer_format"]["start_tag"],
        answer_end=raw["answer_format"]["end_tag"],
        answer_decimals=raw["answer_format"]["decimals"],
        multitone=plan_of(raw["drives"][MULTITONE], raw["time_steps"]),
    )
