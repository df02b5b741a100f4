"""The canonical release's five families: the paper's dataset, one module each.

Each module registers its `Family` with the registry (`mathbode.builder.families.register`);
the registry loads every module of this package and checks them against the layout contract and
the release's content hashes. The modules stay as the paper's rows need them; what a fresh split
adds (each constant's draws) is declared here and attached by the registry, as the pins are.
"""

from __future__ import annotations

from ..draws import Draw

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
