"""What a results document's `scores` holds, section by section: the types of the dict that exists.

Typed as lm-evaluation-harness types its results dict (a `TypedDict` per part, the bytes written
unchanged), so that mypy checks every read of a section by name, and a newcomer learns what a
document holds from this file rather than from `score()`. `schema/results.schema.json` states the
same: `tests/test_sections.py` compares every type here with its schema object both ways (the keys
declared are the schema's `properties`, the required ones its `required`) and scores every kind of
release to prove that what the scorer writes is what both say.

A key that is `NotRequired` is absent from some documents: those written by an earlier version
(which must still read) or those it does not apply to (`dynamics`: sequential submissions only).
In memory a number that could not be measured is NaN; the document writes it as null.

Between the rooms: the scorer fills these (`scorer/scoring.py`), the presentation reads them;
neither is imported here.
"""

# No `from __future__ import annotations`: TypedDict reads Required and NotRequired from the
# evaluated annotations (a string annotation would make every key required).
from typing import Literal, NotRequired, Required, Sequence, TypedDict, Union

#: A 95 % interval (low, high), or None where none is given (a list once read back from JSON).
Interval = Union[Sequence[float], None]


class Subset(TypedDict):
    """`overall.subset`: the headline scores over the families every submission compared answered."""

    families: list[str]
    mb_core: NotRequired[float]
    mb_plus: NotRequired[float]
    mb_core_calibrated: NotRequired[float]
    mb_plus_calibrated: NotRequired[float]


class Overall(TypedDict):
    """`overall`: the headline scores over every family scored."""

    mb_core: float
    mb_plus: float
    mb_core_calibrated: NotRequired[float]
    mb_plus_calibrated: NotRequired[float]
    num_families: int
    #: Why there is no score (no sinusoid rows).
    note: NotRequired[str]
    #: Present when some families were left out of the comparison.
    subset: NotRequired[Subset]


class FamilyScores(TypedDict):
    """`families.<family>`: one family's scores and the mid-band means they are made from."""

    mb_core: float
    mb_plus: NotRequired[float]
    gain_abs_err_mid: NotRequired[float]
    phase_abs_deg_mid: NotRequired[float]
    r2_mean: NotRequired[float]
    acf1_abs_mean: NotRequired[float]
    compliance_mean: NotRequired[float]
    mb_core_calibrated: NotRequired[float]
    mb_plus_calibrated: NotRequired[float]
    gain_abs_err_mid_cal: NotRequired[float]
    phase_abs_deg_mid_cal: NotRequired[float]
    r2_cal_mean: NotRequired[float]
    acf1_cal_abs_mean: NotRequired[float]
    #: Why a score is missing (no mid-band frequency answered).
    note: NotRequired[str]


class ScoringConfig(TypedDict):
    """`provenance.config`: the scoring's parameters (the paper's, unless `method` is custom)."""

    mid_band: list[float]
    gain_scale: float
    phase_scale_deg: float
    gain_weight: float
    phase_weight: float


class ReferenceProvenance(TypedDict):
    """`provenance.reference`: the release the answers were scored against."""

    source: NotRequired[str]
    content_hash: NotRequired[str]
    release: NotRequired[str | None]
    release_content_hash: NotRequired[str | None]
    #: A split's prompts hash (None: the canonical rows).
    split: NotRequired[str | None]
    families: NotRequired[dict[str, str]]


class InputFile(TypedDict):
    """`provenance.input`: the submission file scored (`mathbode score` adds it)."""

    file: str
    sha256: str
    split: NotRequired[str | None]


class Provenance(TypedDict):
    """`provenance`: how a score was made (in the manner of an eval log's spec)."""

    method: NotRequired[Literal["paper", "custom"]]
    package: str
    version: str
    scored_at: NotRequired[str]
    parser: str
    parser_name: NotRequired[str]
    preset: NotRequired[str]
    config: ScoringConfig
    reference: ReferenceProvenance
    input: NotRequired[InputFile | None]


