"""Garden Width: the positive root of w*(w + d) = A, with the area A driven (algebra, square root)."""

import sympy as sp

from ..family import Draw, Family, Variant

A, d, w = sp.symbols("A d w")

FAMILY = Family(
    name="garden_width",
    version="1.0.0",
    pins={"1.0.0": "sha256:bf8081a3f06bb3ee448307301b463e651b04f22dc6348a3bc1d5c2d0d422954d"},
    title="Garden Width",
    summary=(
        "The width w of a rectangle d longer than it is wide with area A: the positive root of w*(w + d) = A; "
        "the area A is driven."
    ),
    parameter=A,
    parameter_meaning="the area A of the garden, in square metres",
    unknowns=(w,),
    equations=(sp.Eq(w * (w + d), A),),
    # The other root, -(d + sqrt(d**2 + 4*A))/2, is negative for every A > 0: the width is the positive one.
    root="positive",
    p_range=("50", "150"),
    p0="100",
    decimals=2,
    variants=(
        Variant({"d": "3"}),
        Variant({"d": "5.5"}),
        Variant({"d": "8"}),
    ),
    # Fresh splits: d > 0: the garden is longer than it is wide.
    draws={"d": Draw("0.5", "20.0", "0.1")},
    template=(
        "A rectangular garden is {d} m longer than it is wide, and its area is {p} square metres. "
        "How wide is the garden, in metres?"
    ),
)
