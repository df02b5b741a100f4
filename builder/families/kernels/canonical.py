"""Kernel variants of the canonical five: the same equations in another setting, other constants."""

import sympy as sp

from ..draws import Draw
from ..family import Family, Variant

a, b, c, x = sp.symbols("a b c x")
LINEAR_SOLVE = Family(
    name="linear_solve__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:8f352a736299f9d7f2a4187ac8845486187cbad9bc215c70b5538f427453195c"},
    variant_of="linear_solve",
    variant="kernel",
    title="Linear Solve, kernel variant (taxi fare)",
    summary="A fare of a fixed fee b plus a per kilometre: the distance x with a*x + b = c; the rate a is driven.",
    parameter=a,
    parameter_meaning="the price a per kilometre, in dollars",
    unknowns=(x,),
    equations=(sp.Eq(a * x + b, c),),
    p_range=("1", "5"),
    p0="3",
    decimals=3,
    variants=(Variant({"b": "4", "c": "38"}), Variant({"b": "7", "c": "52"}), Variant({"b": "2.5", "c": "29"})),
    draws={"b": Draw("1", "15", "0.5"), "c": Draw("20", "99", "1")},
    template=(
        "A taxi ride costs a fixed fee of {b} dollars plus {p} dollars per kilometre. The fare for one ride came to "
        "{c} dollars. How many kilometres long was the ride?"
    ),
)

S, K, v = sp.symbols("S K v")
RATIO_SATURATION = Family(
    name="ratio_saturation__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:79d39dd4bc71ca2352aa36d8f173a19dd50d3bfe3a2cbca50e2168e6c56649d9"},
    variant_of="ratio_saturation",
    variant="kernel",
    title="Ratio Saturation, kernel variant (enzyme kinetics)",
    summary="The fraction S / (S + K) of an enzyme's maximum rate (Michaelis-Menten); the substrate S is driven.",
    parameter=S,
    parameter_meaning="the substrate concentration S, in millimolar",
    unknowns=(v,),
    equations=(sp.Eq(v, S / (S + K)),),
    p_range=("1", "9"),
    p0="5",
    decimals=3,
    variants=(Variant({"K": "3"}), Variant({"K": "6"}), Variant({"K": "12"})),
    draws={"K": Draw("1", "20", "0.1")},
    template=(
        "An enzyme follows Michaelis-Menten kinetics with a Michaelis constant of {K} mM. At a substrate "
        "concentration of {p} mM, what fraction of its maximum reaction rate does it reach?"
    ),
)

r, N0, n, N = sp.symbols("r N0 n N")
EXPONENTIAL_INTEREST = Family(
    name="exponential_interest__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:afecda45a0a8b4fd84f75046c3aefea050a866f09a607771a2a3a8334708c0d1"},
    variant_of="exponential_interest",
    variant="kernel",
    title="Exponential Interest, kernel variant (town growth)",
    summary="A population N0*(1 + r/100)**n growing by r percent a year; the growth rate r is driven.",
    parameter=r,
    parameter_meaning="the yearly growth rate r, in percent",
    unknowns=(N,),
    equations=(sp.Eq(N, N0 * (1 + r / 100) ** n),),
    p_range=("1", "9"),
    p0="5",
    decimals=3,
    variants=(Variant({"N0": "1200", "n": "8"}), Variant({"N0": "3000", "n": "6"}), Variant({"N0": "500", "n": "15"})),
    draws={"N0": Draw("100", "5000", "50"), "n": Draw("3", "25", "1")},
    template=(
        "A town has {N0} residents, and its population grows by {p}% every year, each year's growth counted on the "
        "population at the start of that year. How many residents (a real number, not rounded) does the model give "
        "after {n} years?"
    ),
)

a2, b2, c2, d2, e2, f2, x2, y2 = sp.symbols("a b c d e f x y")
LINEAR_SYSTEM = Family(
    name="linear_system__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:6886a9c8ec1cf51a147b4adbd7451842ee19fd6cffdc530ace9fb19a6ca98df9"},
    variant_of="linear_system",
    variant="kernel",
    title="Linear System, kernel variant (fruit stall)",
    summary="Two purchases of apples and pears: the price x of apples from a*x + b*y = e, c*x + d*y = f; a driven.",
    parameter=a2,
    parameter_meaning="the number a of apples in the first purchase",
    unknowns=(x2, y2),
    equations=(sp.Eq(a2 * x2 + b2 * y2, e2), sp.Eq(c2 * x2 + d2 * y2, f2)),
    p_range=("1", "5"),
    p0="3",
    decimals=3,
    # Determinants a*d - b*c are 8a - 3, 10a - 8 and 9a - 8: at least 1 over the whole range.
    variants=(
        Variant({"b": "3", "c": "1", "d": "8", "e": "16", "f": "11"}),
        Variant({"b": "2", "c": "4", "d": "10", "e": "12", "f": "18"}),
        Variant({"b": "4", "c": "2", "d": "9", "e": "22", "f": "15"}),
    ),
    # d > b*c for most draws keeps the pole a = b*c/d below the range (a draw that puts it inside is
    # drawn again); e*d >= 140 > b*f keeps the price of apples positive.
    draws={
        "b": Draw("1", "4", "1"),
        "c": Draw("1", "3", "1"),
        "d": Draw("7", "40", "1"),
        "e": Draw("20", "60", "1"),
        "f": Draw("5", "20", "1"),
    },
    template=(
        "At a fruit stall, {p} kg of apples and {b} kg of pears cost {e} dollars, and {c} kg of apples and {d} kg of "
        "pears cost {f} dollars. What is the price of one kg of apples, in dollars?"
    ),
)

k, s, t = sp.symbols("k s t")
SIMILAR_TRIANGLES = Family(
    name="similar_triangles__kernel",
    version="1.0.0",
    pins={"1.0.0": "sha256:dcb2cd5341a041ab1bb6b1b20aa914706901e96acd463749d6b8ce5c82dfa5f8"},
    variant_of="similar_triangles",
    variant="kernel",
    title="Similar Triangles, kernel variant (photo enlargement)",
    summary="A photograph s wide scaled by a factor k: the new width t = s*k; the factor k is driven.",
    parameter=k,
    parameter_meaning="the scale factor k of the print",
    unknowns=(t,),
    equations=(sp.Eq(t, s * k),),
    p_range=("0.5", "2.5"),
    p0="1.5",
    decimals=3,
    variants=(Variant({"s": "8"}), Variant({"s": "12.5"}), Variant({"s": "15"})),
    draws={"s": Draw("2", "30", "0.1")},
    template=(
        "A photograph is {s} cm wide. A copy is printed with every length scaled by a factor of {p}, keeping its "
        "shape. How wide is the copy, in cm?"
    ),
)

KERNELS = (LINEAR_SOLVE, RATIO_SATURATION, EXPONENTIAL_INTEREST, LINEAR_SYSTEM, SIMILAR_TRIANGLES)
