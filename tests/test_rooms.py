"""The rooms' contracts: the family registry against the layout, the one command group, score options and provenance."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder import families as registry
from mathbode.builder.families import FAMILIES, FamilyRegistryError
from mathbode.builder.oracle import baseline_lines
from mathbode.cli.main import SUBCOMMANDS, mathbode
from mathbode.core.atomic import write_jsonl
from mathbode.core.version import __version__
from mathbode.schema import layout
from mathbode.schema.compiled import load_schema
from mathbode.schema.selection import select_rows


def test_the_registry_names_exactly_the_layout_families():
    assert list(FAMILIES) == list(layout().families)


def test_a_family_module_missing_from_the_layout_is_an_error(monkeypatch):
    extra = dataclasses.replace(FAMILIES["linear_solve"], name="cubic_solve")
    monkeypatch.setitem(registry._REGISTERED, "cubic_solve", extra)
    with pytest.raises(FamilyRegistryError) as err:
        registry._load()
    assert str(err.value) == (
        "The family registry does not match the layout: builder/families/canonical/ registers cubic_solve, "
        "missing from the families of schema/layout.json."
    )


def test_a_layout_family_without_a_module_is_an_error(monkeypatch):
    monkeypatch.delitem(registry._REGISTERED, "similar_triangles")
    with pytest.raises(
        FamilyRegistryError, match="lists similar_triangles but no module in builder/families/canonical/ registers it"
    ):
        registry._load()


def test_registering_a_name_twice_is_an_error():
    with pytest.raises(FamilyRegistryError, match="'linear_solve' is registered twice"):
        registry.register(FAMILIES["linear_solve"])


@pytest.mark.parametrize("name", ["row.schema.json", "predictions.schema.json"])
def test_schema_family_enums_come_from_the_layout(name):
    # Any well-named family (a release names its own): membership is checked against the reference in code.
    assert load_schema(name)["properties"]["family"] == {"type": "string", "pattern": layout().family_name_pattern}


def test_one_command_group_with_every_job():
    runner = CliRunner()
    result = runner.invoke(mathbode, ["--help"])
    assert result.exit_code == 0
    for sub in SUBCOMMANDS:
        assert f"  {sub} " in result.output, sub
    manifest = json.loads(open("dist/MANIFEST.json").read())
    expected = f"mathbode {__version__} (canonical release content {manifest['content_hash']})\n"
    assert runner.invoke(mathbode, ["--version"]).output == expected
    for sub in SUBCOMMANDS:
        assert runner.invoke(mathbode, [sub, "--version"]).output == expected, sub


@pytest.fixture(scope="module")
def smoke_file(tmp_path_factory):
    from mathbode.builder.oracle import canonical_reference

    path = tmp_path_factory.mktemp("smoke") / "smoke.jsonl"
    write_jsonl(path, baseline_lines(select_rows(canonical_reference(list(layout().families)).table, "SMOKE")))
    return path


@pytest.mark.parametrize(
    "option, message",
    [
        (["--gain-scale", "0"], "Invalid value for '--gain-scale': 0.0 is not in the range x>0."),
        (["--phase-scale", "-1"], "Invalid value for '--phase-scale': -1.0 is not in the range x>0."),
        (["--gain-weight", "-0.5"], "Invalid value for '--gain-weight': -0.5 is not in the range x>=0."),
        (
            ["--gain-weight", "0", "--phase-weight", "0"],
            "--gain-weight and --phase-weight must be 0 or more, and not both 0.",
        ),
    ],
)
def test_invalid_score_options_are_usage_errors(smoke_file, tmp_path, option, message):
    result = CliRunner().invoke(mathbode, ["score", str(smoke_file), "--out", str(tmp_path / "r"), *option])
    assert result.exit_code == 2
    assert message in result.output


def test_scores_json_says_how_it_was_scored(smoke_file, tmp_path):
    result = CliRunner().invoke(mathbode, ["score", str(smoke_file), "--out", str(tmp_path / "r"), "--no-plots"])
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    prov = scores["provenance"]
    assert scores["method"] == prov["method"] == "paper" and prov["preset"] == "SMOKE"
    assert prov["version"] == __version__ and prov["package"] == "mathbode"
    assert prov["config"] == {
        "mid_band": [4.0, 8.0],
        "gain_scale": 0.25,
        "phase_scale_deg": 45.0,
        "gain_weight": 0.5,
        "phase_weight": 0.5,
    }
    manifest = json.loads(open("dist/MANIFEST.json").read())
    assert prov["reference"]["source"] == "builder"
    assert prov["reference"]["content_hash"] == manifest["content_hash"]
    assert prov["parser"].startswith("strict")
    assert prov["scored_at"].endswith("+00:00")


def test_other_scales_are_not_called_the_paper_method(smoke_file, tmp_path):
    args = ["score", str(smoke_file), "--out", str(tmp_path / "r"), "--no-plots", "--gain-scale", "0.5", "--json"]
    result = CliRunner().invoke(mathbode, args)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)[0]
    assert scores["method"] == "custom" and scores["provenance"]["config"]["gain_scale"] == 0.5


@pytest.mark.parametrize(
    "argv, message",
    [
        (["prompts", "-o", "."], "Error: -o .: name a file to write, not the current folder or one above it.\n"),
        (["prompts", "-o", ""], "Error: -o .: name a file to write, not the current folder or one above it.\n"),
        (["baseline", "-o", "sub"], "Error: -o sub: is a folder; give the name of a file to write.\n"),
        (["build", "--out", "."], "Error: --out .: name a folder to write, not the current folder or one above it.\n"),
        (
            ["build", "--out", ".."],
            "Error: --out ..: name a folder to write, not the current folder or one above it.\n",
        ),
        (
            ["run", "--model", "m", "-o", "sub"],
            "Error: -o sub: is a folder; give the name of the predictions file to write.\n",
        ),
    ],
)
def test_outputs_that_cannot_be_written_whole_are_usage_errors(tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    result = CliRunner().invoke(mathbode, argv)
    assert result.exit_code == 2 and result.output.endswith(message), result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"] and not any((tmp_path / "sub").iterdir())
    assert not [p for p in tmp_path.parent.iterdir() if p.name.startswith("..")], "no stray temporary folder"


def test_no_link_in_the_repository_points_outside_it():
    """A merge once committed links from entry/ into another checkout: an editable install then
    imported that checkout's rooms instead of these."""
    import subprocess

    repo = Path(__file__).resolve().parent.parent
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "-s"], capture_output=True, text=True)
    if listed.returncode:
        pytest.skip("not a git checkout")
    links = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line.startswith("120000 ")]
    for link in links:
        target = (repo / link).parent / os.readlink(repo / link)
        assert target.resolve().is_relative_to(repo), (link, os.readlink(repo / link))


