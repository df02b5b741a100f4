"""Ratio Saturation: the saturating ratio y = p / (p + k), with the concentration p driven."""

import sympy as sp

from .. import register
from ..family import Family, Variant

L, k, y = sp.symbols("L k y")

FAMILY = register(
    Family(
        name="ratio_saturation",
        version="1.0.0",
        title="Ratio Saturation",
        summary="The occupied fraction y = L / (L + K) of a saturating binding process; the concentration L is driven.",
        parameter=L,
        parameter_meaning="the ligand concentration L",
        unknowns=(y,),
        equations=(sp.Eq(y, L / (L + k)),),
        p_range=("1", "9"),
        p0="5",
        decimals=3,
        variants=(
            Variant({"k": "2"}),
            Variant({"k": "5"}),
            Variant({"k": "10"}),
        ),
        template=(
            "The fraction of binding sites that are occupied at ligand concentration L is "
            "y = L / (L + K), where K is the dissociation constant. "
            "With K = {k} and L = {p}, what is the occupied fraction y?"
        ),
    )
)
