"""How a fresh split draws a family's constants: one range per constant, on a grid of exact decimals.

A family declares `draws={"b": Draw("1", "20", "1"), ...}`: each constant of a fresh split's
question is drawn from `low, low + step, ..., high`, written with the step's decimals, exactly as
the prompt will print it. The canonical families' draws are declared beside them
(`canonical.CANONICAL_DRAWS`) and attached by the registry, as their pins are.
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
