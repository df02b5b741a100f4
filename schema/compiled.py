"""Fast, exact application of the MathBode JSON Schemas to many rows.

`jsonschema` spends about 100 us on one row of these schemas, 5 s for a 47,040-row file. The
schemas have a shape that allows an exact shortcut: every constraint is either

- *structural*, at the root, depending only on which keys are present (`required`,
  `additionalProperties`, `oneOf` branches made of `required` / `not required`), or
- *per field*, under `properties`, possibly switched by `if`/`then` on the one conditioning
  field (`signal_type`).

So a row's errors are the structural errors of its key set plus, for each field, the errors of
that field's value given the conditioning value. Both are memoised, with free-text values
projected to a representative that the schema cannot tell apart (same JSON type, same answer
to `minLength`). Every check still runs through `jsonschema` on the real schema; only repeated
questions are answered from the memo. A schema outside this shape is applied row by row.
A property test checks the shortcut against plain `jsonschema` on mutated rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator

from .layout import layout

CONDITION_FIELD = "signal_type"
_ROOT_ONLY = {
    "required",
    "additionalProperties",
    "oneOf",
    "anyOf",
    "not",
    "type",
    "allOf",
    "properties",
    "$schema",
    "$id",
    "title",
    "description",
}


@dataclass(frozen=True)
class SchemaError:
    """One violation: the field it concerns ('' for the whole object), what was expected, what was found."""

    field: str
    expected: str
    found: Any
    keyword: str


#: A subschema marked with this keyword gets the layout's list of families as its `enum` when
#: loaded, so adding a family never means editing three JSON Schemas.
ENUM_FROM = "x-enum-from"


def _fill_enums(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _fill_enums(v) for k, v in node.items() if k != ENUM_FROM}
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


def _describe(err: jsonschema.ValidationError) -> tuple[str, str, Any]:
    """(field, expected, found) in words a submitter understands."""
    field = ".".join(str(p) for p in err.absolute_path)
    kw, val = err.validator, err.validator_value
    if kw == "required":
        missing = err.message.split("'")[1] if "'" in err.message else str(val)
        return ".".join([*(str(p) for p in err.absolute_path), missing]), "the field to be present", "missing"
    if kw == "additionalProperties":
        return "", "no fields beyond the schema's", err.message
    if kw == "oneOf":
        return (
            "",
            "exactly one of 'response' or 'prediction'",
            "both" if isinstance(err.instance, dict) and {"response", "prediction"} <= set(err.instance) else "neither",
        )
    if kw == "type":
        types = val if isinstance(val, list) else [val]
        return field, "a JSON " + " or ".join(str(t) for t in types), _found(err.instance)
    if kw in ("enum", "const"):
        choices = val if isinstance(val, list) else [val]
        return field, "one of " + ", ".join(json.dumps(c) for c in choices), _found(err.instance)
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        word = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[kw]
        return field, f"a number {word} {val}", _found(err.instance)
    if kw == "minLength":
        return field, f"a string of at least {val} characters", _found(err.instance)
    return field, f"{kw}: {json.dumps(val)}", _found(err.instance)


def _found(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, float) or value == value else "NaN"
    if isinstance(value, str):
        text = f"string {text}"
    return text if len(text) <= 60 else text[:57] + "..."


class CompiledSchema:
    """One JSON Schema, compiled once, applied to many rows (see the module doc)."""

    def __init__(self, schema: dict):
        Draft202012Validator.check_schema(schema)
        self.schema = schema
        self.validator = Draft202012Validator(schema)
        self.properties: dict = schema.get("properties", {})
        self._separable = self._is_separable(schema)
        self._prop_subschemas = self._field_rules(schema) if self._separable else {}
        self._projections = self._projection_rules()
        # The schema without its structural keywords: on a one-field probe only per-field rules fire.
        self._field_validator = Draft202012Validator(
            {k: v for k, v in schema.items() if k in ("properties", "allOf", "$schema")}
        )
        self._memo_struct: dict = {}
        self._memo_field: dict = {}

    # -- shape analysis ---------------------------------------------------------------------
    @staticmethod
    def _is_separable(schema: dict) -> bool:
        if set(schema) - _ROOT_ONLY:
            return False
        for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
            inner = dict(branch)
            negated = inner.pop("not", {"required": []})
            if set(inner) - {"required"} or set(negated) != {"required"}:
                return False
        for cond in schema.get("allOf", []):
            if set(cond) != {"if", "then"} or set(cond["then"]) != {"properties"}:
                return False
            if set(cond["if"].get("properties", {})) != {CONDITION_FIELD}:
                return False
        return True

    @staticmethod
    def _field_rules(schema: dict) -> dict[str, list[tuple[dict | None, dict]]]:
        """field -> [(if-schema or None, subschema)]: what applies to the field and when."""
        rules: dict[str, list] = {}
        for name, sub in schema.get("properties", {}).items():
            rules.setdefault(name, []).append((None, sub))
        for cond in schema.get("allOf", []):
            for name, sub in cond["then"]["properties"].items():
                rules.setdefault(name, []).append((cond["if"], sub))
        return rules

    def _projection_rules(self) -> dict[str, tuple[bool, int, bool]]:
        """field -> (strings: only type and minLength matter, that minLength, others: only type matters)."""
        rules = {}
        for name, subs in self._prop_subschemas.items():
            keywords = {k for _, sub in subs for k in sub} - {"description"}
            need = max((sub.get("minLength", 0) for _, sub in subs), default=0)
            rules[name] = (keywords <= {"type", "minLength"}, need, keywords <= {"type"})
        return rules

    # -- validation -------------------------------------------------------------------------
    def _errors_full(self, obj: dict) -> list[SchemaError]:
        return _one_per_field([SchemaError(*_describe(e), e.validator) for e in self.validator.iter_errors(obj)])

    def errors(self, obj: Any) -> list[SchemaError]:
        """Every violation of the schema by `obj` (empty when valid)."""
        if not isinstance(obj, dict) or not self._separable:
            return self._errors_full(obj)
        cond = obj.get(CONDITION_FIELD, _MISSING)
        cond_key = _value_key(cond) if cond is not _MISSING else _MISSING
        keys = frozenset(obj)
        skey = (keys, cond_key)
        found = self._memo_struct.get(skey)
        if found is None:
            # Structural errors depend only on the key set: check placeholders of those keys.
            probe = {k: obj[k] if k == CONDITION_FIELD else None for k in keys}
            found = [
                SchemaError(*_describe(e), e.validator)
                for e in self.validator.iter_errors(probe)
                if not e.absolute_path
            ]
            self._memo_struct[skey] = found
        out = list(found)
        memo, rules = self._memo_field, self._projections
        for name, value in obj.items():
            rule = rules.get(name)
            if rule is None:
                continue
            # Project the value to a stand-in every rule on this field answers the same way
            # (inlined: this loop runs for every field of every row).
            kind = type(value)
            proj: Any
            if kind is str and rule[0]:
                proj = "x" * min(len(value), rule[1])  # only the type and minLength matter
            elif (kind is float or kind is int) and rule[2]:
                proj = 0 if kind is int or value.is_integer() else 0.5  # only the type matters
            elif (kind is dict or kind is list) and rule[2]:
                proj = (kind,)  # only the type matters: no memo entry per distinct object
            else:
                proj = _value_key(value)
            fkey = (name, cond_key, proj)
            errs = memo.get(fkey)
            if errs is None:
                probe = {name: value}
                if cond is not _MISSING:
                    probe[CONDITION_FIELD] = cond
                errs = [
                    SchemaError(*_describe(e), e.validator)
                    for e in self._field_validator.iter_errors(probe)
                    if e.absolute_path and e.absolute_path[0] == name
                ]
                memo[fkey] = errs
            if errs:
                # The memo answers for every value with this projection; say what *this* row holds.
                found = _found(value)
                out.extend(SchemaError(e.field, e.expected, found, e.keyword) for e in errs)
        return _one_per_field(out)


def _one_per_field(errors: list[SchemaError]) -> list[SchemaError]:
    """A value of the wrong type gets one message, not also one per rule it then cannot meet ("0" vs 0)."""
    wrong_type = {e.field for e in errors if e.keyword == "type"}
    if not wrong_type:
        return errors
    return [e for e in errors if e.keyword == "type" or e.field not in wrong_type]


def _value_key(value: Any) -> Any:
    """A memo key for a value as it is: the type too (1, 1.0 and True are equal dict keys)."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)  # unhashable: by its text
    return (type(value), value)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


@cache
def compiled(name: str) -> CompiledSchema:
    """The compiled schema `name` (`row.schema.json`, `predictions.schema.json`), once per process."""
    return CompiledSchema(load_schema(name))
