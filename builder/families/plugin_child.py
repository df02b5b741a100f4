"""The child process that imports family code we did not write (`python -m` this module).

Started by `isolation.load_isolated`, bounded from outside (`mathbode.core.child`). For each
source it is asked for (a plugin's entry point, or a FILE.py), it says the step, imports the
source, checks each family's definition (`check.precheck`: types, sizes, text, drive, draws, the
answer's size) and sends back plain data: each family that passed as its declaration
(`declaration.family_data`), each that failed as its findings, or why the source could not be
imported. Whatever the source raises, SystemExit and KeyboardInterrupt included, is said as
text; what it does beyond raising (exit, hang, close the pipe) ends this process, and the parent
says so.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from importlib.metadata import EntryPoint
from types import ModuleType
from typing import Any, Callable, Iterable

from mathbode.core.bounds import error_text
from mathbode.core.child import serve

from .check import precheck
from .declaration import family_data
from .family import Family
from .plugins import GROUP, namespaced

Send = Callable[[dict[str, Any]], None]


def work(request: dict[str, Any], send: Send) -> None:
    # The parent's import path: a plugin (or a test's module) is found where the command finds it.
    sys.path[:] = [str(p) for p in request.get("path", sys.path)]
    for index, source in enumerate(request["sources"]):
        send({"step": index})
        send({"source": index, **_answer(source)})


def _answer(source: dict[str, Any]) -> dict[str, Any]:
    namespace = source.get("namespace")
    try:
        if source["kind"] == "file":
            declared = _file_families(source["path"])
        else:
            declared = _entry_point_families(EntryPoint(source["name"], source["value"], GROUP))
        families = []
        for family in declared:
            if not isinstance(family, Family):
                raise TypeError(f"declares {type(family).__name__}, not a mathbode Family")
            families.append(namespaced(family, namespace, source["package"]) if namespace else family)
    except BaseException as err:  # SystemExit, KeyboardInterrupt, its own too: said, never obeyed
        said = {"type": type(err).__name__, "text": error_text(err), "where": _where(err)}
        return {"error": {**said, "base": not isinstance(err, Exception)}}
    return _declarations(families)


def _where(err: BaseException) -> str:
    last = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    return f" (at {last.filename}:{last.lineno})" if last else ""


def _declarations(families: list[Family]) -> dict[str, Any]:
    passed: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for family in families:
        shown = (
            family.name[:60] if isinstance(family.name, str) else f"<a family named by a {type(family.name).__name__}>"
        )
        try:
            problems = [(f.code, f.message) for f in precheck(family)]
            data = None if problems else family_data(family)
        except Exception as err:  # a family's own properties may raise anything: a finding
            problems, data = [("definition", f"{type(err).__name__}: {error_text(err)}")], None
        if data is None:
            failed.append({"name": shown, "findings": problems})
        else:
            passed.append(data)
    return {"families": passed, "failed": failed}


def _entry_point_families(ep: EntryPoint) -> list[Any]:
    return _declared(ep.load())


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


def _file_families(path: str) -> list[Any]:
    """A family file's families: its `FAMILIES`, else its `FAMILY`, else every `Family` it
    defines at top level, in definition order."""
    name = "_mathbode_family_file"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("it cannot be imported as a Python module: give a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and sympy look modules up by name while they run
    spec.loader.exec_module(module)
    if hasattr(module, "FAMILIES"):
        declared = module.FAMILIES
        if isinstance(declared, (str, bytes)) or not isinstance(declared, Iterable):
            raise TypeError(f"FAMILIES is a {type(declared).__name__}: make it a tuple of Family(...)")
        return list(declared)
    if isinstance(getattr(module, "FAMILY", None), Family):
        return [module.FAMILY]
    return [v for v in vars(module).values() if isinstance(v, Family)]


if __name__ == "__main__":
    serve(work)
