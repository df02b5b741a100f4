"""The packaged JSON Schemas, read (without jsonschema, which only checking them needs)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .layout import layout

#: A subschema marked with this keyword gets the layout's list of families as its `enum` when
#: loaded, so adding a family never means editing three JSON Schemas.
ENUM_FROM = "x-enum-from"
#: Likewise, a subschema marked with this keyword gets a pattern of the layout as its `pattern`.
PATTERN_FROM = "x-pattern-from"
_PATTERNS = {
    "layout.json family_name_pattern": lambda: layout().family_name_pattern,
    "layout.json release_name_pattern": lambda: layout().release_name_pattern,
}


def _fill_enums(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _fill_enums(v) for k, v in node.items() if k not in (ENUM_FROM, PATTERN_FROM)}
        if PATTERN_FROM in node:
            if node[PATTERN_FROM] not in _PATTERNS:
                raise ValueError(f"unknown {PATTERN_FROM} source {node[PATTERN_FROM]!r}")
            out["pattern"] = _PATTERNS[node[PATTERN_FROM]]()
        if node.get(ENUM_FROM) == "layout.json families":
            out["enum"] = list(layout().families)
        elif ENUM_FROM in node:
            raise ValueError(f"unknown {ENUM_FROM} source {node[ENUM_FROM]!r}")
        return out
    if isinstance(node, list):
        return [_fill_enums(v) for v in node]
    return node


def load_schema(name: str) -> dict:
    """A packaged JSON Schema, with the layout's enums filled in."""
    return _fill_enums(json.loads(resources.files(__package__).joinpath(name).read_text("utf-8")))
