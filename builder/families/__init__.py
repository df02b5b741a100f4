"""The registry of problem families, by name: the canonical five, MathBode-Extended, and plugins.

- The canonical families (the paper's dataset) are the modules of this package, each registering
  its `Family` with `register`; they must be exactly the families of the layout contract
  (`schema/layout.json`), each with a known content hash (`schema/release_hashes.py`), which is
  also its pin: a family left out of either is an error, never a silent drop.
- MathBode-Extended's built-in families are `mathbode.builder.families.extended.FAMILIES`, and the
  built-in GAP kernel variants `mathbode.builder.families.kernels.KERNELS`: both imported on first use
  (`extended_families()`, `kernel_families()`; `EXTENDED` and `KERNELS` by name), not by a canonical build.
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

from mathbode.core.errors import MathBodeError, UnknownNameError, UsageError, unknown_name_message
from mathbode.schema.layout import layout
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES

from . import canonical
from .canonical import CANONICAL_DRAWS, CANONICAL_RENAMABLE
from .family import Draw, Family, RationalFunction, Variant
from .plugins import Plugins, load_plugins
from .variants import GAP_SEED, SURFACE_KINDS, split_variant_name, surface_variant

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
            renamable=CANONICAL_RENAMABLE.get(name, {}),
        )
        for name in declared
    }


#: The canonical release's families, in the order of the layout contract.
FAMILIES: dict[str, Family] = _load()


@cache
def extended_families() -> dict[str, Family]:
    """MathBode-Extended's families, in their release order. Imported on first use: their sixteen
    modules (and the sympy they load) take 60 ms that a canonical build or score does not need."""
    from .extended import FAMILIES as declared

    out: dict[str, Family] = {}
    for family in declared:
        if family.name in out or family.name in FAMILIES:
            raise FamilyRegistryError(f"MathBode-Extended declares the family {family.name!r} twice")
        out[family.name] = family
    return out


@cache
def plugins() -> Plugins:
    """The installed plugins (loaded once, on first use)."""
    return load_plugins()


def builtin_families() -> dict[str, Family]:
    """Every family built into mathbode: the canonical ones, then MathBode-Extended's."""
    return {**FAMILIES, **extended_families()}


def known_families() -> dict[str, Family]:
    """Every family this installation knows: built in, then the plugins' (loading them)."""
    return {**builtin_families(), **plugins().families}


def is_canonical(name: str) -> bool:
    return name in FAMILIES


@cache
def kernel_families() -> dict[str, Family]:
    """The built-in kernel variants (GAP): families of their own that name the family they rewrite.
    Imported on first use, as `extended_families`'."""
    from .kernels import KERNELS as declared

    out: dict[str, Family] = {}
    for family in declared:
        if family.name in out or family.name in FAMILIES or family.name in extended_families():
            raise FamilyRegistryError(f"the kernel variant {family.name!r} is declared twice")
        out[family.name] = family
    return out


def __getattr__(name: str) -> dict[str, Family]:
    """`EXTENDED` and `KERNELS`, the registries by the names they had when imported eagerly."""
    if name == "EXTENDED":
        return extended_families()
    if name == "KERNELS":
        return kernel_families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def variant_family(name: str) -> Family | None:
    """The GAP variant family named `name` (a built-in kernel, or `ORIGINAL__dl`/`__dlc`/`__dlm`/`__gs`
    of any known family that declares renamables), else None."""
    if name in kernel_families():
        return kernel_families()[name]
    parts = split_variant_name(name)
    if parts is None:
        return None
    original = get_family(parts[0])
    return surface_variant(original, parts[1]) if original.renamable else None


def gap_families(originals: list[Family], seed: str = GAP_SEED) -> tuple[list[Family], list[str]]:
    """The paired release's families: each original, then its surface variants (when it declares
    renamables) and its built-in kernel variants; and what was left out, said."""
    out: list[Family] = []
    said: list[str] = []
    for family in originals:
        if family.variant_of is not None:
            raise UsageError(f"{family.name} is itself a variant of {family.variant_of}: name originals only")
        out.append(family)
        if family.renamable:
            out += [surface_variant(family, kind, seed) for kind in SURFACE_KINDS]
        else:
            said.append(f"{family.name}: declares nothing renamable, so it has no surface variants")
        rewrites = [k for k in kernel_families().values() if k.variant_of == family.name]
        if not rewrites:
            said.append(f"{family.name}: has no kernel variant")
        out += rewrites
    return out, said


def get_family(name: str) -> Family:
    """The family known as `name`; an unknown name names the close matches (and a plugin that
    failed to load, when its namespace is the name's)."""
    if name in FAMILIES:  # without loading MathBode-Extended
        return FAMILIES[name]
    builtin = builtin_families()
    if name in builtin:
        return builtin[name]
    if name in kernel_families() or split_variant_name(name):
        found = variant_family(name)
        if found is not None:
            return found
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
            names.update(dict.fromkeys(extended_families()))
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
    if all(n in FAMILIES for n in names):
        known = FAMILIES  # the canonical release's families: MathBode-Extended stays unloaded
    else:
        known = known_families() if any("." in n for n in names) else builtin_families()
    variants = {n: get_family(n) for n in names if n not in known}
    return [family for name, family in {**known, **variants}.items() if name in names]


__all__ = [
    "Draw",
    "EXTENDED",
    "FAMILIES",
    "KERNELS",
    "KEYWORDS",
    "gap_families",
    "variant_family",
    "builtin_families",
    "extended_families",
    "kernel_families",
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
