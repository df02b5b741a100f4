"""Every check a family must pass before anyone uses it (`mathbode family check`).

Each failure is a `Finding` with its own code and a message that says what to change. The checks
run in order of what they need: the definition's own text and numbers first, then the answer
over the whole p range (proven in ball arithmetic, never sampled), then the 9,408 rows (their
truth certified, their rendered p, the swing a model must track), then the pin of the rows'
content hash at the family's version.

Decisions the checks enforce, and why:

- The answer format has six decimals and float64 holds 15-16 significant digits, so an answer
  is kept within |x| <= 1e9 on the whole range: six decimals of it are always real digits.
- A tiny answer is not refused for being small but for not moving: half the peak-to-peak swing
  of the truth at the smallest amplitude must be at least 1e-3, a thousand units of the format's
  last digit, so the format's truncation moves a fitted gain by at most about 0.1 %.
- The drive must not clip (p0 +- the largest amplitude stays inside the range: a clipped
  sinusoid is not a sinusoid) and must move the rendered p by at least ten of its last digits at
  the smallest amplitude (else the drive itself is quantization).
- The truth's own harmonic distortion over the drive is reported, not refused: a model's
  distortion is read against it.
- A multi-tone release is driven at the level its builder chose (`mathbode-build --drives
  multitone --rms-level L`): the same two drive rules hold there (`multitone_drive`): the drives'
  peak, over every realization and the two-tone, stays inside the range, and their RMS moves p by
  ten of its last digits.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Mapping

import numpy as np
import pyarrow as pa
import sympy as sp

from mathbode.core.bounds import OutOfTime, error_text, time_bound
from mathbode.core.hashing import content_hash
from mathbode.schema.drives import MULTITONE, MultitonePlan
from mathbode.schema.layout import Layout, layout
from mathbode.schema.truth_facts import swings_and_distortions

from .. import signals
from ..rows import family_table
from .certify import CertificationError, compile_ball, prove_over
from .draws import Draw
from .family import Family, FamilyDefinitionError, Variant
from .plugins import installed_namespaces
from .roots import RootRuleError
from .variants import SURFACE_KINDS, SurfaceError, surface_problems, surface_variant

#: |answer| may not exceed this anywhere on the range (see the module docstring).
MAX_ABS_ANSWER = Decimal("1e9")
#: Half the truth's peak-to-peak swing at the smallest amplitude must reach this.
MIN_SWING = 1e-3
#: The smallest amplitude must move the rendered p by this many of its last digits.
MIN_P_STEPS = 10
#: A distortion above this is pointed out in the report (not a failure).
NOTABLE_DISTORTION = 0.10
#: How long one family's check may take by default (a canonical family's takes about a second;
#: MathBode-Extended's slowest, a few): a bound, not a budget.
CHECK_SECONDS = 120.0
#: A constant is printed in the prompt: at most this many characters, and within this magnitude
#: (float64 holds 15-16 significant digits; beyond that the truth could not follow the text).
MAX_CONSTANT_CHARS = 32
MAX_CONSTANT = Decimal("1e15")
#: The sizes of text a family shows (a template is printed in each of 9,408 rows).
TEXT_LIMITS = {"name": 48, "version": 32, "title": 200, "summary": 2_000, "parameter_meaning": 200, "template": 4_000}
#: An answer's size: operations and terms, digits of any number in it, integer powers. A word
#: problem's answer is a few dozen operations; these bounds keep proving it over the range and
#: certifying 9,408 values within seconds and a bounded amount of memory.
MAX_NODES = 2_000
MAX_NUMBER_DIGITS = 100
MAX_NUMBER_BITS = 333  # 10**100 < 2**333
MAX_POWER = 100


@dataclass(frozen=True)
class Finding:
    """One failed check: a code of its own and what to change."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


