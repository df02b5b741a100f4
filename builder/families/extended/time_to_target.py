"""Time to Target: the years 100*ln(T/P)/r for a continuously compounded balance to reach T, with the target T
driven (finance, logarithm)."""

import sympy as sp

from ..family import Draw, Family, Variant

target, P, r = sp.symbols("target P r")

FAMILY = Family(
    name="time_to_target",
    version="1.0.0",
    pins={"1.0.0": "sha256:e392405cfaf252371699e279695fb900db086b5ae5ca100c24e0ff30628af0ea"},
    title="Time to Target",
    summary=(
        "The time 100*ln(T / P) / r in years for P dollars compounded continuously at r percent to grow to T "
        "dollars; the target T is driven."
    ),
    parameter=target,
    parameter_meaning="the target balance T, in dollars",
    answer=100 * sp.log(target / P) / r,
    p_range=("6000", "14000"),
    p0="10000",
    decimals=2,
    variants=(
        Variant({"P": "1000", "r": "5"}),
        Variant({"P": "2500", "r": "3.5"}),
        Variant({"P": "4000", "r": "6"}),
    ),
    # Fresh splits: the deposit below the smallest target, 6,000 dollars (the balance has to grow to it); rates
    # of 1 to 10 percent.
    draws={"P": Draw("500", "5500", "100"), "r": Draw("1.0", "10.0", "0.1")},
    template=(
        "An investor deposits {P} dollars in an account that pays a nominal annual interest rate of {r}%, "
        "compounded continuously. Nothing else is deposited or withdrawn. How many years (a real number, not "
        "rounded to whole years) does it take for the balance to reach {p} dollars?"
    ),
)
