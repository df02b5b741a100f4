"""A family as plain data and back (`builder/families/declaration.py`): what a plugin's child sends.

Every built-in family makes the same rows (the same content hash) after the round trip, so a
plugin family rebuilt from the child's data builds the bytes its own object would. Text that is
not sympy's own `srepr` is refused, never evaluated.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import sympy as sp

from mathbode.builder.families import builtin_families
from mathbode.builder.families.declaration import DeclarationError, family_data, family_from_data
from mathbode.builder.rows import family_table
from mathbode.core.hashing import content_hash


@pytest.mark.parametrize("name", list(builtin_families()))
def test_a_family_sent_as_data_makes_the_same_rows(name):
    family = builtin_families()[name]
    data = json.loads(json.dumps(family_data(family), allow_nan=False))  # what crosses the pipe
    rebuilt = family_from_data(data)
    assert rebuilt.solutions == family.solutions and rebuilt.formula == family.formula
    assert content_hash(family_table(rebuilt)) == content_hash(family_table(family))


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')._exit(0)",
        "Symbol('p').__class__",
        "Function('f')(Symbol('p'))",
        "lambdify(Symbol('p'), Symbol('p'))",
        "Add(Symbol('p'), open('/etc/passwd'))",
        "Symbol(*['p'])",
        "Symbol('p', **{'positive': True})",
        "[Symbol('p')]",
        "Add(" * 5000 + "Symbol('p')" + ")" * 5000,
    ],
    ids=["import", "attribute", "own-function", "not-a-class", "builtin", "star", "double-star", "list", "deep"],
)
def test_an_answer_that_is_not_sympys_own_srepr_is_refused(text):
    data = family_data(builtin_families()["linear_solve"])
    with pytest.raises(DeclarationError, match="answer"):
        family_from_data({**data, "answer": text})


def test_a_field_of_the_wrong_type_is_refused_naming_it():
    data = family_data(builtin_families()["linear_solve"])
    for field, value in [("title", 42), ("variants", {"a": "1"}), ("decimals", "3"), ("p_range", ["1"])]:
        with pytest.raises(DeclarationError, match=field):
            family_from_data({**data, field: value})


def test_an_expression_is_rebuilt_node_for_node():
    p = sp.Symbol("p", positive=True)
    unevaluated = sp.Add(sp.Mul(2, p, evaluate=False), sp.Rational(1, 3), sp.exp(-p), sp.pi, evaluate=False)
    family = dataclasses.replace(builtin_families()["linear_solve"], answer=unevaluated)
    rebuilt = family_from_data(json.loads(json.dumps(family_data(family)))).answer
    assert rebuilt == unevaluated and rebuilt.args == unevaluated.args  # not sorted, not simplified
