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

import hashlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

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
