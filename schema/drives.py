"""Drives: the dimension of a release beside its families (docs/multitone.md).

`standard` is the paper's grid (sinusoids, chirps, steps). `multitone` is the system-identification
grid: an odd random-phase multisine (several realizations, each asked for several periods) and a
two-tone whose every second- and third-order product falls on a line of its own. Both drives are
periodic in the layout's T steps, so a sequential run-in works as for a sinusoid.

Their rows keep the ten columns and the seven key fields; as a multi-tone sweep has many lines and
no single frequency or start phase, its `frequency_cycles` holds the period number and its
`phase_deg` the realization number (two-tone: realization 0). The lines and phases are here, in
the manifest (`drives`) and in the card. Pure: no I/O, no float trigonometry (the builder computes
the values exactly; the scorer needs only the line numbers).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Mapping

STANDARD, MULTITONE = "standard", "multitone"
DRIVES = (STANDARD, MULTITONE)
MULTISINE, TWO_TONE = "multisine", "two_tone"
#: Signal types whose frequency_cycles / phase_deg are part of the row key.
MULTITONE_SIGNALS = (MULTISINE, TWO_TONE)

#: The two-tone products, as (name, a, b): the product at a*f1 + b*f2 (negative: a difference).
TWO_TONE_PRODUCTS: tuple[tuple[str, int, int], ...] = (
    ("f2-f1", -1, 1),
    ("2f1-f2", 2, -1),
    ("2f2-f1", -1, 2),
    ("2f1", 2, 0),
    ("f1+f2", 1, 1),
    ("2f2", 0, 2),
    ("3f1", 3, 0),
    ("2f1+f2", 2, 1),
    ("f1+2f2", 1, 2),
    ("3f2", 0, 3),
)


#: The bounds of a multi-tone design (`mathbode-build --drives multitone --realizations R --periods P
#: --rms-level L`): at the largest, 32 x 16 multisine periods and 16 two-tone periods are 33,792
#: rows a problem, 101,376 a family.
MAX_REALIZATIONS, MAX_PERIODS = 32, 16
MIN_LEVEL, MAX_LEVEL = Decimal("0.01"), Decimal("10")
#: A level is written with at most this many decimals (it is each row's amplitude_scale).
LEVEL_DECIMALS = 3


@dataclass(frozen=True)
class MultitoneDesign:
    """What a practitioner chooses of the multi-tone drives: the multisine's realizations, the
    periods each realization and the two-tone are asked for, and the RMS level.

    The level is the drives' RMS as a multiple of the RMS of the family's unit sinusoid (epsilon
    x 1/sqrt 2): each row's `amplitude_scale`. A model's best linear approximation depends on the
    level it is driven at, so a release a level is one point of a level sweep: a gain that moves
    with the level is compression (or expansion), one that does not is a linear gain error."""

    realizations: int
    periods: int
    level: float

    def __post_init__(self) -> None:
        problem = design_problem(self.realizations, self.periods, self.level)
        if problem:
            raise ValueError(problem)


def design_problem(realizations: object, periods: object, level: object) -> str | None:
    """What is wrong with a design's values (each is checked as JSON would hold it), or None."""
    for name, value, most in (("realizations", realizations, MAX_REALIZATIONS), ("periods", periods, MAX_PERIODS)):
        if type(value) is not int or not 1 <= value <= most:
            return f"{name} = {value!r}: a whole number from 1 to {most}"
    if type(level) not in (int, float) or not math.isfinite(level):  # type: ignore[arg-type]
        return f"rms level = {level!r}: a number from {MIN_LEVEL} to {MAX_LEVEL}"
    exact = level_decimal(level)  # type: ignore[arg-type]
    if exact is None or not MIN_LEVEL <= exact <= MAX_LEVEL:
        return (
            f"rms level = {level!r}: a number from {MIN_LEVEL} to {MAX_LEVEL} with at most {LEVEL_DECIMALS} "
            "decimals (the drives' RMS as a multiple of the family's unit sinusoid's)"
        )
    return None


def level_decimal(level: float | int | str) -> Decimal | None:
    """The level as an exact decimal of at most `LEVEL_DECIMALS` decimals (the shortest text of
    a float, as each row's amplitude_scale is read), or None."""
    try:
        exact = Decimal(level if isinstance(level, str) else repr(float(level)))
    except (InvalidOperation, ValueError, OverflowError):
        return None
    if not exact.is_finite() or exact.adjusted() > 3 or exact != exact.quantize(Decimal(1).scaleb(-LEVEL_DECIMALS)):
        return None
    return exact


def design_record(design: MultitoneDesign) -> dict[str, Any]:
    """What a manifest records of a design (`multitone_design`, written only when it is not the layout's)."""
    return {"realizations": design.realizations, "periods": design.periods, "rms_level": design.level}


#: A design record's keys, in the order a problem with them is said.
RECORD_KEYS = ("realizations", "periods", "rms_level")


def record_problem(record: object) -> tuple[str, str] | None:
    """The first key of a manifest's `multitone_design` that holds no design value and why (the
    key "" for a record that is no object), or None."""
    if not isinstance(record, Mapping):
        return "", "an object with realizations, periods and rms_level"
    for key in RECORD_KEYS:
        values = {k: record.get(k) if k == key else ok for k, ok in zip(RECORD_KEYS, (1, 1, 1.0), strict=True)}
        if problem := design_problem(values["realizations"], values["periods"], values["rms_level"]):
            return key, problem
    return None


