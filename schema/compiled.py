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
from typing import Any

import jsonschema
import numpy as np
from jsonschema import Draft202012Validator

from .json_schemas import load_schema

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
        self._numbers = self._numeric_rules()
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

    def _numeric_rules(self) -> dict[str, tuple[float, ...]]:
        """field -> every number its rules compare a value with, for fields whose rules are only
        type, bounds and enum/const: what such a rule says of a number depends only on its type,
        whether it is whole, and how it compares with each of these."""
        numeric = {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "const"}
        rules = {}
        for name, subs in self._prop_subschemas.items():
            if not {k for _, sub in subs for k in sub} - {"description"} <= numeric:
                continue
            marks: set[float] = set()
            for _, sub in subs:
                for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const"):
                    if isinstance(sub.get(key), (int, float)) and not isinstance(sub.get(key), bool):
                        marks.add(sub[key])
                for choice in sub.get("enum", []):
                    if isinstance(choice, (int, float)) and not isinstance(choice, bool):
                        marks.add(choice)
            rules[name] = tuple(sorted(marks))
        return rules

    # -- validation -------------------------------------------------------------------------
    def _errors_full(self, obj: dict) -> list[SchemaError]:
        return _one_per_field([SchemaError(*_describe(e), e.validator) for e in self.validator.iter_errors(obj)])

    def _structural_errors(self, keys: frozenset[str], cond: Any, cond_key: Any) -> list[SchemaError]:
        """The errors a row has for its key set alone (memoised per key set and condition)."""
        skey = (keys, cond_key)
        found = self._memo_struct.get(skey)
        if found is None:
            # Structural errors depend only on the key set: check placeholders of those keys.
            probe = {k: cond if k == CONDITION_FIELD else None for k in keys}
            found = [
                SchemaError(*_describe(e), e.validator)
                for e in self.validator.iter_errors(probe)
                if not e.absolute_path
            ]
            self._memo_struct[skey] = found
        return found

    def _field_errors(self, name: str, cond: Any, cond_key: Any, value: Any) -> list[SchemaError]:
        """The errors of one field's value given the condition (memoised per projection, see the module doc)."""
        rule = self._projections[name]
        # Project the value to a stand-in every rule on this field answers the same way.
        kind = type(value)
        proj: Any
        if kind is str and rule[0]:
            proj = "x" * min(len(value), rule[1])  # only the type and minLength matter
        elif (kind is float or kind is int) and rule[2]:
            proj = 0 if kind is int or value.is_integer() else 0.5  # only the type matters
        elif (kind is dict or kind is list) and rule[2]:
            proj = (kind,)  # only the type matters: no memo entry per distinct object
        elif (kind is float or kind is int) and name in self._numbers:
            # Type, wholeness, NaN, and the side of each number the rules name (see _numeric_rules).
            whole = kind is int or value.is_integer()
            proj = (kind, whole, value != value, tuple((value > m) - (value < m) for m in self._numbers[name]))
        else:
            proj = _value_key(value)
        fkey = (name, cond_key, proj)
        errs = self._memo_field.get(fkey)
        if errs is None:
            probe = {name: value}
            if cond is not _MISSING:
                probe[CONDITION_FIELD] = cond
            errs = [
                SchemaError(*_describe(e), e.validator)
                for e in self._field_validator.iter_errors(probe)
                if e.absolute_path and e.absolute_path[0] == name
            ]
            self._memo_field[fkey] = errs
        return errs

    def suspect_columns(self, columns: dict[str, list[Any]], present: list[str] | None = None) -> list[int]:
        """Indices of the rows that may violate the schema, in order; every other row is valid.
        Rows are given as columns of equal length (an Arrow table's `to_pylist` per column: a null
        is a JSON null); a field absent from a row holds `MISSING` there. `present` names fields
        every row has that are not given (known to be valid).

        Rows are grouped by the condition field's value; then each distinct key set and, column by
        column, each distinct projection of a field's values (what the schema can tell apart: the
        value, or for free text its type and length, for a type-only rule its type) is asked once,
        through the same memo `errors` uses, so a row left out here is one `errors` passes. A
        column of mixed types is asked value by value. Callers run `errors` on the suspects for
        the messages."""
        if not self._separable:
            return list(range(len(next(iter(columns.values()), []))))
        conditions = columns.get(CONDITION_FIELD)
        n = len(next(iter(columns.values()), []))
        try:
            by_condition = _group_by_condition(conditions if conditions is not None else [_MISSING] * n)
        except TypeError:  # an unhashable condition value
            return list(range(n))
        sometimes = [name for name, column in columns.items() if _MISSING in column]  # a scan in C
        always = frozenset(present or ()) | {name for name in columns if name not in sometimes}
        # Which of the sometimes-absent fields each row has: a file repeats a few such shapes.
        shapes = list(zip(*([v is not _MISSING for v in columns[name]] for name in sometimes), strict=True))
        suspects: set[int] = set()
        for cond_key, indices in by_condition.items():
            cond = _MISSING if cond_key is _MISSING else cond_key[1]
            group_shapes = {shapes[i] for i in indices} if sometimes else {()}
            for shape in group_shapes:
                keys = always | {name for name, has in zip(sometimes, shape, strict=True) if has}
                if self._structural_errors(frozenset(keys), cond, cond_key):
                    suspects.update(i for i in indices if not sometimes or shapes[i] == shape)
            whole = len(indices) == n
            for name in self._projections:
                if name in columns:
                    column = columns[name] if whole else [columns[name][i] for i in indices]
                    suspects.update(indices[j] for j in self._column_suspects(name, column, cond, cond_key))
        return sorted(suspects)

    def _column_suspects(self, name: str, column: list[Any], cond: Any, cond_key: Any) -> set[int]:
        """Positions in `column` (one field's values, `_MISSING` where absent) whose value may be wrong."""
        present = set(map(type, column)) - {_Missing}
        if not present:
            return set()
        project = self._projection(name, present.pop()) if len(present) == 1 else None
        if project is None:  # values of several types, or objects the schema looks into: one by one
            return {
                j for j, v in enumerate(column) if v is not _MISSING and self._field_errors(name, cond, cond_key, v)
            }
        if project is _identity:
            projections = column
        elif project is float.is_integer and _MISSING not in column:
            projections = _whole(column)
        else:
            projections = [_MISSING if v is _MISSING else project(v) for v in column]
        first = _first_index(projections)
        first.pop(_MISSING, None)
        bad = {proj for proj, j in first.items() if self._field_errors(name, cond, cond_key, column[j])}
        return {j for j, proj in enumerate(projections) if proj in bad} if bad else set()

    def _projection(self, name: str, kind: type) -> Any:
        """For values of one type: a function giving what `_field_errors` looks at (None: not a scalar rule)."""
        text_only, need, type_only = self._projections[name]
        if kind is str and text_only:
            return lambda v: min(len(v), need)
        if kind is float and type_only:
            return float.is_integer
        if (kind is int or kind is dict or kind is list) and type_only:
            return _constant
        if kind is dict or kind is list:
            return None
        return _identity

    def errors(self, obj: Any) -> list[SchemaError]:
        """Every violation of the schema by `obj` (empty when valid)."""
        if not isinstance(obj, dict) or not self._separable:
            return self._errors_full(obj)
        cond = obj.get(CONDITION_FIELD, _MISSING)
        cond_key = _value_key(cond) if cond is not _MISSING else _MISSING
        out = list(self._structural_errors(frozenset(obj), cond, cond_key))
        for name, value in obj.items():
            if name in self._projections:
                errs = self._field_errors(name, cond, cond_key, value)
                if errs:
                    # The memo answers for every value with this projection; say what *this* row holds.
                    found_text = _found(value)
                    out.extend(SchemaError(e.field, e.expected, found_text, e.keyword) for e in errs)
        return _one_per_field(out)


