"""The registry of problem families, by name."""

from __future__ import annotations

from mathbode.schema.errors import UnknownNameError
from mathbode.schema.layout import layout, unknown_name_message

from . import exponential_interest, linear_solve, linear_system, ratio_saturation, similar_triangles
from .base import Family, RationalFunction, Variant

_MODULES = (linear_solve, ratio_saturation, exponential_interest, linear_system, similar_triangles)

#: Every family, in the canonical order of the layout contract.
FAMILIES: dict[str, Family] = {
    name: f for name in layout().families for f in (m.FAMILY for m in _MODULES) if f.name == name
}


def get_family(name: str) -> Family:
    """The family registered as `name`; an unknown name names the close matches."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownNameError(unknown_name_message("family", name, FAMILIES)) from None


def resolve_families(spec: str) -> list[Family]:
    """`all` or a comma-separated list of names -> families, in canonical order, each once."""
    if spec.strip() == "all":
        return list(FAMILIES.values())
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise UnknownNameError(unknown_name_message("family", spec, FAMILIES))
    chosen = {get_family(n).name for n in names}
    return [f for name, f in FAMILIES.items() if name in chosen]


__all__ = ["FAMILIES", "Family", "RationalFunction", "Variant", "get_family", "resolve_families"]
