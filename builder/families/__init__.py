"""The registry of problem families, by name: the canonical five, MathBode-Extended, and plugins.

- The canonical families (the paper's dataset) are the modules of this package, each registering
  its `Family` with `register`; they must be exactly the families of the layout contract
  (`schema/layout.json`), each with a known content hash (`schema/release_hashes.py`), which is
  also its pin: a family left out of either is an error, never a silent drop.
- MathBode-Extended's built-in families are `mathbode.builder.families.extended.FAMILIES`.
- Installed packages add families through the `mathbode.families` entry point group
  (`mathbode.builder.families.plugins`), named `namespace.name`; they are loaded only when a name, a
  listing or `installed` asks for them, so a broken plugin never reaches the built-in commands.

A spec names families for a command: `all` (the canonical release), `extended`
(MathBode-Extended), `installed` (every plugin family), `NAMESPACE.*` (one plugin's), or names,
comma-separated and in any mix.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from functools import cache

from mathbode.core.errors import MathBodeError, UnknownNameError, unknown_name_message
from mathbode.schema.layout import layout
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES

from . import canonical
from .canonical import CANONICAL_DRAWS
from .extended import FAMILIES as EXTENDED_DECLARED
from .family import Draw, Family, RationalFunction, Variant
from .plugins import Plugins, load_plugins

#: The keywords of a family spec, and what each means.
KEYWORDS = {
    "all": "the canonical release (the paper's five families)",
    "extended": "MathBode-Extended, the built-in families beyond the paper's",
    "installed": "every family of an installed plugin package",
}

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
    for module in pkgutil.iter_modules(canonical.__path__):
        importlib.import_module(f"{canonical.__name__}.{module.name}")
    declared = layout().families
    unregistered = [name for name in declared if name not in _REGISTERED]
    undeclared = [name for name in _REGISTERED if name not in declared]
    unhashed = [name for name in declared if name not in RELEASE_CONTENT_HASHES]
    problems = []
    if unregistered:
        problems.append(
            f"schema/layout.json lists {', '.join(unregistered)} but no module in builder/families/canonical/ "
            "registers it"
        )
    if undeclared:
        problems.append(
            f"builder/families/canonical/ registers {', '.join(undeclared)}, missing from the families of "
            "schema/layout.json"
        )
    if unhashed:
        problems.append(f"schema/release_hashes.py has no content hash for {', '.join(unhashed)}")
    if problems:
        raise FamilyRegistryError("The family registry does not match the layout: " + "; ".join(problems) + ".")
    # The release's content hash of each canonical family is its pin at its version; its draws
    # for fresh splits are declared beside the builder (its module stays the paper's).
    return {
        name: dataclasses.replace(
            _REGISTERED[name],
            pins={_REGISTERED[name].version: RELEASE_CONTENT_HASHES[name]},
            draws=CANONICAL_DRAWS.get(name, {}),
        )
        for name in declared
    }


#: The canonical release's families, in the order of the layout contract.
FAMILIES: dict[str, Family] = _load()


def _extended() -> dict[str, Family]:
    out: dict[str, Family] = {}
    for family in EXTENDED_DECLARED:
        if family.name in out or family.name in FAMILIES:
            raise FamilyRegistryError(f"MathBode-Extended declares the family {family.name!r} twice")
        out[family.name] = family
    return out


#: MathBode-Extended's families, in their release order.
EXTENDED: dict[str, Family] = _extended()


@cache
def plugins() -> Plugins:
    """The installed plugins (loaded once, on first use)."""
    return load_plugins()


def builtin_families() -> dict[str, Family]:
    """Every family built into mathbode: the canonical ones, then MathBode-Extended's."""
    return {**FAMILIES, **EXTENDED}


def known_families() -> dict[str, Family]:
    """Every family this installation knows: built in, then the plugins' (loading them)."""
    return {**builtin_families(), **plugins().families}


def is_canonical(name: str) -> bool:
    return name in FAMILIES


def get_family(name: str) -> Family:
    """The family known as `name`; an unknown name names the close matches (and a plugin that
    failed to load, when its namespace is the name's)."""
    builtin = builtin_families()
    if name in builtin:
        return builtin[name]
    installed = plugins()
    if name in installed.families:
        return installed.families[name]
    namespace = name.partition(".")[0] if "." in name else None
    for problem in installed.problems:
        if problem.namespace == namespace:
            raise UnknownNameError(f"Unknown family {name!r}: {problem}.")
    message = unknown_name_message("family", name, [*builtin, *installed.families])
    if namespace and namespace not in installed.packages:
        message += f" No installed package provides the namespace {namespace!r} (entry point group mathbode.families)."
    raise UnknownNameError(message)


def resolve_families(spec: str) -> list[Family]:
    """A family spec (see the module's docstring) -> families, each once, in registry order: the
    canonical ones in the layout's order, then MathBode-Extended's, then the plugins'."""
    names: dict[str, None] = {}
    tokens = [t.strip() for t in spec.split(",") if t.strip()]
    if not tokens:
        raise UnknownNameError(f"No family named in {spec!r}. Give a name, or one of {', '.join(KEYWORDS)}.")
    for token in tokens:
        if token == "all":
            names.update(dict.fromkeys(FAMILIES))
        elif token == "extended":
            names.update(dict.fromkeys(EXTENDED))
        elif token == "installed":
            if not plugins().families:
                problems = "".join(f" {problem}." for problem in plugins().problems)
                raise UnknownNameError(
                    "No plugin family is installed (packages add families through the entry point group "
                    f"mathbode.families).{problems}"
                )
            names.update(dict.fromkeys(plugins().families))
        elif token.endswith(".*"):
            namespace = token[:-2]
            found = [n for n in plugins().families if n.partition(".")[0] == namespace]
            if not found:
                get_family(f"{namespace}.?")  # raises, naming the plugin's problem if it has one
            names.update(dict.fromkeys(found))
        else:
            names[get_family(token).name] = None
    known = known_families() if any("." in n for n in names) else builtin_families()
    return [family for name, family in known.items() if name in names]


__all__ = [
    "Draw",
    "EXTENDED",
    "FAMILIES",
    "KEYWORDS",
    "builtin_families",
    "is_canonical",
    "known_families",
    "plugins",
    "Family",
    "FamilyRegistryError",
    "RationalFunction",
    "Variant",
    "get_family",
    "register",
    "resolve_families",
]