def design_of(record: object) -> MultitoneDesign | None:
    """The design a manifest's `multitone_design` records, or None when it holds no valid one (the
    description's comparison then names what differs: the builder writes no such record)."""
    if not isinstance(record, Mapping) or record_problem(record) is not None:
        return None
    return MultitoneDesign(record["realizations"], record["periods"], float(record["rms_level"]))


def fold(cycles: int, time_steps: int) -> int:
    """The line a product at `cycles` is seen on after sampling T steps (aliases fold about T/2)."""
    k = abs(cycles) % time_steps
    return min(k, time_steps - k)


@dataclass(frozen=True)
class MultitonePlan:
    """The multi-tone drives of a release: their lines, realizations, periods and phases."""

    time_steps: int
    amplitude_scales: tuple[float, ...]
    excited_lines: tuple[int, ...]
    realizations: int
    periods: int
    phase_seed: str
    phase_steps: int
    two_tone_lines: tuple[int, int]
    two_tone_periods: int
    highest_line: int

    def __post_init__(self) -> None:
        # Odd excited lines: even-order products of odd lines land on even lines only, odd-order
        # ones on odd lines only (also after folding, T being even): the detection lines tell them apart.
        if any(k % 2 == 0 for k in self.excited_lines) or self.time_steps % 2:
            raise ValueError("a multisine's excited lines must be odd (and T even)")
        products = [
            fold(a * self.two_tone_lines[0] + b * self.two_tone_lines[1], self.time_steps)
            for _, a, b in TWO_TONE_PRODUCTS
        ]
        if len(set(products)) != len(products) or set(products) & {0, *self.two_tone_lines}:
            raise ValueError("two-tone lines whose products share a line")

    @property
    def even_lines(self) -> tuple[int, ...]:
        return tuple(range(2, self.highest_line + 1, 2))

    @property
    def odd_detection_lines(self) -> tuple[int, ...]:
        return tuple(k for k in range(1, self.highest_line + 1, 2) if k not in self.excited_lines)

    @property
    def design(self) -> MultitoneDesign:
        """The plan's realizations, periods and level (one amplitude: see `MultitoneDesign`)."""
        return MultitoneDesign(self.realizations, self.periods, self.amplitude_scales[0])

    def designed(self, design: MultitoneDesign) -> MultitonePlan:
        """This plan with `design`'s realizations, periods (the multisine's and the two-tone's) and level."""
        return dataclasses.replace(
            self,
            realizations=design.realizations,
            periods=design.periods,
            two_tone_periods=design.periods,
            amplitude_scales=(design.level,),
        )

    def line_kind(self, k: int) -> str:
        """`excited`, `even` or `odd` (a detection line)."""
        return "excited" if k in self.excited_lines else ("even" if k % 2 == 0 else "odd")

    def phase_turns(self, realization: int, line: int) -> Fraction:
        """The random phase of `line` in `realization`, in turns: a pure function of the seed (sha256),
        on a grid of 1/phase_steps turn, so the drive is exact rational arithmetic plus sines."""
        digest = hashlib.sha256(f"{self.phase_seed}\0{realization}\0{line}".encode()).digest()
        return Fraction(int.from_bytes(digest[:8], "big") % self.phase_steps, self.phase_steps)

    def products(self) -> list[tuple[str, int]]:
        """(name, line) of every two-tone product."""
        f1, f2 = self.two_tone_lines
        return [(name, fold(a * f1 + b * f2, self.time_steps)) for name, a, b in TWO_TONE_PRODUCTS]

    def describe(self) -> dict[str, Any]:
        """What the manifest and the card say of the drives."""
        return {
            "drives": MULTITONE,
            "amplitude_scales": list(self.amplitude_scales),
            "multisine": {
                "excited_lines": list(self.excited_lines),
                "odd_detection_lines": list(self.odd_detection_lines),
                "even_detection_lines": list(self.even_lines),
                "realizations": self.realizations,
                "periods": self.periods,
                "phases_turns": {
                    str(r): [str(self.phase_turns(r, k)) for k in self.excited_lines] for r in range(self.realizations)
                },
                "line_amplitude": "1/sqrt(number of excited lines): the RMS of a unit sinusoid",
            },
            "two_tone": {
                "lines": list(self.two_tone_lines),
                "periods": self.two_tone_periods,
                "line_amplitude": "1/sqrt(2): the RMS of a unit sinusoid",
                "products": {name: k for name, k in self.products()},
            },
            "key": "frequency_cycles holds the period, phase_deg the realization",
        }


def plan_of(raw: dict[str, Any], time_steps: int) -> MultitonePlan:
    ms, tt = raw["multisine"], raw["two_tone"]
    return MultitonePlan(
        time_steps=time_steps,
        amplitude_scales=tuple(float(a) for a in raw["amplitude_scales"]),
        excited_lines=tuple(ms["excited_lines"]),
        realizations=int(ms["realizations"]),
        periods=int(ms["periods"]),
        phase_seed=ms["phase_seed"],
        phase_steps=int(ms["phase_steps"]),
        two_tone_lines=(int(tt["lines"][0]), int(tt["lines"][1])),
        two_tone_periods=int(tt["periods"]),
        highest_line=int(raw["highest_line"]),
    )
