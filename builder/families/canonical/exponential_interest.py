"""Exponential Interest: the amount A*(1 + r)**n after n periods, with the rate r driven (in percent)."""

import sympy as sp

from .. import register
from ..family import Family, Variant

r, A, n, M = sp.symbols("r A n M")

FAMILY = register(
    Family(
        name="exponential_interest",
        version="1.0.0",
        title="Exponential Interest",
        summary="The balance A*(1 + r/100)**n after n years of annual compounding; the rate r (percent) is driven.",
        parameter=r,
        parameter_meaning="the annual interest rate r, in percent",
        unknowns=(M,),
        equations=(sp.Eq(M, A * (1 + r / 100) ** n),),
        p_range=("1", "9"),
        p0="5",
        decimals=3,
        variants=(
            Variant({"A": "1000", "n": "10"}),
            Variant({"A": "2500", "n": "5"}),
            Variant({"A": "400", "n": "20"}),
        ),
        template=(
            "A savings account starts with {A} dollars and earns interest at a rate of {p}% per year, "
            "compounded once a year. Nothing is deposited or withdrawn. "
            "How many dollars are in the account after {n} years?"
        ),
    )
)
