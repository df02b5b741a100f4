"""Arrhenius Rate: k = A*exp(-Ea/(R*T)), with the temperature T driven (chemistry, exponential)."""

import sympy as sp

from ..family import Draw, Family, Variant

T, A, Ea = sp.symbols("T A Ea")

#: The gas constant the prompt states, in J/(mol K).
R = sp.Rational("8.314")

FAMILY = Family(
    name="arrhenius_rate",
    version="1.0.0",
    pins={"1.0.0": "sha256:dbf46f1993b0d61d4a4941d13afc115d3521e013239da891bb337cb3a8c744d0"},
    title="Arrhenius Rate",
    summary=(
        "The rate constant A*exp(-Ea / (R*T)) of a first-order reaction (R = 8.314 J/(mol K)); the temperature T "
        "is driven."
    ),
    parameter=T,
    parameter_meaning="the absolute temperature T, in kelvin",
    # A is written as a multiple of 10**10 per second, Ea in kJ/mol.
    answer=A * 10**10 * sp.exp(-Ea * 1000 / (R * T)),
    p_range=("290", "330"),
    p0="310",
    epsilon="1.5",
    decimals=2,
    variants=(
        Variant({"A": "2.5", "Ea": "50"}),
        Variant({"A": "4", "Ea": "65"}),
        Variant({"A": "1.2", "Ea": "40"}),
    ),
    # Fresh splits: ordinary activation energies; above about 70 kJ/mol (with A near 10**10) the rate is too
    # small to swing by 1e-3 over the drive.
    draws={"A": Draw("1.0", "5.0", "0.1"), "Ea": Draw("40", "65", "1")},
    template=(
        "A first-order reaction follows the Arrhenius equation k = A * exp(-Ea / (R * T)) with pre-exponential "
        "factor A = {A} x 10^10 per second and activation energy Ea = {Ea} kJ/mol. Take R = 8.314 J/(mol K). "
        "What is the rate constant k, in units of per second, at T = {p} K?"
    ),
)