@dataclass
class CheckReport:
    """What `check_family` found: failures, warnings (build anyway) and facts (said, not judged)."""

    family: str
    problems: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    #: The rows, when they could be made (the build reuses them).
    table: pa.Table | None = None

    @property
    def passed(self) -> bool:
        return not self.problems

    def fail(self, code: str, message: str) -> None:
        self.problems.append(Finding(code, message))

    def warn(self, code: str, message: str) -> None:
        self.warnings.append(Finding(code, message))

    def format_text(self) -> str:
        head = f"{'PASS' if self.passed else 'FAIL'} {self.family}"
        lines = [head]
        lines += [f"  error   {f}" for f in self.problems]
        lines += [f"  warning {f}" for f in self.warnings]
        lines += [f"  {name}: {value}" for name, value in self.facts.items()]
        return "\n".join(lines)


def _decimal(text: object) -> Decimal | None:
    try:
        value = Decimal(str(text))
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def _same_value(text: object) -> str:
    """A constant as its value ("5" and "5.0" are one value), or its text when it is no number."""
    value = _decimal(text)
    return str(text) if value is None else str(value.normalize())


def _places(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def check_family(
    family: Family,
    table: pa.Table | None = None,
    seconds: float = CHECK_SECONDS,
    surfaces: bool = True,
    questions: int | None = None,
) -> CheckReport:
    """Run every check on `family` (its rows made here unless given): the report names each
    failure. The check runs for at most `seconds`; a family that takes longer, or exhausts
    memory, fails with a finding that says so (its definition is what a user changes).

    `surfaces=False` leaves out the proof of its GAP surface variants (four more releases of its
    rows): a build or a split that writes no variant has no use for it, and a paired build checks
    each pair on the rows it writes.

    `questions`: the problems the family holds, drawn for a release of `mathbode-build --questions
    N` (None: the layout's three). Such problems must differ in their constants; two may share an
    answer (linear_solve's x = (c - b)/a takes 98 values of c - b over its draws), never a prompt."""
    report = CheckReport(_shown_name(family.name))
    lay = layout(questions=questions)
    try:
        with time_bound(seconds):
            _check(family, table, report, surfaces, lay, distinct_answers=questions is None)
    except OutOfTime:
        report.fail(
            "time",
            f"the check of {report.family} ran past {seconds:g} s: simplify the answer (fewer terms, smaller "
            "numbers and powers) or narrow p_range; `mathbode family check --time-limit` gives it longer",
        )
    except (MemoryError, RecursionError) as err:
        report.fail(
            "memory" if isinstance(err, MemoryError) else "depth",
            f"the check of {report.family} ran out of {'memory' if isinstance(err, MemoryError) else 'stack'}: "
            "simplify the answer (fewer terms, smaller numbers and powers)",
        )
    except (ValueError, TypeError, AttributeError, ArithmeticError, LookupError, NotImplementedError) as err:
        # A family is data we did not write: whatever its values make sympy or arb raise is
        # a finding about the family, never a traceback.
        report.fail("definition", f"the check of {report.family} stopped: {type(err).__name__}: {error_text(err)}")
    return report


def precheck(family: Family, seconds: float = CHECK_SECONDS) -> list[Finding]:
    """The checks of a family's definition alone (types, sizes, text, drive, draws, the answer's
    size), bounded in time: what `mathbode build` asks of a family before it makes any row."""
    report = CheckReport(_shown_name(family.name))
    try:
        with time_bound(seconds):
            if _definition(family, report) and _drive(family, report):
                _answer_size(family, report)
    except OutOfTime:
        report.fail("time", f"the definition of {report.family} took more than {seconds:g} s to read")
    return report.problems


def _shown_name(name: object) -> str:
    return name[:60] if isinstance(name, str) else f"<a family named by a {type(name).__name__}>"


def _check(
    family: Family,
    table: pa.Table | None,
    report: CheckReport,
    surfaces: bool = True,
    lay: Layout | None = None,
    distinct_answers: bool = True,
) -> None:
    lay = lay or layout()
    if not _definition(family, report, lay) or not _drive(family, report) or not _answer_size(family, report):
        return
    answers = _answers(family, report, distinct_answers)
    if answers is None:
        return
    if table is None:
        try:
            table = family_table(family, lay)
        except (CertificationError, FamilyDefinitionError, ZeroDivisionError, ValueError) as err:
            report.fail("truth", f"a row's ground truth cannot be certified: {error_text(err)}")
            return
    report.table = table
    _rows(family, table, report, lay)
    plan = layout(MULTITONE).multitone
    lowest, highest = multitone_levels(family, plan)
    report.facts[f"multi-tone levels that fit (--rms-level, {plan.realizations} realizations)"] = (
        f"{lowest} to {highest}" if lowest <= highest else f"none (below {lowest} too fine, above {highest} clipped)"
    )
    if family.renamable and surfaces:
        _surfaces(family, table, report)
    if family.variant in SURFACE_KINDS:
        # Its rows are its original's renamed (proven by the original's check): the original's pin
        # holds the numbers, and the names follow from the recorded seed.
        report.facts["content hash"] = content_hash(table)
        report.facts["surface"] = f"{family.variant} of {family.variant_of}, names from seed {family.surface_seed!r}"
    else:
        _pin(family, table, report)


def _surfaces(family: Family, table: pa.Table, report: CheckReport) -> None:
    """Each GAP surface variant: valid names, and every row its original's but for the names."""
    for kind in SURFACE_KINDS:
        try:
            variant = surface_variant(family, kind)
        except SurfaceError as err:
            report.fail("surface", str(err))
            return
        problems = surface_problems(table, variant, family_table(variant))
        for problem in problems:
            report.fail("surface", f"{kind} surface: {problem}")
        if not problems:
            report.facts[f"{kind} surface"] = ", ".join(f"{old} -> {new}" for old, new in variant.renamed.items())


# -- the definition's own text and numbers -------------------------------------------------
def _types(family: Family, report: CheckReport) -> bool:
    """Every field of the type it must have, and of a bounded size, before anything reads it."""
    for attr, limit in TEXT_LIMITS.items():
        value = getattr(family, attr)
        if not isinstance(value, str):
            report.fail("text", f"{attr} is a {type(value).__name__}, not text: write it as a string")
        elif len(value) > limit:
            report.fail("text", f"{attr} holds {len(value):,} characters, more than {limit:,}: shorten it")
    variants = family.variants if isinstance(family.variants, (tuple, list)) else None
    wrong = sorted({type(v).__name__ for v in variants or () if not isinstance(v, Variant)})
    if variants is None or wrong:
        found = ", ".join(wrong) if wrong else f"a {type(family.variants).__name__}"
        report.fail("variants", f"variants must be a tuple of Variant({{'name': 'value', ...}}), not {found}")
        return False
    for q, variant in enumerate(family.variants):
        if not isinstance(variant.constants, Mapping):
            report.fail("constants", f"question {q}: constants are a {type(variant.constants).__name__}, not a dict")
            continue
        for name, value in variant.constants.items():
            if not isinstance(name, str) or not name.isidentifier():
                report.fail("constants", f"question {q}: the constant name {name!r:.40} is not an identifier")
            elif problem := _constant_problem(value):
                report.fail("constants", f"question {q}: {name} = {problem}")
    if not isinstance(family.draws, Mapping) or not all(
        isinstance(k, str) and isinstance(d, Draw) for k, d in family.draws.items()
    ):
        report.fail("draws", "draws must map each constant's name to a Draw(low, high, step)")
    if not isinstance(family.pins, Mapping):
        report.fail("version", "pins must map a version to its content hash")
    return not report.problems


def _constant_problem(value: object) -> str | None:
    """Why a constant's value is not one a prompt can print (None: it is)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return f"a {type(value).__name__}: write constants as strings like '2.5'"
    if isinstance(value, int):  # its size is checked without making its (possibly enormous) text
        if value.bit_length() > 64:
            return f"an integer of {value.bit_length()} bits: constants are at most {MAX_CONSTANT:.0e}"
        text = str(value)
    else:
        text = value
    if len(text) > MAX_CONSTANT_CHARS:
        return f"{text[:20]!r}... ({len(text):,} characters): a constant is at most {MAX_CONSTANT_CHARS} characters"
    number = _decimal(text)
    if number is None:
        return f"{text!r} is not an exact decimal: write constants as strings like '2.5'"
    if number and not Decimal(1) / MAX_CONSTANT <= abs(number) <= MAX_CONSTANT:
        return f"{text} is outside {1 / MAX_CONSTANT:.0e} <= |x| <= {MAX_CONSTANT:.0e}: rescale the units"
    return None


def _draws(family: Family, report: CheckReport) -> None:
    """A family's draws, checked when the family is (a bad one is never first met at --seed)."""
    if not family.draws:
        return
    names = {n for v in family.variants for n in v.constants}
    missing, extra = sorted(names - set(family.draws)), sorted(set(family.draws) - names)
    if missing:
        report.fail("draws", f"draws gives no Draw for {', '.join(missing)}: every constant needs one")
    if extra:
        report.fail("draws", f"draws names {', '.join(extra)}, which no variant has as a constant: remove it")
    for name, draw in family.draws.items():
        try:
            draw.values()
        except ValueError as err:
            report.fail("draws", f"{name}: {err}")


def expression_problem(expr: object) -> str | None:
    """Why an answer (or a family's equations) is too big to prove and certify in bounded time
    and memory, without ever printing the big part (None: it is not)."""
    if not isinstance(expr, sp.Basic):
        return f"it is a {type(expr).__name__}, not a sympy expression"
    for count, node in enumerate(sp.preorder_traversal(expr), start=1):
        if count > MAX_NODES:
            return f"it has more than {MAX_NODES:,} terms and operations: state a smaller closed form"
        if node.is_Rational and max(abs(int(node.p)).bit_length(), int(node.q).bit_length()) > MAX_NUMBER_BITS:
            return f"it holds a number of more than {MAX_NUMBER_DIGITS} digits: rescale the units"
        if node.is_Pow and node.args[1].is_Integer and abs(int(node.args[1])) > MAX_POWER:
            return f"it raises to an integer power above {MAX_POWER}: rescale or restate the answer"
    return None


def _answer_size(family: Family, report: CheckReport) -> bool:
    parts = [("answer", family.answer)] if family.answer is not None else []
    parts += [(f"equation {i + 1}", eq) for i, eq in enumerate(family.equations)]
    for label, expr in parts:
        if problem := expression_problem(expr):
            report.fail("size", f"the {label}: {problem}")
            return False
    return True


def _definition(family: Family, report: CheckReport, lay: Layout | None = None) -> bool:
    if not _types(family, report):
        return False
    lay = lay or layout()
    if not re.match(lay.family_name_pattern, family.name):
        report.fail(
            "name",
            f"the name {family.name!r} is not valid: lowercase letters, digits and _, starting with a letter, "
            "at most 48 characters (a plugin's families are named namespace.name by mathbode)",
        )
    if not re.match(r"^\d+(\.\d+){0,3}$", family.version or ""):
        report.fail("version", f"version {family.version!r} is not a version number: write e.g. '1.0.0'")
    for attr in ("title", "summary", "parameter_meaning", "template"):
        if not str(getattr(family, attr) or "").strip():
            report.fail("text", f"{attr} is empty: every family says what it is")
    if not isinstance(family.parameter, sp.Symbol):
        report.fail("parameter", f"parameter is {family.parameter!r}, not a sympy Symbol")
        return False
    wanted = len(lay.question_ids)
    if len(family.variants) != wanted:
        report.fail("variants", f"the family has {len(family.variants)} variants; the layout asks {wanted}")
        return False
    constants = [dict(v.constants) for v in family.variants]
    for q, consts in enumerate(constants):
        bad = [f"{k} = {v!r}" for k, v in consts.items() if _decimal(v) is None]
        if bad:
            report.fail(
                "constants",
                f"question {q}: {', '.join(bad)} is not an exact decimal: write constants as strings like '2.5'",
            )
        if str(family.parameter) in consts:
            report.fail("constants", f"question {q} gives the parameter {family.parameter} a constant value")
    seen: dict[tuple, int] = {}
    for q, consts in enumerate(constants):
        key = tuple(sorted((k, _same_value(v)) for k, v in consts.items()))
        if key in seen:
            report.fail("variants", f"questions {seen[key]} and {q} have the same constants: each variant must differ")
        seen.setdefault(key, q)
    try:
        parsed = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(family.template)]
    except ValueError as err:
        report.fail("template", f"the template is not a format string ({err}): use {{p}} and {{constant}} only")
        return False
    fields = {name for name, _, _ in parsed if name is not None}
    # A format spec or conversion would print p otherwise than the row's p_value says (and a
    # width of 5e7 makes each of 9,408 prompts 50 MB): a field shows its value as written.
    formatted = [
        f"{{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}"
        for name, spec, conv in parsed
        if spec or conv
    ]
    if formatted:
        report.fail(
            "template",
            f"the template formats {', '.join(sorted(set(formatted)))[:80]}: write {{p}} and {{name}} plain (a "
            "prompt shows each value exactly as written)",
        )
        return False
    for q, consts in enumerate(constants):
        expected = {"p", *consts}
        missing, unknown = sorted(expected - fields), sorted(fields - expected)
        if missing:
            report.fail("template", f"question {q}: the template never shows {', '.join(missing)}: put {{name}} in")
        if unknown:
            report.fail(
                "template", f"question {q}: the template has {', '.join(unknown)}, which no constant fills: remove it"
            )
    _draws(family, report)
    return not report.problems


