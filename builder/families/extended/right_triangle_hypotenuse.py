"""Right-Triangle Hypotenuse: c = sqrt(a**2 + b**2), with the leg b driven (geometry, square root)."""

import sympy as sp

from ..family import Draw, Family, Variant

leg, a = sp.symbols("leg a")

FAMILY = Family(
    name="right_triangle_hypotenuse",
    version="1.0.0",
    pins={"1.0.0": "sha256:669c4787429d8962240b5e3ccf7e52fc02e4bf65102030f101c6c3124f76dde2"},
    title="Right-Triangle Hypotenuse",
    summary="The hypotenuse sqrt(a**2 + b**2) of a right triangle with legs a and b; the leg b is driven.",
    parameter=leg,
    parameter_meaning="the length b of the second leg, in cm",
    answer=sp.sqrt(a**2 + leg**2),
    p_range=("2", "10"),
    p0="6",
    decimals=3,
    variants=(
        Variant({"a": "4"}),
        Variant({"a": "7.5"}),
        Variant({"a": "12"}),
    ),
    # Fresh splits: the other leg from 1 to 20 cm.
    draws={"a": Draw("1.0", "20.0", "0.1")},
    template=(
        "A right triangle has two legs (the sides that meet at the right angle) of lengths {a} cm and {p} cm. "
        "How long is its hypotenuse, in cm?"
    ),
)
