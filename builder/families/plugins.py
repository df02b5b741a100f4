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
one stop or hang a command: its code runs only in a child process bounded from outside
(`isolation`: a time bound per plugin, a memory bound, a hard kill), and what it raises, how it
exits and what it does to the child's signals, threads and descriptors is reported as its
problem. Its families come back as plain data, checked as every family is.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Iterable

from mathbode.schema.layout import layout

from .family import Family
from .isolation import SourceResult, load_isolated, raised_text

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


def installed_namespaces() -> list[str]:
    """The namespaces of the installed plugins, from their entry points' names alone (nothing is
    imported: a plugin's code never runs for it)."""
    return sorted({namespace_of(ep.name) for ep in entry_points(group=GROUP)} - {""})


def _package(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown package"


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


def load_plugins(found: Iterable[EntryPoint] | None = None, seconds: float | None = None) -> Plugins:
    """Every installed plugin's families, imported in a bounded child process (`seconds` for each
    plugin; default `isolation.IMPORT_SECONDS` or $MATHBODE_PLUGIN_SECONDS); a plugin that fails in any way
    is a `PluginProblem`, never an exception."""
    points = sorted(entry_points(group=GROUP) if found is None else found, key=lambda ep: ep.name)
    by_namespace: dict[str, list[EntryPoint]] = {}
    for ep in points:
        by_namespace.setdefault(namespace_of(ep.name), []).append(ep)
    problems: list[PluginProblem] = []
    sources: list[dict[str, Any]] = []
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
        elif not valid_namespace(namespace):
            problems.append(
                PluginProblem(
                    namespace,
                    owners[0],
                    "the entry point's name is its namespace and must be lowercase letters, digits and _, "
                    "starting with a letter",
                )
            )
        else:
            ep = eps[0]
            sources.append(
                {
                    "kind": "entry_point",
                    "name": ep.name,
                    "value": ep.value,
                    "namespace": namespace,
                    "package": owners[0],
                }
            )
    families: dict[str, Family] = {}
    packages: dict[str, str] = {}
    for source, result in zip(sources, load_isolated(sources, seconds) if sources else [], strict=True):
        namespace, package = source["namespace"], source["package"]
        loaded, said = _families(result, namespace, package)
        problems += [PluginProblem(namespace, package, text) for text in said]
        if loaded:
            families.update(loaded)
            packages[namespace] = package
    return Plugins(families, tuple(problems), packages)


def _families(result: SourceResult, namespace: str, package: str) -> tuple[dict[str, Family], list[str]]:
    """A plugin's families (named as its namespace asks, with its package as their origin) and
    what to say about it."""
    if result.fate is not None:
        hint = " (a loop or a wait when imported)" if "ran past" in result.fate else ""
        return {}, [
            f"cannot be loaded: its import {result.fate}{hint}; a plugin's module should only define its "
            "families. Fix or uninstall the package"
        ]
    if result.raised is not None:
        raised = result.raised
        if raised["base"]:
            return {}, [
                f"cannot be loaded: its import raised {raised['type']}({raised['text']}); a plugin's module must not "
                "exit or interrupt when imported. Fix or uninstall the package"
            ]
        return {}, [f"cannot be loaded: {raised_text(raised)}"]
    loaded: dict[str, Family] = {}
    said = [
        f"its family {name!r} fails its check and is left out: {'; '.join(f'[{c}] {m}' for c, m in findings)}"
        for name, findings in result.failed.items()
    ]
    for family in result.families:
        if family.name.partition(".")[0] != namespace or not re.match(layout().family_name_pattern, family.name):
            return {}, [f"cannot be loaded: it sent the family name {family.name!r:.80}, not one of {namespace}.*"]
        if family.name in loaded:
            return {}, [f"cannot be loaded: ValueError: declares the family {family.name!r} twice"]
        loaded[family.name] = dataclasses.replace(family, origin=package)
    if not loaded and not said:
        said.append("cannot be loaded: ValueError: declares no family")
    return loaded, said
