"""Ramp Angle: the incline atan(h/d) in degrees, with the horizontal run d driven (geometry, inverse tangent)."""

import sympy as sp

from ..family import Draw, Family, Variant

run, h = sp.symbols("run h")

FAMILY = Family(
    name="ramp_angle",
    version="1.0.0",
    pins={"1.0.0": "sha256:789e94fc3180580b621c7296e0b73de0dee7eb2999a4a0554b14e8971660f706"},
    title="Ramp Angle",
    summary="The angle atan(h / d) in degrees of a straight ramp rising h over a horizontal run d; d is driven.",
    parameter=run,
    parameter_meaning="the horizontal run d of the ramp, in metres",
    answer=sp.atan(h / run) * 180 / sp.pi,
    p_range=("4", "12"),
    p0="8",
    decimals=3,
    variants=(
        Variant({"h": "1.2"}),
        Variant({"h": "2.5"}),
        Variant({"h": "0.8"}),
    ),
    # Fresh splits: rises of 0.2 to 3 m.
    draws={"h": Draw("0.20", "3.00", "0.05")},
    template=(
        "A straight wheelchair ramp rises {h} m in height over a horizontal distance of {p} m. "
        "What angle does the ramp make with the horizontal ground, in degrees?"
    ),
)