def _one_per_field(errors: list[SchemaError]) -> list[SchemaError]:
    """A value of the wrong type gets one message, not also one per rule it then cannot meet ("0" vs 0)."""
    wrong_type = {e.field for e in errors if e.keyword == "type"}
    if not wrong_type:
        return errors
    return [e for e in errors if e.keyword == "type" or e.field not in wrong_type]


def _group_by_condition(conditions: list[Any]) -> dict[Any, list[int]]:
    """Row indices per condition value, keyed as the memo keys it (the type too: 1 is not True)."""
    groups: dict[Any, list[int]] = {}
    for i, cond in enumerate(conditions):
        groups.setdefault(cond if cond is _MISSING else (type(cond), cond), []).append(i)
    return groups


def _first_index(values: list[Any]) -> dict[Any, int]:
    """Each distinct value and the first index it is found at (built in C: later duplicates are overwritten)."""
    return dict(zip(reversed(values), range(len(values) - 1, -1, -1), strict=True))


def _whole(column: list[float]) -> list[bool]:
    """`float.is_integer` of every value, in numpy (NaN and infinities are not whole, as there)."""
    values = np.asarray(column, dtype=float)
    with np.errstate(invalid="ignore"):
        return (np.isfinite(values) & (np.mod(values, 1.0) == 0)).tolist()


def _identity(value: Any) -> Any:
    return value


def _constant(value: Any) -> int:
    return 0


def _value_key(value: Any) -> Any:
    """A memo key for a value as it is: the type too (1, 1.0 and True are equal dict keys)."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)  # unhashable: by its text
    return (type(value), value)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()
#: A field a row does not have, in `suspect_columns`' columns.
MISSING: Any = _MISSING


@cache
def compiled(name: str) -> CompiledSchema:
    """The compiled schema `name` (`row.schema.json`, `predictions.schema.json`), once per process."""
    return CompiledSchema(load_schema(name))