def _drive(family: Family, report: CheckReport) -> bool:
    lay = layout()
    lo, hi, p0 = (_decimal(x) for x in (*family.p_range, family.p0))
    eps = _decimal(family.epsilon) if family.epsilon is not None else None
    if lo is None or hi is None or p0 is None or (family.epsilon is not None and eps is None):
        report.fail("range", "p_range, p0 and epsilon must be exact decimals written as strings")
        return False
    if not lo < hi:
        report.fail("range", f"p_range {family.p_range} is empty: write (low, high) with low < high")
        return False
    if not isinstance(family.decimals, int) or not 0 <= family.decimals <= 12:
        report.fail("decimals", f"decimals = {family.decimals!r}: p is rendered with 0 to 12 decimals")
        return False
    step = Decimal(1).scaleb(-family.decimals)
    for label, value in (("p_range low", lo), ("p_range high", hi), ("p0", p0), ("epsilon", family.eps)):
        if _places(value) > family.decimals:
            report.fail(
                "decimals", f"{label} = {value} has more than decimals = {family.decimals} digits after the point"
            )
    if not lo < p0 < hi:
        report.fail("range", f"p0 = {p0} is not inside p_range [{lo}, {hi}]")
        return False
    eps = family.eps
    widest = max((*lay.sinusoid_amplitudes, *lay.chirp_amplitudes, *lay.step_amplitudes))
    narrowest = min((*lay.sinusoid_amplitudes, *lay.chirp_amplitudes, *lay.step_amplitudes))
    swing = Decimal(repr(widest)) * eps
    if p0 - swing < lo or p0 + swing > hi:
        report.fail(
            "clipping",
            f"p0 +- {widest:g} * epsilon = [{p0 - swing}, {p0 + swing}] leaves p_range [{lo}, {hi}]: the drive would "
            "clip. Widen p_range, move p0 or lower epsilon",
        )
    smallest = Decimal(repr(narrowest)) * eps
    if smallest < MIN_P_STEPS * step:
        report.fail(
            "resolution",
            f"at the smallest amplitude p moves by {smallest}, fewer than {MIN_P_STEPS} steps of its last digit "
            f"({step}): raise decimals or epsilon",
        )
    return not report.problems


