"""The registry of problem families, by name.

A family is one module in this package that registers a `Family` with `register`. Every module
here is imported when the registry is first used, and the registry must name exactly the
families of the layout contract (`schema/layout.json`), each with a known content hash
(`schema/release_hashes.py`): a family left out of either is an error, never a silent drop.
"""

from __future__ import annotations

import importlib
import pkgutil

from mathbode.core.errors import MathBodeError, UnknownNameError, unknown_name_message
from mathbode.schema.layout import layout
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES

from .base import Family, RationalFunction, Variant

_REGISTERED: dict[str, Family] = {}


class FamilyRegistryError(MathBodeError):
    """The family modules and the layout contract disagree (a developer's mistake, said plainly)."""


def register(family: Family) -> Family:
    """Add `family` to the registry (call once, in the family's own module)."""
    if family.name in _REGISTERED:
        raise FamilyRegistryError(f"family {family.name!r} is registered twice")
    _REGISTERED[family.name] = family
    return family


def _load() -> dict[str, Family]:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
    declared = layout().families
    unregistered = [name for name in declared if name not in _REGISTERED]
    undeclared = [name for name in _REGISTERED if name not in declared]
    unhashed = [name for name in declared if name not in RELEASE_CONTENT_HASHES]
    problems = []
    if unregistered:
        problems.append(
            f"schema/layout.json lists {', '.join(unregistered)} but no module in builder/families/ registers it"
        )
    if undeclared:
        problems.append(
            f"builder/families/ registers {', '.join(undeclared)}, missing from the families of schema/layout.json"
        )
    if unhashed:
        problems.append(f"schema/release_hashes.py has no content hash for {', '.join(unhashed)}")
    if problems:
        raise FamilyRegistryError("The family registry does not match the layout: " + "; ".join(problems) + ".")
    return {name: _REGISTERED[name] for name in declared}


#: Every family, in the canonical order of the layout contract.
FAMILIES: dict[str, Family] = _load()


def get_family(name: str) -> Family:
    """The family registered as `name`; an unknown name names the close matches."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownNameError(unknown_name_message("family", name, FAMILIES)) from None


def resolve_families(spec: str) -> list[Family]:
    """`all` or a comma-separated list of names -> families, in canonical order, each once."""
    return [get_family(name) for name in layout().family_names(spec)]


__all__ = [
    "FAMILIES",
    "Family",
    "FamilyRegistryError",
    "RationalFunction",
    "Variant",
    "get_family",
    "register",
    "resolve_families",
]
