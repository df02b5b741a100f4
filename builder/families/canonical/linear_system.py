"""Linear System: solve a 2x2 linear system for x, with the coefficient a driven (a = p)."""

import sympy as sp

from .. import register
from ..family import Family, Variant

a, b, c, d, e, f, x, y = sp.symbols("a b c d e f x y")

FAMILY = register(
    Family(
        name="linear_system",
        version="1.0.0",
        title="Linear System",
        summary="Solve the system a*x + b*y = e, c*x + d*y = f for x; the coefficient a is driven.",
        parameter=a,
        parameter_meaning="the coefficient a of x in the first equation",
        unknowns=(x, y),
        equations=(sp.Eq(a * x + b * y, e), sp.Eq(c * x + d * y, f)),
        p_range=("1", "5"),
        p0="3",
        decimals=3,
        # Determinants a*d - b*c are 7a - 6, 9a - 8 and 8a - 6: at least 1 over the whole range.
        variants=(
            Variant({"b": "2", "c": "3", "d": "7", "e": "10", "f": "12"}),
            Variant({"b": "4", "c": "2", "d": "9", "e": "14", "f": "9"}),
            Variant({"b": "3", "c": "2", "d": "8", "e": "20", "f": "6"}),
        ),
        template=(
            "Solve the system of linear equations\n  {p}*x + {b}*y = {e}\n  {c}*x + {d}*y = {f}\n"
            "What is the value of x?"
        ),
    )
)