def multitone_peak(plan: MultitonePlan) -> Decimal:
    """The largest |unit drive| of a multi-tone plan, over every realization and the two-tone:
    its peak is this times level x epsilon."""
    units = [signals.multisine_unit(plan, r) for r in range(plan.realizations)]
    return max(abs(u) for unit in [*units, signals.two_tone_unit(plan)] for u in unit)


def multitone_levels(family: Family, plan: MultitonePlan) -> tuple[Decimal, Decimal]:
    """The lowest and the highest `--rms-level` (to three decimals) at which the family's drive
    passes both rules with `plan`'s realizations: the highest keeps the drives' peak inside the
    range, the lowest moves p by `MIN_P_STEPS` of its last digit at the drives' RMS. For a family
    whose own definition passed (`precheck`); lowest > highest when no level does."""
    lo, hi = (Decimal(x) for x in family.p_range)
    p0, eps = Decimal(family.p0), family.eps
    highest = (min(p0 - lo, hi - p0) / (eps * multitone_peak(plan))).quantize(Decimal("0.001"), rounding="ROUND_FLOOR")
    step = Decimal(1).scaleb(-family.decimals)
    lowest = (MIN_P_STEPS * step * Decimal(2).sqrt() / eps).quantize(Decimal("0.001"), rounding="ROUND_CEILING")
    return lowest, highest


