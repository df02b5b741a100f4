"""Kernel variants of five MathBode-Extended families: the same solution plan in another setting."""

import sympy as sp

from ..draws import Draw
from ..family import Family, Variant

A, d, w = sp.symbols("A d w")
GARDEN_WIDTH = Family(
    name="garden_width__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:dd9417b74e3d61fe226a4bf96654a60eb6453724cbb4c3236bf1f779a5052138"},
    variant_of="garden_width",
    variant="kernel",
    title="Garden Width, kernel variant (solar panel)",
    summary="The width w of a panel d longer than wide with area A: the positive root of w*(w + d) = A; A is driven.",
    parameter=A,
    parameter_meaning="the area A of the panel, in square decimetres",
    unknowns=(w,),
    equations=(sp.Eq(w * (w + d), A),),
    root="positive",
    p_range=("50", "150"),
    p0="100",
    decimals=2,
    variants=(Variant({"d": "2"}), Variant({"d": "4.5"}), Variant({"d": "9"})),
    draws={"d": Draw("0.5", "20.0", "0.1")},
    template=(
        "A rectangular solar panel is {d} dm longer than it is wide and covers {p} square decimetres. How wide is the "
        "panel, in decimetres?"
    ),
)

t, lam = sp.symbols("t lam")
POISSON_ARRIVAL = Family(
    name="poisson_arrival__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:e4248ff03529aadbf8a878a57cbac3917937a16f5d3e21f61891344ae88ee6e5"},
    variant_of="poisson_arrival",
    variant="kernel",
    title="Poisson Arrival, kernel variant (meteor watch)",
    summary="The probability 1 - exp(-lambda*t/60) of at least one meteor in t minutes at lambda an hour; t is driven.",
    parameter=t,
    parameter_meaning="the length t of the watch, in minutes",
    answer=1 - sp.exp(-lam * t / 60),
    p_range=("2", "18"),
    p0="10",
    decimals=3,
    variants=(Variant({"lam": "4"}), Variant({"lam": "6.5"}), Variant({"lam": "1.5"})),
    draws={"lam": Draw("0.5", "20.0", "0.1")},
    template=(
        "During a meteor shower, meteors are seen as a Poisson process at an average of {lam} per hour. What is the "
        "probability of seeing at least one meteor during a watch of {p} minutes? Give the probability as a number "
        "between 0 and 1."
    ),
)

m, k = sp.symbols("m k")
PENDULUM_PERIOD = Family(
    name="pendulum_period__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:c128f720dc03e7567abf58b87dac93a21bf131a19a416979db83520939e0240b"},
    variant_of="pendulum_period",
    variant="kernel",
    title="Pendulum Period, kernel variant (mass on a spring)",
    summary="The period 2*pi*sqrt(m/k) of a mass m on a spring of stiffness k; the mass m is driven.",
    parameter=m,
    parameter_meaning="the mass m on the spring, in kilograms",
    answer=2 * sp.pi * sp.sqrt(m / k),
    p_range=("0.5", "2.5"),
    p0="1.5",
    decimals=3,
    variants=(Variant({"k": "40"}), Variant({"k": "12.5"}), Variant({"k": "75"})),
    draws={"k": Draw("5.0", "100.0", "0.5")},
    template=(
        "A mass of {p} kg hangs from an ideal spring of stiffness {k} N/m and oscillates up and down without damping. "
        "What is the period of one full oscillation, in seconds?"
    ),
)

theta, v = sp.symbols("theta v")
G = sp.Rational("9.81")
PROJECTILE_RANGE = Family(
    name="projectile_range__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:c889ce11cb19bff1ae721118472af1654eff595812f9a2c231f4373a97fe5d79"},
    variant_of="projectile_range",
    variant="kernel",
    title="Projectile Range, kernel variant (fountain jet)",
    summary="Where a fountain's jet lands: v**2*sin(2*theta)/g on level ground; the nozzle's angle theta is driven.",
    parameter=theta,
    parameter_meaning="the nozzle's angle theta above the horizontal, in degrees",
    answer=v**2 * sp.sin(2 * sp.pi * theta / 180) / G,
    p_range=("10", "40"),
    p0="25",
    decimals=2,
    variants=(Variant({"v": "6"}), Variant({"v": "9.5"}), Variant({"v": "14"})),
    draws={"v": Draw("5.0", "30.0", "0.1")},
    template=(
        "A fountain nozzle at ground level shoots a jet of water at {v} m/s, aimed {p} degrees above the horizontal. "
        "Ignore air resistance and take the acceleration due to gravity as 9.81 m/s^2. How far from the nozzle, in "
        "metres, does the water land on the level ground?"
    ),
)

V0, R, C = sp.symbols("V0 R C")
RC_DISCHARGE = Family(
    name="rc_discharge__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:ebde1900fc5f96b98bc56f22487a17823c4b126e09fbcf983a184eb8c9b89cf6"},
    variant_of="rc_discharge",
    variant="kernel",
    title="RC Discharge, kernel variant (drug elimination)",
    summary="A drug's concentration c0*exp(-t/tau) eliminated with time constant tau; the time t is driven.",
    parameter=t,
    parameter_meaning="the time t since the dose, in minutes",
    answer=V0 * sp.exp(-t / R),
    p_range=("100", "700"),
    p0="400",
    epsilon="20",
    decimals=1,
    variants=(Variant({"V0": "15", "R": "500"}), Variant({"V0": "8", "R": "720"}), Variant({"V0": "4", "R": "320"})),
    draws={"V0": Draw("2", "30", "1"), "R": Draw("200", "900", "10")},
    template=(
        "A drug reaches a blood concentration of {V0} mg/L right after an injection and is then eliminated with first "
        "order kinetics, the concentration falling as exp(-t/{R}) with t in minutes. What is the concentration, in "
        "mg/L, {p} minutes after the injection?"
    ),
)

KERNELS = (GARDEN_WIDTH, POISSON_ARRIVAL, PENDULUM_PERIOD, PROJECTILE_RANGE, RC_DISCHARGE)
