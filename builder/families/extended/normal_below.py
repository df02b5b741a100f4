"""Normal Below: P(X < x) = (1 + erf((x - mu)/(sigma*sqrt(2))))/2, with the threshold x driven
(probability, error function)."""

import sympy as sp

from ..family import Draw, Family, Variant

x, mu, sigma = sp.symbols("x mu sigma")

FAMILY = Family(
    name="normal_below",
    version="1.0.0",
    pins={"1.0.0": "sha256:9adc1a297c064355f8a0d514616e288f833c42fa1c224732083e42a40d9ed789"},
    title="Normal Below",
    summary=(
        "The probability (1 + erf((x - mu) / (sigma*sqrt(2)))) / 2 that a normal variable with mean mu and "
        "standard deviation sigma is below x; the threshold x is driven."
    ),
    parameter=x,
    parameter_meaning="the height threshold x, in cm",
    answer=(1 + sp.erf((x - mu) / (sigma * sp.sqrt(2)))) / 2,
    p_range=("150", "190"),
    p0="170",
    epsilon="1.5",
    decimals=2,
    variants=(
        Variant({"mu": "170", "sigma": "8"}),
        Variant({"mu": "166.5", "sigma": "7"}),
        Variant({"mu": "176", "sigma": "10"}),
    ),
    # Fresh splits: adult heights; the drive's centre stays within two standard deviations of the mean, where the
    # probability still moves.
    draws={"mu": Draw("160.0", "180.0", "0.5"), "sigma": Draw("5.0", "12.0", "0.1")},
    template=(
        "The heights of adults in a population are normally distributed with mean {mu} cm and standard "
        "deviation {sigma} cm. What is the probability that a randomly chosen adult from this population is "
        "shorter than {p} cm? Give the probability as a number between 0 and 1."
    ),
)