class AnsweredRows(TypedDict):
    """Rows in scope, those answered, and of those the compliant ones."""

    rows: int
    answered: int
    compliant: int


class PresetRows(TypedDict):
    """`preset_rows`: how many of a named preset's rows the file answered."""

    preset: str
    rows: int
    answered: int


class Coverage(TypedDict):
    """`coverage`: the smallest preset holding every answered sweep, and how many of its sweeps."""

    preset: str
    sweeps: int
    of: int


class NonCompliant(TypedDict):
    """`non_compliant`: the answered lines without a number, by kind, and a few verbatim."""

    lines: int
    compliant: int
    kinds: dict[str, int]
    examples: list[str]


class Accuracy(TypedDict):
    """`accuracy`: rows answered exactly, and the Wilson interval over distinct prompts."""

    correct: int
    rows: int
    rate: float
    wilson_95: Interval
    unit: NotRequired[Literal["distinct prompt"]]
    n_units: NotRequired[int]
    units_exact: NotRequired[int]
    unit_rate: NotRequired[float]
    problems: NotRequired[int]


class Intervals(TypedDict):
    """`intervals` (`--bootstrap`): 95 % intervals of the headline scores, overall and per family."""

    method: NotRequired[str]
    level: NotRequired[float]
    #: score name -> interval.
    overall: dict[str, Interval]
    #: family -> score name -> interval.
    families: NotRequired[dict[str, dict[str, Interval]]]
    #: Degrees of freedom of each interval, by its name.
    df: NotRequired[dict[str, float]]
    #: Why an interval is missing, by its name.
    no_interval: NotRequired[dict[str, str]]
    unit: NotRequired[Literal["sweep"]]
    n_units: NotRequired[int]
    problems: NotRequired[int]


class Repeats(TypedDict):
    """How alike the answers to one prompt asked more than once are."""

    repeated_prompts: int
    identical_share: float
    #: In the answers' own units (the overall one only in documents written before the relative spread).
    spread_mean: NotRequired[float]
    spread_relative_mean: NotRequired[float]


class Repeatability(TypedDict):
    """`repeatability`: measured over a stateless run's repeats, or why not."""

    measured: bool
    note: NotRequired[str]
    overall: NotRequired[Repeats]
    families: NotRequired[dict[str, Repeats]]


class PhaseParts(TypedDict):
    """`phase_parts.<family>`: the mid-band phase error split into a lag and an inconsistency."""

    lag_deg: float
    inconsistency_deg: float
    pairs: int


class ChirpPoint(TypedDict):
    """A chirp's reading at one requested frequency."""

    requested: float
    frequency_cycles: float
    gain: float
    phase_err_deg: float
    window_cycles: NotRequired[float]
    note: NotRequired[str]


class ChirpReading(TypedDict):
    """`diagnostics.chirp.<family>`."""

    sweeps: NotRequired[int]
    #: requested frequency (as text) -> the reading there.
    at: dict[str, ChirpPoint]


class StepReading(TypedDict):
    """`diagnostics.step.<family>`: the mean step response's transient figures."""

    sweeps: NotRequired[int]
    pre_error: float
    steady_state_error: float
    overshoot: float
    dead_time: float
    rise_time: float
    settling_time: float
    delay: float
    compliance: NotRequired[float]


class GainPhase(TypedDict):
    """A difference of gain and of phase error between two readings."""

    gain: float
    phase_err_deg: float


class Diagnostics(TypedDict):
    """`diagnostics`: the chirp and step readings, and how they agree with the sinusoids."""

    chirp: dict[str, ChirpReading]
    step: dict[str, StepReading]
    #: family -> comparison name -> a number, or a gain and phase difference.
    agreement: dict[str, dict[str, float | GainPhase]]


