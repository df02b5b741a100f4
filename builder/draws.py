"""How a fresh split draws a family's constants: one range per constant, on a grid of exact decimals.

A family declares `draws={"b": Draw("1", "20", "1"), ...}`: each constant of a fresh split's
question is drawn from `low, low + step, ..., high`, written with the step's decimals, exactly as
the prompt will print it. The canonical families' modules do not change (their rows are the
paper's dataset), so their draws are declared here and attached by the registry, as their pins
are.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Draw:
    """The exact decimals a constant may take in a fresh split: low to high in steps of `step`."""

    low: str
    high: str
    step: str

    def values(self) -> int:
        """How many values the grid holds."""
        lo, hi, step = Decimal(self.low), Decimal(self.high), Decimal(self.step)
        if not (step > 0 and lo <= hi) or (hi - lo) % step != 0:
            raise ValueError(
                f"Draw({self.low!r}, {self.high!r}, {self.step!r}): give low <= high, a step > 0 that divides "
                "high - low"
            )
        return int((hi - lo) / step) + 1

    def value(self, index: int) -> str:
        """The `index`-th value of the grid, as the prompt prints it (the step's decimals)."""
        step = Decimal(self.step)
        places = step.normalize().as_tuple().exponent
        exponent = min(places, 0) if isinstance(places, int) else 0
        value = Decimal(self.low) + step * (index % self.values())
        return str(value.quantize(Decimal(1).scaleb(exponent)))


#: The canonical families' draws (their modules stay as they are).
CANONICAL_DRAWS: dict[str, dict[str, Draw]] = {
    # Wide enough that two questions seldom share c - b (the same answer) or k (the same question).
    "linear_solve": {"b": Draw("1", "20", "1"), "c": Draw("21", "99", "1")},
    "ratio_saturation": {"k": Draw("1", "40", "0.1")},
    "exponential_interest": {"A": Draw("100", "5000", "50"), "n": Draw("3", "25", "1")},
    # b*c < d keeps the pole a = b*c/d of x below the range [1, 5] (as in the released variants); d
    # from 1 to 9 put it inside for most draws.
    "linear_system": {
        "b": Draw("1", "4", "1"),
        "c": Draw("1", "3", "1"),
        "d": Draw("7", "40", "1"),
        "e": Draw("5", "30", "1"),
        "f": Draw("5", "30", "1"),
    },
    "similar_triangles": {"s": Draw("2", "20", "0.1")},
}