def multitone_drive(family: Family, plan: MultitonePlan) -> list[Finding]:
    """The drive rules of `_drive` at a multi-tone plan's level: no clipping at the drives' peak,
    and an RMS that moves p by at least `MIN_P_STEPS` of its last digit. For a family whose own
    definition passed (`precheck`); each finding names the levels that pass."""
    report = CheckReport(_shown_name(family.name))
    level = Decimal(repr(plan.amplitude_scales[0]))
    said = f"{plan.amplitude_scales[0]:g}"  # the level as it was given (8, not 8.0)
    lowest, highest = multitone_levels(family, plan)
    if lowest > highest:
        report.fail(
            "levels",
            f"no --rms-level drives it: above {highest} the multi-tone drives clip, below {lowest} they move p by "
            f"fewer than {MIN_P_STEPS} steps of its last digit. Widen p_range or raise decimals",
        )
        return report.problems
    lo, hi = (Decimal(x) for x in family.p_range)
    p0, eps = Decimal(family.p0), family.eps
    peak = multitone_peak(plan)
    if level > highest:
        swing = level * eps * peak
        report.fail(
            "clipping",
            f"at --rms-level {said} the multi-tone drives reach p0 +- {said} x {peak:.4f} x epsilon = "
            f"[{p0 - swing:.6g}, {p0 + swing:.6g}], leaving p_range "
            f"[{lo}, {hi}]: the drive would clip. Choose --rms-level {highest} or lower (or fewer --realizations: "
            "each realization has its own peak)",
        )
    if level < lowest:
        step = Decimal(1).scaleb(-family.decimals)
        rms = level * eps / Decimal(2).sqrt()
        report.fail(
            "resolution",
            f"at --rms-level {said} the multi-tone drives' RMS moves p by {rms:.3g}, fewer than {MIN_P_STEPS} steps "
            f"of its last digit ({step}): choose --rms-level {lowest} or higher",
        )
    return report.problems


