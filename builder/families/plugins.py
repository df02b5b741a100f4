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
reported by namespace and package and left out: it never breaks the built-in families. Nor can
one stop or hang a command: its import runs under a time bound (`IMPORT_SECONDS`), and whatever
it raises, `sys.exit` and `KeyboardInterrupt` included, is reported as its problem.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any, Iterable

from mathbode.core.bounds import OutOfTime, UserInterrupt, error_text, time_bound
from mathbode.schema.layout import layout

from .family import Family

GROUP = "mathbode.families"
#: How long one plugin's import (and its FAMILIES function, if it has one) may take. A module
#: that defines families imports in about a second; the bound leaves room for a slow disk.
IMPORT_SECONDS = 20.0
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


def installed_namespaces() -> list[str]:
    """The namespaces of the installed plugins, from their entry points' names alone (nothing is
    imported: a plugin's code never runs for it)."""
    return sorted({namespace_of(ep.name) for ep in entry_points(group=GROUP)} - {""})


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


def load_plugins(found: Iterable[EntryPoint] | None = None, seconds: float = IMPORT_SECONDS) -> Plugins:
    """Every installed plugin's families; a plugin that fails, runs past `seconds` or raises
    anything at all (SystemExit, KeyboardInterrupt) is a `PluginProblem`, never an exception."""
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
            with time_bound(seconds):
                loaded = _loaded(ep, namespace, package)
        except OutOfTime:
            problems.append(
                PluginProblem(
                    namespace,
                    package,
                    f"cannot be loaded: its import ran past {seconds:g} s (a loop or a wait when imported); a "
                    "plugin's module should only define its families. Fix or uninstall the package",
                )
            )
            continue
        except Exception as err:  # a plugin's failure is reported, never raised
            said = f"cannot be loaded: {type(err).__name__}: {error_text(err)}"
            problems.append(PluginProblem(namespace, package, said))
            continue
        except UserInterrupt:  # the user's Ctrl-C stops the command as always
            raise
        except BaseException as err:  # sys.exit, KeyboardInterrupt, its own: never let it stop the command
            problems.append(
                PluginProblem(
                    namespace,
                    package,
                    f"cannot be loaded: its import raised {type(err).__name__}({error_text(err)}); a plugin's module "
                    "must not exit or interrupt when imported. Fix or uninstall the package",
                )
            )
            continue
        families.update(loaded)
        packages[namespace] = package
    return Plugins(families, tuple(problems), packages)


def _loaded(ep: EntryPoint, namespace: str, package: str) -> dict[str, Family]:
    loaded: dict[str, Family] = {}
    for family in _declared(ep.load()):
        if not isinstance(family, Family):
            raise TypeError(f"declares {type(family).__name__}, not a mathbode Family")
        named = namespaced(family, namespace, package)
        if named.name in loaded:
            raise ValueError(f"declares the family {named.name!r} twice")
        loaded[named.name] = named
    if not loaded:
        raise ValueError("declares no family")
    return loaded
