"""Family code we did not write, imported in a bounded child process; its families come back as data.

`load_isolated(sources)` imports each source (a plugin's entry point, or a FILE.py) in one child
process (`plugin_child`), bounded from outside (`mathbode.core.child`): `seconds` for each source,
`memory` for the child. The parent rebuilds each family that passed its definition check from
plain data (`declaration`), so no object of the plugin's ever reaches the command.

One child imports every source in turn, so a listing pays for one process, not one per plugin.
A child that dies, hangs or runs out of memory while importing a source is started again, with
that source alone: if it dies alone too, the death is that source's fate (the sources before it
have answered already); if not, another source's code (a thread it left behind) killed the
shared child, and the sources that are left are imported in a fresh child.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from mathbode.core.child import run_bounded
from mathbode.core.errors import UsageError

from .declaration import DeclarationError, family_from_data
from .family import Family

#: How long importing one source (and checking its families' definitions) may take. A module
#: that defines families imports in about a second; the bound leaves room for a slow disk.
IMPORT_SECONDS = 20.0
#: The address space, in MiB, a plugin's code may add to what its child holds when it starts
#: (a fresh interpreter with sympy, numpy and pyarrow holds about 330 MiB; a fork, the command's).
MEMORY_MB = 2048
#: Environment variables that set the two bounds (the tests set short ones).
SECONDS_VARIABLE = "MATHBODE_PLUGIN_SECONDS"
MEMORY_VARIABLE = "MATHBODE_PLUGIN_MEMORY_MB"
_CHILD = "mathbode.builder.families.plugin_child"


@dataclass
class SourceResult:
    """What importing one source gave: its families (rebuilt from data), the families whose
    definitions failed (name -> findings as (code, message)), or why it gave nothing."""

    families: list[Family] = field(default_factory=list)
    failed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: It raised: {"type", "text", "where", "base"} (base: not an Exception: SystemExit, ...).
    raised: dict[str, Any] | None = None
    #: The child died, hung or misbehaved while importing it: what happened, as a verb phrase.
    fate: str | None = None


def bound_seconds(default: float = IMPORT_SECONDS) -> float:
    """The seconds one source may take: `MATHBODE_PLUGIN_SECONDS` if set, else `default`."""
    return _positive(SECONDS_VARIABLE, default)


def bound_memory_mb() -> int:
    """The child's memory in MiB: `MATHBODE_PLUGIN_MEMORY_MB` if set, else `MEMORY_MB`."""
    return int(_positive(MEMORY_VARIABLE, MEMORY_MB))


def _positive(variable: str, default: float) -> float:
    text = os.environ.get(variable)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e6:
        raise UsageError(f"{variable}={text!r:.40}: give a positive number (or unset it for {default:g}).")
    return value


def load_isolated(sources: list[dict[str, Any]], seconds: float | None = None) -> list[SourceResult]:
    """Import each source in a bounded child; one result per source, in order. A source is
    {"kind": "entry_point", "name", "value", "namespace", "package"} or {"kind": "file", "path",
    "namespace" (or None), "package"}."""
    seconds = bound_seconds() if seconds is None else seconds
    memory = bound_memory_mb() * 2**20
    results: list[SourceResult | None] = [None] * len(sources)
    todo = list(range(len(sources)))
    alone = False
    while todo:
        batch = todo[:1] if alone else todo
        run = run_bounded(
            _CHILD,
            {"path": sys.path, "sources": [sources[i] for i in batch]},
            step_seconds=seconds,
            steps=len(batch),
            memory_bytes=memory,
        )
        for message in run.messages:
            index = message.get("source")
            if type(index) is int and 0 <= index < len(batch) and results[batch[index]] is None:
                results[batch[index]] = _result(message)
        if run.finished:
            for i in batch:
                if results[i] is None:
                    results[i] = SourceResult(fate="finished without saying what it defines")
        elif alone or len(batch) == 1:
            results[batch[0]] = results[batch[0]] or SourceResult(fate=run.fate)
            alone = False
        else:
            alone = True  # the source it died on is tried again alone (see the module's docstring)
        todo = [i for i in todo if results[i] is None]
    return [r if r is not None else SourceResult(fate="was not imported") for r in results]


def raised_text(raised: dict[str, Any]) -> str:
    """What a source raised, for a message: `Type: text`, with the memory bound named for a
    MemoryError (the child's bound, not the machine's, is what it met)."""
    said = f"{raised['type']}: {raised['text']}" if raised["text"] else raised["type"]
    if raised["type"] == "MemoryError":
        said += f" (past the child's bound of {bound_memory_mb():,} MiB; {MEMORY_VARIABLE} sets another)"
    return said


def _result(message: dict[str, Any]) -> SourceResult:
    raised = message.get("error")
    if raised is not None:
        if not (isinstance(raised, dict) and all(type(raised.get(k)) is str for k in ("type", "text", "where"))):
            return SourceResult(fate="sent an answer that is not one")
        return SourceResult(raised={**raised, "base": raised.get("base") is True})
    result = SourceResult()
    families, failed = message.get("families"), message.get("failed")
    if not isinstance(families, list) or not isinstance(failed, list):
        return SourceResult(fate="sent an answer that is not one")
    for data in families:
        try:
            result.families.append(family_from_data(data))
        except DeclarationError as err:
            return SourceResult(fate=f"sent a family that is not one ({err})")
    for entry in failed:
        name, findings = (entry.get("name"), entry.get("findings")) if isinstance(entry, dict) else (None, None)
        if type(name) is not str or not isinstance(findings, list):
            return SourceResult(fate="sent an answer that is not one")
        said = [(str(f[0]), str(f[1])) for f in findings if isinstance(f, list) and len(f) == 2]
        result.failed[name[:60]] = said or [("definition", "its definition fails its check")]
    return result
