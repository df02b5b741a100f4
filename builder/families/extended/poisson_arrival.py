"""Poisson Arrival: P(at least one arrival in t minutes) = 1 - exp(-lambda*t/60), with t driven
(probability, exponential)."""

import sympy as sp

from ..family import Draw, Family, Variant

t, lam = sp.symbols("t lam")

FAMILY = Family(
    name="poisson_arrival",
    version="1.0.0",
    pins={"1.0.0": "sha256:3a285c6483101edb6ff81f0d6d286f0d9e473f8f2f711003ab44b067928409e6"},
    title="Poisson Arrival",
    summary=(
        "The probability 1 - exp(-lambda*t/60) that a Poisson process of lambda arrivals per hour has at least "
        "one arrival in t minutes; the waiting window t is driven."
    ),
    parameter=t,
    parameter_meaning="the length t of the time window, in minutes",
    answer=1 - sp.exp(-lam * t / 60),
    p_range=("2", "18"),
    p0="10",
    decimals=3,
    variants=(
        Variant({"lam": "3"}),
        Variant({"lam": "7.5"}),
        Variant({"lam": "1.2"}),
    ),
    # Fresh splits: a help desk's 0.5 to 20 calls an hour: the probability still moves at both ends.
    draws={"lam": Draw("0.5", "20.0", "0.1")},
    template=(
        "Calls arrive at a help desk as a Poisson process with an average rate of {lam} calls per hour. "
        "What is the probability that at least one call arrives in a window of {p} minutes? "
        "Give the probability as a number between 0 and 1."
    ),
)
