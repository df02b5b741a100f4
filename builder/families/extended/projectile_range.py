"""Projectile Range: R = v**2*sin(2*theta)/g, with the launch angle theta (degrees) driven (physics, sine)."""

import sympy as sp

from ..family import Draw, Family, Variant

theta, v = sp.symbols("theta v")

#: The gravitational acceleration the prompt states, in m/s^2.
G = sp.Rational("9.81")

FAMILY = Family(
    name="projectile_range",
    version="1.0.0",
    pins={"1.0.0": "sha256:823d147b47ddf5f5b6c39c6deda47c471d9915588d488fbf5e8c118f5620a0e3"},
    title="Projectile Range",
    summary=(
        "The range v**2*sin(2*theta)/g of a projectile launched over level ground at speed v and angle theta "
        "(g = 9.81 m/s^2); the angle theta, in degrees, is driven."
    ),
    parameter=theta,
    parameter_meaning="the launch angle theta above the horizontal, in degrees",
    answer=v**2 * sp.sin(2 * sp.pi * theta / 180) / G,
    # Below 45 degrees: at 45 the range is flat in theta and the drive would not move it.
    p_range=("10", "40"),
    p0="25",
    decimals=2,
    variants=(
        Variant({"v": "12"}),
        Variant({"v": "20"}),
        Variant({"v": "8.5"}),
    ),
    # Fresh splits: a thrown or kicked ball.
    draws={"v": Draw("5.0", "30.0", "0.1")},
    template=(
        "A ball is launched from level ground at a speed of {v} m/s and an angle of {p} degrees above the "
        "horizontal. Ignore air resistance and take the acceleration due to gravity as 9.81 m/s^2. How far from "
        "the launch point, in metres, does the ball land back on the ground?"
    ),
)
