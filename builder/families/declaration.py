"""A family as plain data (JSON: text, numbers, lists, objects) and back.

A family of code we did not write is imported in a child process (`plugin_child`); what comes
back over the pipe is this data, and the parent rebuilds a `Family` of its own from it. So the
parent never holds an object the plugin made: no subclass whose `render` or `formula` runs the
plugin's code, no sympy function of its own whose evaluation does. The answer and equations
travel as sympy's `srepr` text and are rebuilt by walking that text's syntax tree, calling only
sympy's own classes (never `eval`, never `sympify`): an unknown name is refused, not looked up.
"""

from __future__ import annotations

import ast
from decimal import Decimal
from typing import Any, Mapping

import sympy as sp

from .draws import Draw
from .family import Family, Variant

#: The longest `srepr` rebuilt. An answer that passed its size check (at most 2,000 terms and
#: operations, numbers of at most 100 digits) prints in far less.
MAX_EXPRESSION_CHARS = 200_000
_TEXTS = ("name", "version", "title", "summary", "parameter_meaning", "template")
_OPTIONAL_TEXTS = ("root", "variant_of", "variant", "surface_seed")
_TEXT_MAPS = ("pins", "renamable", "renamed")
#: sympy classes a `srepr` names that sympy's top level does not export.
_EXTRA_CLASSES: dict[str, type] = {"ExprCondPair": sp.functions.elementary.piecewise.ExprCondPair}


class DeclarationError(ValueError):
    """Data that is not a family's declaration (said with the field, for the plugin's report)."""


# -- the child's side: a family (that passed its definition check) as data ----------------
def family_data(family: Family) -> dict[str, Any]:
    """`family` as JSON-ready data. Called on a family whose definition passed its check, so its
    fields have the types that check asks for."""
    return {
        **{name: str(getattr(family, name)) for name in _TEXTS},
        **{name: _optional_text(getattr(family, name)) for name in _OPTIONAL_TEXTS},
        **{name: {str(k): str(v) for k, v in getattr(family, name).items()} for name in _TEXT_MAPS},
        "parameter": _srepr(family.parameter),
        "unknowns": [_srepr(u) for u in family.unknowns],
        "equations": [_srepr(e) for e in family.equations],
        "answer": None if family.answer is None else _srepr(family.answer),
        "p_range": [_number(x) for x in family.p_range],
        "p0": _number(family.p0),
        "decimals": int(family.decimals),
        "epsilon": None if family.epsilon is None else _number(family.epsilon),
        "variants": [{str(k): _number(v) for k, v in variant.constants.items()} for variant in family.variants],
        "draws": {str(k): [str(d.low), str(d.high), str(d.step)] for k, d in family.draws.items()},
    }


def _srepr(expr: object) -> str:
    # order="none": each node's arguments as it stores them (srepr's default sorts them for
    # printing), so the rebuilt expression is the sent one node for node, equal to it.
    return sp.srepr(expr, order="none")


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)


def _number(value: object) -> str | int | float:
    """A decimal field as JSON keeps it: text, an int or a float stay what they were (a card
    prints `p_range` as declared); any other number travels as its exact decimal text."""
    if isinstance(value, bool):
        raise DeclarationError(f"{value!r} is not a number")
    # The base type's own conversion: a subclass's __str__ is not asked.
    for base in (str, int, float):
        if isinstance(value, base):
            return base.__str__(value) if base is str else base(value)
    if isinstance(value, Decimal):
        return str(value)
    raise DeclarationError(f"a {type(value).__name__} is not a decimal: write decimals as strings")


# -- the parent's side: data -> a Family of our own ----------------------------------------
def family_from_data(data: object) -> Family:
    """The `Family` that `data` declares; anything else is a `DeclarationError` naming the field."""
    if not isinstance(data, dict):
        raise DeclarationError(f"a family is declared as an object, not {type(data).__name__}")
    parameter = _expression(data, "parameter")
    if not isinstance(parameter, sp.Symbol):
        raise DeclarationError("parameter: not a sympy Symbol")
    fields: dict[str, Any] = {
        **{name: _text(data, name) for name in _TEXTS},
        **{name: _text(data, name, optional=True) for name in _OPTIONAL_TEXTS},
        **{name: _text_map(data, name) for name in _TEXT_MAPS},
    }
    return Family(
        **fields,
        parameter=parameter,
        unknowns=tuple(_symbol(s, "unknowns") for s in _list(data, "unknowns")),
        equations=tuple(_rebuilt(e, "equations") for e in _list(data, "equations")),
        answer=None if data.get("answer") is None else _expression(data, "answer"),
        p_range=_range(data),
        p0=_decimal(data.get("p0"), "p0"),
        decimals=_int(data, "decimals"),
        epsilon=None if data.get("epsilon") is None else _decimal(data["epsilon"], "epsilon"),
        variants=tuple(Variant(_constants(v)) for v in _list(data, "variants")),
        draws={str(k): _draw(k, v) for k, v in _mapping(data, "draws").items()},
    )


