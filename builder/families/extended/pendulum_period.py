"""Pendulum Period: T = 2*pi*sqrt(L/g), with the length L driven (physics, square root)."""

import sympy as sp

from ..family import Draw, Family, Variant

L, g = sp.symbols("L g")

FAMILY = Family(
    name="pendulum_period",
    version="1.0.0",
    pins={"1.0.0": "sha256:e217c87883604b40a027ab439bf0ff4f7abb87f9e5fabee145944fb44f7c0054"},
    title="Pendulum Period",
    summary="The small-oscillation period 2*pi*sqrt(L / g) of a simple pendulum of length L; L is driven.",
    parameter=L,
    parameter_meaning="the length L of the pendulum, in metres",
    answer=2 * sp.pi * sp.sqrt(L / g),
    p_range=("0.5", "2.5"),
    p0="1.5",
    decimals=3,
    # Earth, Mars and the Moon.
    variants=(
        Variant({"g": "9.81"}),
        Variant({"g": "3.71"}),
        Variant({"g": "1.62"}),
    ),
    # Fresh splits: plausible bodies, from the Moon (1.62) through Mars (3.71) and the Earth (9.81) to Jupiter (24.79).
    draws={"g": Draw("1.00", "25.00", "0.01")},
    template=(
        "An ideal simple pendulum of length {p} m swings with small oscillations at a place where the "
        "acceleration due to gravity is {g} m/s^2. Using the small-angle approximation, what is its period "
        "(the time of one full back-and-forth swing), in seconds?"
    ),
)