class Dynamics(TypedDict):
    """`dynamics.<family>` (sequential only): the delay and first-order low-pass fitted to the Bode data."""

    verdict: str
    #: The verdict as a word (documents written before it lack it).
    reading: NotRequired[Literal["not measured", "cannot tell", "no dynamics", "delay", "low-pass", "lag"]]
    frequencies: NotRequired[list[float]]
    delay_steps: NotRequired[float]
    delay_period_steps: NotRequired[float]
    delay_interval: NotRequired[Interval]
    delay_residual: NotRequired[float]
    #: Older documents only.
    delay_phase_residual: NotRequired[float]
    low_pass_a: NotRequired[float]
    low_pass_a_interval: NotRequired[Interval]
    time_constant_steps: NotRequired[float]
    #: a's interval through tau; an upper end of None: no bound.
    time_constant_interval: NotRequired[Sequence[float | None] | None]
    low_pass_residual: NotRequired[float]
    sweeps_per_cell: NotRequired[int]
    #: Older documents only.
    interval_note: NotRequired[str]
    flags: NotRequired[list[str]]


class VariantComparison(TypedDict):
    """`variants.<original>.<kind>`: a GAP variant minus its original on the same rows."""

    family: str
    kind: Literal["surface", "kernel"]
    shared_sweeps: int
    mb_core_diff: float
    mb_core_diff_interval: Interval
    #: Why there is no interval (null `mb_core_diff_interval`): too few units in a cell.
    mb_core_diff_no_interval: NotRequired[str]
    mb_core_diff_unit: NotRequired[Literal["problem", "sweep"]]
    mb_core_diff_n_units: NotRequired[int]
    mb_core_calibrated_diff: NotRequired[float]
    mb_core_calibrated_diff_interval: NotRequired[Interval]
    gain_error_diff: NotRequired[float]
    phase_err_diff_deg: NotRequired[float]
    unit: NotRequired[Literal["problem", "distinct prompt"]]
    n_units: NotRequired[int]
    problems: NotRequired[list[int]]
    distinct_prompts: NotRequired[int]
    units_exact_original: NotRequired[int]
    units_exact_variant: NotRequired[int]
    exact_share_original: NotRequired[float]
    exact_share_variant: NotRequired[float]
    shared_rows: int
    only_original_exact: int
    only_variant_exact: int
    mcnemar_p: float | None
    mcnemar_p_holm: NotRequired[float | None]
    mcnemar_tests: NotRequired[int]
    #: Sequential only: the variant's delay and time constant minus its original's.
    delay_diff_steps: NotRequired[float]
    delay_diff_interval: NotRequired[Interval]
    delay_period_steps: NotRequired[float]
    time_constant_diff_steps: NotRequired[float]
    time_constant_diff_interval: NotRequired[Interval]
    #: Sequential only: why the dynamics difference has no value or no interval.
    dynamics_diff_note: NotRequired[str]


class PooledVariants(TypedDict):
    """`variants_pooled.<kind>`: GAP's headline for one kind of variant, pooled over the families."""

    mb_core_diff: float
    mb_core_diff_interval: Interval
    families: list[str]
    unit: Literal["problem", "sweep", "mixed"]
    n_units: int
    #: Why there is no interval.
    no_interval: NotRequired[str]


class MultitoneLine(TypedDict):
    """One spectral line of a multisine: excited (the BLA's gain and phase) or a detection line."""

    cycles: int
    kind: Literal["excited", "even", "odd"]
    gain: float | None
    phase_deg: float | None
    level_db: float | None
    truth_level_db: float | None
    error_level_db: float | None
    added_db: float | None


class BlaInterval(TypedDict):
    """The BLA's interval at one excited line, from the noise and the stochastic distortion."""

    cycles: int
    gain_low: float | None
    gain_high: float | None
    phase_low_deg: float | None
    phase_high_deg: float | None
    noise_db: float | None
    stochastic_db: float | None


class TwoToneProduct(TypedDict):
    """One product of the two-tone test (a tone or an intermodulation line)."""

    cycles: int
    product: str
    level_db: float | None
    truth_level_db: float | None
    error_level_db: float | None
    added_db: float | None


