"""Similar Triangles: the side s' = s*p of a similar triangle, with the scale factor p driven."""

import sympy as sp

from .. import register
from ..family import Family, Variant

k, s, t = sp.symbols("k s t")

FAMILY = register(
    Family(
        name="similar_triangles",
        version="1.0.0",
        title="Similar Triangles",
        summary="The side s' = s*k of a triangle similar to one with side s; the scale factor k is driven.",
        parameter=k,
        parameter_meaning="the scale factor k",
        unknowns=(t,),
        equations=(sp.Eq(t, s * k),),
        p_range=("0.5", "2.5"),
        p0="1.5",
        decimals=3,
        variants=(
            Variant({"s": "6"}),
            Variant({"s": "9.5"}),
            Variant({"s": "14"}),
        ),
        template=(
            "Triangle ABC has a side AB of length {s} cm. Triangle DEF is similar to triangle ABC "
            "with scale factor {p}: every side of DEF is {p} times as long as the matching side of "
            "ABC, and side DE matches side AB. How long is DE, in cm?"
        ),
    )
)
