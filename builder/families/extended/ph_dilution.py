"""pH after Dilution: pH = -log10(c*V/W) of a strong acid diluted to W millilitres, with W driven
(chemistry, base-10 logarithm)."""

import sympy as sp

from ..family import Draw, Family, Variant

W, c, V = sp.symbols("W c V")

FAMILY = Family(
    name="ph_dilution",
    version="1.0.0",
    pins={"1.0.0": "sha256:5bcabf6c161168b4c91d6f583f80908bd12f458d4d8b8d8c0530cd5032c28ce7"},
    title="pH after Dilution",
    summary=(
        "The pH -log10(c*V / W) of V mL of a c mol/L strong monoprotic acid diluted with water to W mL; the "
        "final volume W is driven."
    ),
    parameter=W,
    parameter_meaning="the final volume W of the diluted solution, in millilitres",
    answer=-sp.log(c * V / W, 10),
    p_range=("200", "600"),
    p0="400",
    decimals=1,
    variants=(
        Variant({"c": "0.1", "V": "50"}),
        Variant({"c": "0.5", "V": "20"}),
        Variant({"c": "0.02", "V": "80"}),
    ),
    # Fresh splits: laboratory acid, 0.01 to 1 mol/L; V below the smallest final volume 200 mL (a dilution), and the pH
    # stays below about 4.1, where the autoionization of water is negligible.
    draws={"c": Draw("0.01", "1.00", "0.01"), "V": Draw("5", "150", "5")},
    template=(
        "{V} mL of a {c} mol/L hydrochloric acid solution (a strong acid, fully dissociated) is diluted with "
        "pure water to a total volume of {p} mL. Ignoring the autoionization of water, what is the pH of the "
        "diluted solution (pH = -log10 of the hydrogen ion concentration in mol/L)?"
    ),
)
