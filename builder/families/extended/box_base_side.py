"""Box Base Side: the side s = (V/k)**(1/3) of a square-based box of height k*s and volume V, with V driven
(geometry, cube root)."""

import sympy as sp

from ..family import Draw, Family, Variant

V, k = sp.symbols("V k")

FAMILY = Family(
    name="box_base_side",
    version="1.0.0",
    pins={"1.0.0": "sha256:4543c79cd4b3a6498160d873f873e94054dff984d16ff42ee5282e901070f53b"},
    title="Box Base Side",
    summary=(
        "The base side (V / k)**(1/3) of a box with a square base whose height is k times that side and whose "
        "volume is V; the volume V is driven."
    ),
    parameter=V,
    parameter_meaning="the volume V of the box, in cubic centimetres",
    answer=(V / k) ** sp.Rational(1, 3),
    p_range=("200", "1000"),
    p0="600",
    decimals=1,
    variants=(
        Variant({"k": "2"}),
        Variant({"k": "3.5"}),
        Variant({"k": "0.5"}),
    ),
    # Fresh splits: from a flat box (height half the side) to a tall one (five times the side).
    draws={"k": Draw("0.5", "5.0", "0.1")},
    template=(
        "A closed box has a square base, and its height is {k} times the length of a side of the base. "
        "The volume of the box is {p} cubic centimetres. How long is a side of the base, in cm?"
    ),
)
