"""MathBode-Extended: sixteen built-in families beyond the paper's five, on the same grid.

The canonical five are rational functions of p. These families state problems whose exact answers
are algebraic (square roots, cube roots, rational powers) or transcendental (exponentials with a
driven exponent, logarithms, sines, inverse tangents, the error function), across algebra,
geometry, finance, physics, chemistry, probability and calculus. Each has three variants and the
canonical grid (49 sweeps x 64 steps x 3 questions = 9,408 rows); every ground truth is certified
in ball arithmetic (`mathbode.builder.families.certify`), and each family pins its rows' content hash.

The order is by area, then by answer kind within the area; it is the order a release lists them.
"""

from __future__ import annotations

from ..family import Family
from .area_under_reciprocal import FAMILY as AREA_UNDER_RECIPROCAL
from .area_under_sqrt import FAMILY as AREA_UNDER_SQRT
from .arrhenius_rate import FAMILY as ARRHENIUS_RATE
from .box_base_side import FAMILY as BOX_BASE_SIDE
from .continuous_compounding import FAMILY as CONTINUOUS_COMPOUNDING
from .exponential_equation import FAMILY as EXPONENTIAL_EQUATION
from .garden_width import FAMILY as GARDEN_WIDTH
from .normal_below import FAMILY as NORMAL_BELOW
from .pendulum_period import FAMILY as PENDULUM_PERIOD
from .ph_dilution import FAMILY as PH_DILUTION
from .poisson_arrival import FAMILY as POISSON_ARRIVAL
from .projectile_range import FAMILY as PROJECTILE_RANGE
from .ramp_angle import FAMILY as RAMP_ANGLE
from .rc_discharge import FAMILY as RC_DISCHARGE
from .right_triangle_hypotenuse import FAMILY as RIGHT_TRIANGLE_HYPOTENUSE
from .time_to_target import FAMILY as TIME_TO_TARGET

#: Each family's area of mathematics or science, for the card and the tests.
AREAS: dict[str, str] = {
    GARDEN_WIDTH.name: "algebra",
    EXPONENTIAL_EQUATION.name: "algebra",
    RIGHT_TRIANGLE_HYPOTENUSE.name: "geometry",
    BOX_BASE_SIDE.name: "geometry",
    RAMP_ANGLE.name: "geometry",
    CONTINUOUS_COMPOUNDING.name: "finance",
    TIME_TO_TARGET.name: "finance",
    PENDULUM_PERIOD.name: "physics",
    PROJECTILE_RANGE.name: "physics",
    RC_DISCHARGE.name: "physics",
    PH_DILUTION.name: "chemistry",
    ARRHENIUS_RATE.name: "chemistry",
    POISSON_ARRIVAL.name: "probability",
    NORMAL_BELOW.name: "probability",
    AREA_UNDER_SQRT.name: "calculus",
    AREA_UNDER_RECIPROCAL.name: "calculus",
}

#: Every MathBode-Extended family, grouped by area (the order of `AREAS`).
FAMILIES: tuple[Family, ...] = (
    # algebra
    GARDEN_WIDTH,
    EXPONENTIAL_EQUATION,
    # geometry
    RIGHT_TRIANGLE_HYPOTENUSE,
    BOX_BASE_SIDE,
    RAMP_ANGLE,
    # finance
    CONTINUOUS_COMPOUNDING,
    TIME_TO_TARGET,
    # physics
    PENDULUM_PERIOD,
    PROJECTILE_RANGE,
    RC_DISCHARGE,
    # chemistry
    PH_DILUTION,
    ARRHENIUS_RATE,
    # probability
    POISSON_ARRIVAL,
    NORMAL_BELOW,
    # calculus
    AREA_UNDER_SQRT,
    AREA_UNDER_RECIPROCAL,
)

__all__ = ["AREAS", "FAMILIES"]
