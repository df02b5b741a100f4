"""Continuous Compounding: the balance P*exp(r*t/100), with the rate r (percent) driven (finance, exponential)."""

import sympy as sp

from ..family import Draw, Family, Variant

rate, P, t = sp.symbols("rate P t")

FAMILY = Family(
    name="continuous_compounding",
    version="1.0.0",
    pins={"1.0.0": "sha256:f8fd5a45169dfa8514d0bbccaa6267c67f7b3da6264c892c354df61ae9cd5b4d"},
    title="Continuous Compounding",
    summary="The balance P*exp(r*t/100) after t years of continuous compounding at r percent; the rate r is driven.",
    parameter=rate,
    parameter_meaning="the annual interest rate r, in percent, compounded continuously",
    answer=P * sp.exp(rate * t / 100),
    p_range=("1", "9"),
    p0="5",
    decimals=3,
    variants=(
        Variant({"P": "1000", "t": "10"}),
        Variant({"P": "2500", "t": "4"}),
        Variant({"P": "600", "t": "25"}),
    ),
    # Fresh splits: savings deposits over 1 to 30 years: at most about 150,000 dollars on the range.
    draws={"P": Draw("100", "10000", "100"), "t": Draw("1", "30", "1")},
    template=(
        "A deposit of {P} dollars earns interest at a nominal annual rate of {p}%, compounded continuously. "
        "Nothing else is deposited or withdrawn. How many dollars are in the account after {t} years?"
    ),
)