def _text(data: dict, name: str, optional: bool = False) -> Any:
    value = data.get(name)
    if value is None and optional:
        return None
    if type(value) is not str:
        raise DeclarationError(f"{name}: not text")
    return value


def _mapping(data: dict, name: str) -> dict:
    value = data.get(name)
    if not isinstance(value, dict):
        raise DeclarationError(f"{name}: not an object")
    return value


def _text_map(data: dict, name: str) -> dict[str, str]:
    value = _mapping(data, name)
    if not all(type(k) is str and type(v) is str for k, v in value.items()):
        raise DeclarationError(f"{name}: not text to text")
    return dict(value)


def _list(data: dict, name: str) -> list:
    value = data.get(name)
    if not isinstance(value, list):
        raise DeclarationError(f"{name}: not a list")
    return value


def _int(data: dict, name: str) -> int:
    value = data.get(name)
    if type(value) is not int:
        raise DeclarationError(f"{name}: not an integer")
    return value


def _decimal(value: object, name: str) -> Any:
    if type(value) not in (str, int, float):
        raise DeclarationError(f"{name}: not a decimal")
    return value


def _range(data: dict) -> tuple[Any, Any]:
    value = _list(data, "p_range")
    if len(value) != 2:
        raise DeclarationError("p_range: not (low, high)")
    return (_decimal(value[0], "p_range"), _decimal(value[1], "p_range"))


def _constants(value: object) -> Mapping[str, str]:
    if not isinstance(value, dict) or not all(type(k) is str and type(v) in (str, int) for k, v in value.items()):
        raise DeclarationError("variants: a question's constants are not names to decimals")
    return dict(value)


def _draw(name: object, value: object) -> Draw:
    if not (isinstance(value, list) and len(value) == 3 and all(type(x) is str for x in value)):
        raise DeclarationError(f"draws: {name!r:.40} is not (low, high, step)")
    return Draw(*value)


def _expression(data: dict, name: str) -> sp.Basic:
    return _rebuilt(data.get(name), name)


def _symbol(text: object, name: str) -> sp.Symbol:
    value = _rebuilt(text, name)
    if not isinstance(value, sp.Symbol):
        raise DeclarationError(f"{name}: not a sympy Symbol")
    return value


def _rebuilt(text: object, name: str) -> sp.Basic:
    """A sympy expression from its `srepr`, built by calling sympy's own classes only."""
    if type(text) is not str or len(text) > MAX_EXPRESSION_CHARS:
        raise DeclarationError(f"{name}: not a sympy expression of at most {MAX_EXPRESSION_CHARS:,} characters")
    try:
        tree = ast.parse(text, mode="eval")
        # evaluate(False): the expression is rebuilt as it was sent, node for node, not simplified again.
        with sp.evaluate(False):
            value = _node(tree.body, name)
    except DeclarationError:
        raise
    except (SyntaxError, RecursionError, MemoryError, ValueError, TypeError, AttributeError, ArithmeticError) as err:
        raise DeclarationError(f"{name}: not a sympy expression ({type(err).__name__})") from None
    if not isinstance(value, sp.Basic):
        raise DeclarationError(f"{name}: not a sympy expression")
    return value


def _node(node: ast.expr, name: str) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, str, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        if type(node.operand.value) is int:
            return -node.operand.value
    if isinstance(node, ast.Name):
        value = getattr(sp, node.id, None)
        if isinstance(value, sp.Basic):  # pi, E, I, oo, zoo, nan, true, false, ...
            return value
        raise DeclarationError(f"{name}: {node.id!r:.40} is not a sympy constant")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        cls = _EXTRA_CLASSES.get(node.func.id) or getattr(sp, node.func.id, None)
        if not (isinstance(cls, type) and issubclass(cls, sp.Basic)) or cls is sp.Function:
            raise DeclarationError(f"{name}: {node.func.id!r:.40} is not one of sympy's own classes")
        args = [_node(arg, name) for arg in node.args]
        keywords = {}
        for keyword in node.keywords:
            if keyword.arg is None or not isinstance(keyword.value, ast.Constant):
                raise DeclarationError(f"{name}: {node.func.id}'s arguments are not plain values")
            keywords[keyword.arg] = _node(keyword.value, name)
        value = cls(*args, **keywords)
        if not isinstance(value, sp.Basic):
            raise DeclarationError(f"{name}: {node.func.id} did not make a sympy expression")
        return value
    raise DeclarationError(f"{name}: {ast.dump(node)[:60]} is not part of a sympy expression")
