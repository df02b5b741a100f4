"""Exponential Equation: the solution x = log(y)/log(b) of b**x = y, with y driven (algebra, logarithm)."""

import sympy as sp

from ..family import Draw, Family, Variant

y, b, x = sp.symbols("y b x")

FAMILY = Family(
    name="exponential_equation",
    version="1.0.0",
    pins={"1.0.0": "sha256:0cff123ea020bea1e27718de942ea924893ac31410e8d94920364045c65c154d"},
    title="Exponential Equation",
    summary="The real solution x = log(y) / log(b) of the equation b**x = y; the right-hand side y is driven.",
    parameter=y,
    parameter_meaning="the right-hand side y of b**x = y",
    answer=sp.log(y) / sp.log(b),
    p_range=("2", "18"),
    p0="10",
    decimals=3,
    # b = 2 and b = 3 hit whole-number answers inside the drive (y = 8: x = 3; y = 9: x = 2), which the
    # certified truth settles exactly.
    variants=(
        Variant({"b": "2"}),
        Variant({"b": "3"}),
        Variant({"b": "1.5"}),
    ),
    # Fresh splits: a base above 1 (b = 1 has no solution); up to 10 the answer still swings by more than 0.01.
    draws={"b": Draw("1.1", "10.0", "0.1")},
    template="Solve the equation {b}^x = {p} for the real number x. What is the value of x?",
)
