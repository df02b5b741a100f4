"""How a fresh split draws a family's constants: one range per constant, on a grid of exact decimals.

A family declares `draws={"b": Draw("1", "20", "1"), ...}`: each constant of a fresh split's
question is drawn from `low, low + step, ..., high`, written with the step's decimals, exactly as
the prompt will print it. The canonical families' draws are declared beside them
(`canonical.CANONICAL_DRAWS`) and attached by the registry, as their pins are.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

#: A constant's grid holds at most this many values. The draw picks an index from 64 bits of a
#: hash (`splits._index`), unbiased enough far below 2**64; and a constant that needs more values
#: than this is printed with more digits than a word problem shows.
MAX_DRAW_VALUES = 10**6
#: A draw's numbers are written like a constant's (`check.MAX_CONSTANT_CHARS`).
_MAX_CHARS = 32
_MAX_EXPONENT = 15


def _exact(text: object, where: str) -> Fraction:
    """A draw's number as an exact fraction, refused (before any big arithmetic) unless it is a
    finite decimal of at most 32 characters within 1e-15 <= |x| <= 1e15 (or 0)."""
    if not isinstance(text, str):
        kind = type(text).__name__
        raise ValueError(f"{where}: write low, high and step as decimal strings such as '2.5', not {kind}")
    try:
        value = Decimal(text) if len(text) <= _MAX_CHARS else None
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite():
        raise ValueError(f"{where}: {text[:40]!r} is not a finite decimal of at most {_MAX_CHARS} characters")
    if value and not -_MAX_EXPONENT <= value.adjusted() <= _MAX_EXPONENT:
        raise ValueError(f"{where}: {text!r} is outside 1e-{_MAX_EXPONENT} <= |x| <= 1e{_MAX_EXPONENT}")
    return Fraction(value)


@dataclass(frozen=True)
class Draw:
    """The exact decimals a constant may take in a fresh split: low to high in steps of `step`."""

    low: str
    high: str
    step: str

    def values(self) -> int:
        """How many values the grid holds (a `ValueError` saying what to change when the draw is
        not a grid: not exact decimals, low > high, a step that is not positive or does not divide
        the range, more than `MAX_DRAW_VALUES` values)."""
        where = f"Draw({self.low!r:.40}, {self.high!r:.40}, {self.step!r:.40})"
        lo, hi, step = (_exact(x, where) for x in (self.low, self.high, self.step))
        if not (step > 0 and lo <= hi) or (hi - lo) % step != 0:
            raise ValueError(f"{where}: give low <= high, a step > 0 that divides high - low")
        count = (hi - lo) / step + 1
        if count > MAX_DRAW_VALUES:
            raise ValueError(
                f"{where}: the grid holds {float(count):.3g} values, more than {MAX_DRAW_VALUES:,}: use a coarser step"
            )
        return int(count)

    def value(self, index: int) -> str:
        """The `index`-th value of the grid, as the prompt prints it (the step's decimals)."""
        step = Decimal(self.step)
        places = step.normalize().as_tuple().exponent
        exponent = min(places, 0) if isinstance(places, int) else 0
        value = Decimal(self.low) + step * (index % self.values())
        return str(value.quantize(Decimal(1).scaleb(exponent)))