# -- the answer over the whole range -------------------------------------------------------
def _answers(family: Family, report: CheckReport, distinct_answers: bool = True) -> list[sp.Expr] | None:
    try:
        solutions = family.solutions
    except (FamilyDefinitionError, NotImplementedError, ValueError, TypeError) as err:
        report.fail("solve", f"sympy cannot solve the equations: {err}")
        return None
    if not solutions:
        report.fail("solve", "sympy finds no solution for the asked unknown: check the equations and unknowns")
        return None
    if len(solutions) > 1 and family.root is None:
        shown = "; ".join(map(str, solutions))
        report.fail(
            "solutions",
            f"sympy finds {len(solutions)} solutions ({shown}): say which is asked with root= (positive, negative, "
            "largest or smallest), or state the answer with answer=",
        )
        return None
    lo, hi = (Fraction(str(x)) for x in family.p_range)
    out = []
    bounds = []
    for q in range(len(family.variants)):
        try:
            expr = family.question_answer(q)
            stray = expr.free_symbols - {family.parameter}
            if stray:
                raise FamilyDefinitionError(
                    f"the answer depends on {', '.join(sorted(map(str, stray)))}, which no constant fills: "
                    "give each a value in every variant"
                )
            ball = compile_ball(expr, family.parameter)
        except RootRuleError as err:
            report.fail("solutions", str(err))
            return None
        except (FamilyDefinitionError, CertificationError) as err:
            report.fail("answer", f"question {q}: {err}")
            return None
        proof = prove_over(ball, lo, hi)
        if not proof.proven:
            a, b = proof.failed_at or (lo, hi)
            report.fail(
                "domain",
                f"question {q}: the answer {expr} is not proven real and finite for p in [{float(a):.6g}, "
                f"{float(b):.6g}] (a pole, a root or log of a negative number, or a complex value lies near it): "
                "narrow p_range or change the constants",
            )
            return None
        assert proof.low is not None and proof.high is not None
        bound = max(abs(proof.low), abs(proof.high))
        if bound > MAX_ABS_ANSWER:
            reach = "past any float64" if bound == float("inf") else f"about {bound:.3g}"
            report.fail(
                "magnitude",
                f"question {q}: the answer reaches {reach} on the range; the six-decimal answer format "
                f"keeps |answer| <= {MAX_ABS_ANSWER:.0e} (float64 holds 15-16 digits): rescale the units",
            )
        bounds.append((proof.low, proof.high))
        out.append(expr)
    report.facts["answer kind"] = family.kind
    report.facts["answer formula"] = family.formula
    # Interval arithmetic over the whole range overestimates (a ball for p's whole range holds
    # every value and more): these enclose the answer, they are not its minimum and maximum.
    report.facts["answer enclosure on the range (contains every value; not tight)"] = "; ".join(
        f"q{q}: [{a:.6g}, {b:.6g}]" for q, (a, b) in enumerate(bounds)
    )
    p0 = Fraction(str(family.p0))
    at_centre = [family.answer_function(q).float_at(p0) for q in range(len(family.variants))]
    if distinct_answers and len(set(at_centre)) < len(at_centre):
        report.fail("variants", f"the variants give the same answer at p0 ({at_centre}): change their constants")
    return out if not report.problems else None


