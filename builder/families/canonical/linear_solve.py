"""Linear Solve: solve a*x + b = c for x, with the coefficient a driven (a = p)."""

import sympy as sp

from .. import register
from ..family import Family, Variant

a, b, c, x = sp.symbols("a b c x")

FAMILY = register(
    Family(
        name="linear_solve",
        version="1.0.0",
        title="Linear Solve",
        summary="Solve a*x + b = c for x; the coefficient a is driven.",
        parameter=a,
        parameter_meaning="the coefficient a",
        unknowns=(x,),
        equations=(sp.Eq(a * x + b, c),),
        p_range=("1", "5"),
        p0="3",
        decimals=3,
        variants=(
            Variant({"b": "3", "c": "27"}),
            Variant({"b": "5", "c": "41"}),
            Variant({"b": "12", "c": "30"}),
        ),
        template=(
            "Solve the linear equation a*x + b = c for x, where a = {p}, b = {b} and c = {c}. What is the value of x?"
        ),
    )
)
