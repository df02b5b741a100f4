"""Families from other packages: the entry point group, namespaces, and a plugin that fails.

The fixture package tests/fixtures/acme_plugin declares three families (rational, algebraic,
transcendental) under the namespace `acme`. Loading is tested here with entry points made in
the test; `test_plugin_package.py` installs the package into a fresh venv and takes it through
every command.
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from mathbode.builder.families import FAMILIES, get_family
from mathbode.builder.families.check import check_family
from mathbode.builder.families.plugins import GROUP, load_plugins

PLUGIN = Path(__file__).parent / "fixtures" / "acme_plugin"


@pytest.fixture
def importable(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    yield
    for name in [m for m in sys.modules if m.startswith("acme_families")]:
        del sys.modules[name]


def _ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=GROUP)


def test_a_plugin_s_families_are_namespaced_and_pass_their_check(importable):
    plugins = load_plugins([_ep("acme", "acme_families")])
    assert plugins.problems == ()
    assert list(plugins.families) == ["acme.fuel_cost", "acme.fall_time", "acme.cooling"]
    kinds = {name: f.kind for name, f in plugins.families.items()}
    assert kinds == {"acme.fuel_cost": "rational", "acme.fall_time": "algebraic", "acme.cooling": "transcendental"}
    for family in plugins.families.values():
        report = check_family(family)
        assert report.passed, report.format_text()
        assert report.table is not None and set(report.table.column("family").to_pylist()) == {family.name}


def test_an_attribute_entry_point_works_too(importable):
    assert len(load_plugins([_ep("acme", "acme_families:FAMILIES")]).families) == 3


@pytest.mark.parametrize(
    "points, namespace, message",
    [
        ([_ep("ghost", "no_such_module_here")], "ghost", "cannot be loaded: ModuleNotFoundError: No module named"),
        ([_ep("ghost", "json:dumps")], "ghost", "cannot be loaded: TypeError"),
        (
            [_ep("ghost", "json")],
            "ghost",
            "module json has neither FAMILIES (a sequence of mathbode Family objects) nor FAMILY",
        ),
        ([_ep("9lives", "acme_families")], "9lives", "must be lowercase letters, digits and _"),
        (
            [_ep("acme", "acme_families"), _ep("acme", "acme_families:FAMILIES")],
            "acme",
            "the namespace is declared by 2 entry points",
        ),
    ],
    ids=["import-fails", "not-families", "no-FAMILIES", "bad-namespace", "namespace-taken-twice"],
)
def test_a_broken_plugin_is_reported_by_name_and_loads_nothing(importable, points, namespace, message):
    plugins = load_plugins(points)
    assert plugins.families == {}
    assert [p.namespace for p in plugins.problems] == [namespace]
    assert message in plugins.problems[0].message


def test_a_broken_plugin_never_reaches_the_built_in_families(importable):
    plugins = load_plugins([_ep("ghost", "no_such_module_here"), _ep("acme", "acme_families")])
    assert len(plugins.families) == 3 and len(plugins.problems) == 1  # the good one still loads
    assert get_family("linear_solve") is FAMILIES["linear_solve"]


def test_a_plugin_family_may_not_take_another_namespace(importable, tmp_path, monkeypatch):
    # The plugin is imported in a child process: the stolen name is in a module of its own.
    (tmp_path / "stealing_families.py").write_text(
        "import dataclasses\n\nimport acme_families\n\n"
        "FAMILIES = (dataclasses.replace(acme_families.FAMILIES[0], name='other.fuel_cost'),)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problem = load_plugins([_ep("acme", "stealing_families")]).problems[0]
    assert "is named for namespace 'other', not 'acme'" in problem.message


def test_a_package_style_entry_point_name_is_read_as_its_namespace(importable):
    plugins = load_plugins([_ep("Acme-Families", "acme_families")])
    assert plugins.problems == () and next(iter(plugins.families)) == "acme_families.fuel_cost"


def test_a_module_with_one_family_may_say_FAMILY(importable, tmp_path, monkeypatch):
    (tmp_path / "one_family.py").write_text(
        "import acme_families\n\nFAMILY = acme_families.FAMILIES[1]\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert list(load_plugins([_ep("acme", "one_family")]).families) == ["acme.fall_time"]


def test_a_pin_made_without_the_namespace_is_named_for_what_it_is(importable):
    import dataclasses

    import acme_families

    from mathbode.builder.families.check import check_family
    from mathbode.builder.families.plugins import namespaced

    bare = dataclasses.replace(acme_families.FAMILIES[2], pins={})
    bare_hash = check_family(bare).facts["content hash"]  # what `family check FILE.py` says without --namespace
    named = namespaced(dataclasses.replace(bare, pins={"1.0.0": bare_hash}), "acme", "acme-families 0.3.0")
    (problem,) = check_family(named).problems
    assert problem.code == "pin-namespace"
    assert "is the hash of the rows named 'cooling', checked without the plugin's namespace" in problem.message
    assert "--namespace acme FILE.py" in problem.message