# -- the rows ------------------------------------------------------------------------------
def _rows(family: Family, table: pa.Table, report: CheckReport, lay: Layout | None = None) -> None:
    lay = lay or layout()
    if table.num_rows != lay.rows_per_family or table.schema != lay.arrow_schema:
        report.fail("rows", f"the family makes {table.num_rows} rows; the layout asks {lay.rows_per_family}")
        return
    truth = table.column("ground_truth").to_numpy()
    if not np.all(np.isfinite(truth)):
        report.fail("truth", "a ground truth is not finite")
    lo, hi = (float(x) for x in family.p_range)
    p_values = table.column("p_value").to_numpy()
    prompts = table.column("prompt").to_pylist()
    off = np.flatnonzero((p_values < lo) | (p_values > hi))
    if off.size:
        report.fail("range", f"row {int(off[0])} renders p = {p_values[off[0]]!r}, outside p_range")
    for i in sorted(set(np.unique(p_values, return_index=True)[1].tolist())):
        text = f"{Decimal(repr(float(p_values[i]))):.{family.decimals}f}"
        if Decimal(text) != Decimal(repr(float(p_values[i]))) or text not in prompts[i]:
            report.fail(
                "render",
                f"row {i}: p_value {p_values[i]!r} does not round-trip to the text {text!r} in its prompt "
                "(is {p} in the template once, and not next to other digits?)",
            )
            break
        if "{" in prompts[i] or "}" in prompts[i]:
            report.fail("template", f"row {i}: the prompt still holds a brace: {prompts[i][:80]!r}")
            break
    _swing_and_distortion(family, table, report, lay)


