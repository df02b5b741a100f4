"""Area under k/x: the integral of k/x from 1 to b, k*ln(b), with the upper bound b driven (calculus, logarithm)."""

import sympy as sp

from ..family import Draw, Family, Variant

b, k = sp.symbols("b k")

FAMILY = Family(
    name="area_under_reciprocal",
    version="1.0.0",
    pins={"1.0.0": "sha256:a7fb591e3e00a5f734aae30bd257c536c2c353d03afec2ec2650d67f99032fd5"},
    title="Area under k/x",
    summary="The area k*ln(b) under y = k/x between x = 1 and x = b; the upper bound b is driven.",
    parameter=b,
    parameter_meaning="the upper bound b of the integral",
    answer=k * sp.log(b),
    p_range=("2", "10"),
    p0="6",
    decimals=3,
    variants=(
        Variant({"k": "3"}),
        Variant({"k": "7.5"}),
        Variant({"k": "12"}),
    ),
    # Fresh splits: k > 0: a positive area that moves with b.
    draws={"k": Draw("0.5", "20.0", "0.1")},
    template=(
        "Find the area of the region bounded by the curve y = {k}/x, the x-axis, and the vertical lines x = 1 "
        "and x = {p}. Equivalently, evaluate the definite integral of {k}/x with respect to x from 1 to {p}."
    ),
)