def test_every_python_package_of_the_repository_is_in_the_wheel():
    """A folder of modules that pyproject.toml does not list is left out of a non-editable install
    (the kernel variants' folder was, and `import mathbode.builder.families` failed installed)."""
    import tomllib

    repo = Path(__file__).resolve().parent.parent
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    mapped = {Path(folder) for folder in config["package-dir"].values()}
    assert set(config["packages"]) == set(config["package-dir"])
    found = {
        init.parent.relative_to(repo)
        for init in repo.rglob("__init__.py")
        if not {"tests", "benchmarks", "docs", "dist", "build", "site"} & set(init.relative_to(repo).parts)
        and not any(part.startswith(".") for part in init.relative_to(repo).parts)
    }
    assert found - mapped == set(), "folders with modules that the wheel leaves out: list them in pyproject.toml"


def test_every_module_of_the_schema_has_its_layer():
    """The schema's layers contract names every module: import-linter ignores a module it is not
    told of, so a new module would sit outside the contract, and a circle through it go unseen."""
    import re
    import tomllib

    repo = Path(__file__).resolve().parents[1]
    contracts = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["name"] == "schema in layers")["layers"]
    named = {name.strip() for layer in layers for name in re.split("[:|]", layer)}
    modules = {p.stem for p in (repo / "schema").glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in (repo / "schema").glob("*/__init__.py")}
    assert modules - named == set(), "give each new module of schema/ its layer in pyproject.toml"
    assert named - modules == set()
