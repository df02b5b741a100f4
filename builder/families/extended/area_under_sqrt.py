"""Area under sqrt(x): the integral of sqrt(x) from a to b, (2/3)*(b**(3/2) - a**(3/2)), with the upper bound b
driven (calculus, rational power)."""

import sympy as sp

from ..family import Draw, Family, Variant

b, a = sp.symbols("b a")

FAMILY = Family(
    name="area_under_sqrt",
    version="1.0.0",
    pins={"1.0.0": "sha256:d42ad3e1f26910cd04226facf1b5eb4b31ca83d588f81805e638496078b4b9c8"},
    title="Area under sqrt(x)",
    summary="The area (2/3)*(b**(3/2) - a**(3/2)) under y = sqrt(x) between x = a and x = b; b is driven.",
    parameter=b,
    parameter_meaning="the upper bound b of the integral",
    answer=sp.Rational(2, 3) * (b ** sp.Rational(3, 2) - a ** sp.Rational(3, 2)),
    p_range=("4", "12"),
    p0="8",
    decimals=3,
    variants=(
        Variant({"a": "0"}),
        Variant({"a": "1"}),
        Variant({"a": "2.5"}),
    ),
    # Fresh splits: a stays below the smallest upper bound 4, so the region lies between a and b on the whole range.
    draws={"a": Draw("0.0", "3.9", "0.1")},
    template=(
        "Find the area of the region bounded by the curve y = sqrt(x), the x-axis, and the vertical lines "
        "x = {a} and x = {p}. Equivalently, evaluate the definite integral of sqrt(x) with respect to x from "
        "{a} to {p}."
    ),
)
