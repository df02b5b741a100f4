"""Families from other installed packages, found through the `mathbode.families` entry point group.

A package declares, in its pyproject.toml,

    [project.entry-points."mathbode.families"]
    acme = "acme_families"            # a module with FAMILIES (a sequence of Family)
    # or "acme_families:FAMILIES": an attribute holding a Family, a sequence of them, or a
    # function returning either

and `pip install` is all a user does. The entry point's name is the package's namespace: its
family `orbit` is known as `acme.orbit` (a valid file name and Hub config name; a built-in name
has no dot, so no plugin can take one, and two namespaces cannot collide without both being
reported). A plugin that fails to import, or declares something that is not a family, is
reported by namespace and package and left out: it never breaks the built-in families.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any, Iterable

from mathbode.schema.layout import layout

from .family import Family

GROUP = "mathbode.families"
_NAMESPACE = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


@dataclass(frozen=True)
class PluginProblem:
    """A plugin that could not be loaded, and why (said to the user, never raised)."""

    namespace: str
    package: str
    message: str

    def __str__(self) -> str:
        return f"plugin {self.namespace!r} ({self.package}): {self.message}"


@dataclass(frozen=True)
class Plugins:
    """The installed plugins' families (namespaced names, in namespace order) and their problems."""

    families: dict[str, Family]
    problems: tuple[PluginProblem, ...]
    #: namespace -> the package that provides it ("acme-families 1.2.0").
    packages: dict[str, str]


def namespace_of(entry_point_name: str) -> str:
    """The namespace an entry point's name gives: lowercase, '-' and '.' read as '_' (package-style
    names such as `Acme-Families` become `acme_families`)."""
    return entry_point_name.strip().lower().replace("-", "_").replace(".", "_")


def valid_namespace(name: str) -> bool:
    """Whether `name` may be a plugin's namespace (an entry point's name)."""
    return bool(_NAMESPACE.match(name))


def _package(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown package"


def _declared(value: Any) -> list[Any]:
    if isinstance(value, ModuleType):
        if hasattr(value, "FAMILIES"):
            value = value.FAMILIES
        elif isinstance(getattr(value, "FAMILY", None), Family):
            value = value.FAMILY
        else:
            raise TypeError(
                f"module {value.__name__} has neither FAMILIES (a sequence of mathbode Family objects) nor FAMILY"
            )
    if callable(value) and not isinstance(value, Family):
        value = value()
    if isinstance(value, Family):
        return [value]
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"declares {type(value).__name__}, not a Family or a sequence of them")
    return list(value)


def namespaced(family: Family, namespace: str, package: str) -> Family:
    """`family` under its plugin's namespace, with its origin recorded."""
    bare = family.name
    if "." in bare:
        prefix, _, bare = bare.partition(".")
        if prefix != namespace:
            raise ValueError(f"family {family.name!r} is named for namespace {prefix!r}, not {namespace!r}")
    full = f"{namespace}.{bare}"
    if not re.match(layout().family_name_pattern, full):
        raise ValueError(
            f"family name {bare!r} is not valid: use lowercase letters, digits and _, starting with a letter "
            "(at most 48 characters)"
        )
    return dataclasses.replace(family, name=full, origin=package)


def load_plugins(found: Iterable[EntryPoint] | None = None) -> Plugins:
    """Every installed plugin's families; a plugin that fails is a `PluginProblem`, never an exception."""
    points = sorted(entry_points(group=GROUP) if found is None else found, key=lambda ep: ep.name)
    by_namespace: dict[str, list[EntryPoint]] = {}
    for ep in points:
        by_namespace.setdefault(namespace_of(ep.name), []).append(ep)
    families: dict[str, Family] = {}
    problems: list[PluginProblem] = []
    packages: dict[str, str] = {}
    for namespace, eps in by_namespace.items():
        owners = sorted({_package(ep) for ep in eps})
        if len(eps) > 1:
            problems.append(
                PluginProblem(
                    namespace,
                    " and ".join(owners),
                    f"the namespace is declared by {len(eps)} entry points ({', '.join(owners)}); none is loaded. "
                    "Uninstall all but one of these packages.",
                )
            )
            continue
        ep, package = eps[0], owners[0]
        if not valid_namespace(namespace):
            problems.append(
                PluginProblem(
                    namespace,
                    package,
                    "the entry point's name is its namespace and must be lowercase letters, digits and _, "
                    "starting with a letter",
                )
            )
            continue
        try:
            declared = _declared(ep.load())
            loaded = {}
            for family in declared:
                if not isinstance(family, Family):
                    raise TypeError(f"declares {type(family).__name__}, not a mathbode Family")
                named = namespaced(family, namespace, package)
                if named.name in loaded:
                    raise ValueError(f"declares the family {named.name!r} twice")
                loaded[named.name] = named
            if not loaded:
                raise ValueError("declares no family")
        except Exception as err:  # a plugin's failure is reported, never raised
            problems.append(PluginProblem(namespace, package, f"cannot be loaded: {type(err).__name__}: {err}"))
            continue
        families.update(loaded)
        packages[namespace] = package
    return Plugins(families, tuple(problems), packages)