def _swing_and_distortion(family: Family, table: pa.Table, report: CheckReport, lay: Layout | None = None) -> None:
    lay = lay or layout()
    low, high = min(lay.sinusoid_amplitudes), max(lay.sinusoid_amplitudes)
    swings, distortions = swings_and_distortions(table)
    for q, swing in zip(lay.question_ids, swings, strict=True):
        if swing < MIN_SWING:
            report.fail(
                "swing",
                f"question {q}: at amplitude {low:g} the answer swings by +-{swing:.3g}, under {MIN_SWING:g} "
                "(a thousand units of the answer format's last digit): a model's tracking could not be measured. "
                "Raise epsilon, or choose constants that make the answer more sensitive to p",
            )
    report.facts["swing at the smallest amplitude"] = ", ".join(f"q{q}: +-{s:.6g}" for q, s in enumerate(swings))
    report.facts["truth's harmonic distortion at amplitude " + f"{high:g}"] = ", ".join(
        f"q{q}: {d:.2%}" for q, d in enumerate(distortions)
    )
    if max(distortions) > NOTABLE_DISTORTION:
        report.warn(
            "distortion",
            f"the truth itself has {max(distortions):.1%} harmonic distortion at amplitude {high:g}: a model's "
            "harmonics on this family are read against it (a smaller epsilon lowers it)",
        )


# -- the pin -------------------------------------------------------------------------------
def _bare_hash(family: Family, table: pa.Table) -> str:
    """The content hash the rows would have under the family's name without its namespace."""
    return _renamed_hash(table, family.name.partition(".")[2])


def _renamed_hash(table: pa.Table, name: str) -> str:
    index = table.schema.get_field_index("family")
    return content_hash(table.set_column(index, "family", pa.array([name] * table.num_rows, pa.string())))


def _namespace_of_pin(family: Family, table: pa.Table, pinned: str) -> str | None:
    """The plugin namespace under which `family`'s rows hash to `pinned`, among the installed
    plugins' (read from their entry points' names; no plugin is imported for it)."""
    for namespace in installed_namespaces():
        if _renamed_hash(table, f"{namespace}.{family.name}") == pinned:
            return namespace
    return None


def _pin(family: Family, table: pa.Table, report: CheckReport) -> None:
    found = content_hash(table)
    report.facts["content hash"] = found
    pinned = dict(family.pins).get(family.version)
    if pinned is None:
        report.fail(
            "unpinned",
            f"version {family.version} is not pinned: add pins={{{family.version!r}: {found!r}}} (a change of the "
            "rows then needs a new version)",
        )
    elif pinned != found and "." in family.name and pinned == _bare_hash(family, table):
        report.fail(
            "pin-namespace",
            f"the pin {pinned} is the hash of the rows named {family.name.partition('.')[2]!r}, checked without the "
            f"plugin's namespace; installed, the rows are named {family.name!r}: pin {found!r} (`mathbode family "
            f"check --namespace {family.name.partition('.')[0]} FILE.py` prints it)",
        )
    elif pinned != found and "." not in family.name and (namespace := _namespace_of_pin(family, table, pinned)):
        report.fail(
            "pin-namespace",
            f"the pin {pinned} is the hash of the rows named {namespace}.{family.name}: the rows match it under the "
            f"plugin's namespace {namespace!r}, and nothing changed. Check the file as the plugin installs it: "
            f"`mathbode family check --namespace {namespace} FILE.py` (do not bump the version for this)",
        )
    elif pinned != found:
        report.fail(
            "changed",
            f"the rows changed but the version is still {family.version} (pinned {pinned}, now {found}): bump "
            f"version and pin the new hash, or undo the change",
        )