class Memory(TypedDict):
    """Whether the answers read a memory (sequential only), and which model fits it."""

    read: bool
    found: bool | None
    why: NotRequired[str]
    model: NotRequired[Literal["delay", "low-pass", "lag"] | None]
    p_value: NotRequired[float | None]
    p_value_holm: NotRequired[float | None]
    tests: NotRequired[int]
    experiments: NotRequired[int]
    delay_steps: NotRequired[float | None]
    delay_gain: NotRequired[float | None]
    delay_residual: NotRequired[float | None]
    delay_interval: NotRequired[Sequence[float | None] | None]
    lowpass_alpha: NotRequired[float | None]
    lowpass_gain: NotRequired[float | None]
    lowpass_residual: NotRequired[float | None]
    time_constant_steps: NotRequired[float | None]
    time_constant_interval: NotRequired[Sequence[float | None] | None]


class Noise(TypedDict):
    """The noise across periods at the detection lines."""

    measured: bool
    level_db: float | None
    why: NotRequired[str]


class DistortionTests(TypedDict):
    """The F tests of the even and odd detection lines against the measured noise."""

    even_p: float | None
    odd_p: float | None
    even_p_holm: NotRequired[float | None]
    odd_p_holm: NotRequired[float | None]
    tests: NotRequired[int]
    claim_rate: NotRequired[float]


class MultitoneFamily(TypedDict):
    """`multitone.families.<family>`: one family's multi-tone measurement."""

    reference_level: float | None
    experiments: int
    lines: list[MultitoneLine]
    bla_intervals: list[BlaInterval]
    floor_db: float | None
    truncation_bound_db: NotRequired[float | None]
    even_added_db: float | None
    odd_added_db: float | None
    distortion_db: float | None
    memory: Memory
    verdict: str
    two_tone: list[TwoToneProduct]
    static_share: NotRequired[float | None]
    periods_identical: NotRequired[bool | None]
    static_share_beyond_noise: NotRequired[float | None]
    distortion_detected: NotRequired[bool | None]
    noise: NotRequired[Noise]
    distortion_tests: NotRequired[DistortionTests]


class MultitoneSummary(TypedDict):
    """`multitone.summary`: the overall distortion over the families measured."""

    distortion_db: float | None
    families: int


class Multitone(TypedDict):
    """`multitone`: the multi-tone measurement of a multi-tone release."""

    protocol: Literal["stateless", "sequential"]
    rows: NotRequired[int]
    answers: NotRequired[int]
    families: dict[str, MultitoneFamily]
    summary: MultitoneSummary
    #: Families with multi-tone rows but no complete experiment, and why.
    not_measured: NotRequired[dict[str, str]]


class Sections(TypedDict, total=False):
    """Everything `scores` holds beyond its head (`Results.extra`): each key a section.

    `Required` marks what every document has held since the first version; the others are
    absent from older documents or from submissions they do not apply to.
    """

    conditions: Required[dict[str, str]]
    num_sweeps: Required[int]
    num_answers: int
    num_answered: int
    num_rows: int
    answered_rows: dict[str, AnsweredRows]
    transient_answers: AnsweredRows
    preset_rows: PresetRows | None
    coverage: Coverage | None
    non_compliant: NonCompliant
    accuracy: Accuracy
    intervals: Intervals
    repeatability: Repeatability
    diagnostics: Diagnostics
    phase_parts: dict[str, PhaseParts]
    variants: dict[str, dict[str, VariantComparison]]
    variants_pooled: dict[str, PooledVariants]
    multitone: Multitone
    dynamics: dict[str, Dynamics]


class Head(TypedDict):
    """The head of `scores`: who was scored, on what, and the headline scores."""

    method: Literal["paper", "custom"]
    preset: str
    label: str
    model: str | None
    overall: Overall
    families: dict[str, FamilyScores]
    provenance: Provenance


class Scores(Head, Sections):
    """`scores` of a results document, and the whole of scores.json: the head and the sections."""


#: The keys of the head; every other key of `scores` is a section.
HEAD_KEYS = frozenset(Head.__annotations__)
