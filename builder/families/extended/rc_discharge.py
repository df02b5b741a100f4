"""RC Discharge: the capacitor voltage V0*exp(-t/(R*C)), with the time t driven (physics, exponential)."""

import sympy as sp

from ..family import Draw, Family, Variant

t, V0, R, C = sp.symbols("t V0 R C")

FAMILY = Family(
    name="rc_discharge",
    version="1.0.0",
    pins={"1.0.0": "sha256:b1673e6d99f37d59a61cb447fe677b401453d6eac5dc132425ce6bbe73504e24"},
    title="RC Discharge",
    summary="The voltage V0*exp(-t / (R*C)) of a capacitor C discharging through a resistor R; t is driven.",
    parameter=t,
    parameter_meaning="the time t since the discharge began, in milliseconds",
    # R in kilohms times C in microfarads is the time constant in milliseconds.
    answer=V0 * sp.exp(-t / (R * C)),
    p_range=("100", "700"),
    p0="400",
    epsilon="20",
    decimals=1,
    variants=(
        Variant({"V0": "12", "R": "10", "C": "47"}),
        Variant({"V0": "9", "R": "22", "C": "33"}),
        Variant({"V0": "5", "R": "4.7", "C": "68"}),
    ),
    # Fresh splits: time constants R*C from 80 ms to 3 s around the drive's 400 ms: a faster discharge has no voltage
    # left to swing.
    draws={"V0": Draw("3", "24", "1"), "R": Draw("4.0", "30.0", "0.1"), "C": Draw("20", "100", "1")},
    template=(
        "A {C} microfarad capacitor charged to {V0} V is connected at time zero across a {R} kilohm resistor "
        "and discharges through it (an ideal RC circuit, no other components). What is the voltage across the "
        "capacitor, in volts, {p} milliseconds later?"
    ),
)
