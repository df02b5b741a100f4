"""Saved results are input (issue 40, section 5): `mathbode report` and `mathbode site` check every
results document (and comparisons.json) against its JSON Schema, bounded in size and depth, with
finite numbers and Unicode text, before rendering anything; a bad one is refused with a message
naming the file and the field, a FIFO is refused, not waited on.

Each named case ended in a traceback, a MemoryError or a hang before the fix; the sweep at the end
tampers every field of real documents with values of the wrong kind."""

from __future__ import annotations

import copy
import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.main import mathbode
from mathbode.core.atomic import write_jsonl
from mathbode.core.errors import MathBodeError
from mathbode.evaluator.presentation.report import render_report, saved_results
from mathbode.evaluator.presentation.site import build_site
from mathbode.evaluator.results import MAX_DOCUMENT_BYTES
from mathbode.schema.parsing import NON_COMPLIANT_KINDS
from mathbode.schema.selection import select_rows

from .site_fixtures import noisy


@pytest.fixture(scope="module")
def scored(reference, tmp_path_factory) -> Path:
    """A report folder of two SMOKE submissions (one noisy, one of chirp and step rows too) with
    intervals and a neighbour test: every part of a results document is there."""
    root = tmp_path_factory.mktemp("hostile-results")
    lines = list(baseline_lines(select_rows(reference.table, "SMOKE")))
    chirp_step = list(baseline_lines(select_rows(reference.table, "CHIRP_STEP")))
    paths = [root / "a.jsonl", root / "b.jsonl"]
    write_jsonl(paths[0], [{**x, "model": "model-a"} for x in noisy(lines, 0.2, 1)])
    write_jsonl(paths[1], [{**x, "model": "model-b"} for x in noisy(lines, 0.1, 2) + noisy(chirp_step, 0.1, 3)])
    result = CliRunner().invoke(
        mathbode, ["score", *map(str, paths), "--out", str(root / "R"), "--no-plots", "--bootstrap", "200"]
    )
    assert result.exit_code == 0, result.output
    assert (root / "R/comparisons.json").is_file()
    return root / "R"


def _copy(scored: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "R"
    shutil.copytree(scored, folder)
    return folder


def _edit(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))  # a lone surrogate as JSON writes it: the escape \\ud800


def _refused_by_both(folder: Path, tmp_path: Path, *said: str) -> None:
    """`report` and `site` each refuse with exit 2 and the messages `said`, and write nothing."""
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    for argv in (["report", str(folder)], ["site", str(folder), "-o", str(tmp_path / "S")]):
        result = CliRunner().invoke(mathbode, argv)
        assert result.exit_code == 2, (argv, result.output)
        assert isinstance(result.exception, SystemExit), result.exception
        for text in said:
            assert text in result.output, (argv, result.output)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "S").exists()


def _set(document: dict, path: str, value) -> None:
    *parents, last = path.split("/")
    node = document
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[last] = value


CASES = {
    # (document edit: path, value) -> the field the message names, and what it says
    "lone surrogate in the label": ("scores/label", "\ud800x", "at scores/label: text that is not Unicode"),
    "text where a score belongs": ("scores/overall/mb_core", "0.9", "at scores/overall/mb_core: '0.9' is not of type"),
    "list where a score belongs": ("scores/overall/mb_plus", [1], "at scores/overall/mb_plus: [1] is not of type"),
    "no file in the provenance's input": (
        "scores/provenance/input",
        {"sha256": "sha256:0"},
        "at scores/provenance/input",
    ),
    "a mid-band of text": ("scores/provenance/config/mid_band", ["4", "8"], "at scores/provenance/config/mid_band/0"),
    "a count too large for 64 bits": ("scores/num_sweeps", 10**30, "at scores/num_sweeps"),
    "an unknown kind of non-compliance": (
        "scores/non_compliant/kinds",
        {"mystery": 3},
        "at scores/non_compliant/kinds: 'mystery' is not one of",
    ),
    "a family's score of text": (
        "scores/families/linear_solve/mb_core",
        "high",
        "at scores/families/linear_solve/mb_core",
    ),
    "an interval of one bound": ("scores/intervals/families/linear_solve/mb_core", [0.5], "intervals/families"),
    "a table a trillion rows long": ("tables/sweeps/length", 10**12, "at tables/sweeps/length"),
    "a trace's sweep of the wrong kind": ("traces/5/sweep/amplitude_scale", "big", "at traces/5/sweep/amplitude_scale"),
    "repeatability measured with nothing in it": (
        "scores/repeatability",
        {"measured": True},
        "at scores/repeatability",
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_tampered_document_is_refused_naming_file_and_field(scored, tmp_path, case):
    at, value, said = CASES[case]
    folder = _copy(scored, tmp_path)
    target = folder / "model-a/results.json"
    _edit(target, lambda d: _set(d, at, value))
    _refused_by_both(folder, tmp_path, f"{target}: does not follow schema/results.schema.json", said)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_number_that_is_not_finite_is_refused(scored, tmp_path, literal):
    folder = _copy(scored, tmp_path)
    target = folder / "model-b/results.json"
    text = target.read_text()
    key = '"mb_core":'
    at = text.index(key) + len(key)
    end = min(i for i in (text.index(",", at), text.index("}", at)))
    target.write_text(text[:at] + literal + text[end:])
    said = "is too large to be a finite number" if literal == "1e400" else f"{literal} is not a number JSON has"
    _refused_by_both(folder, tmp_path, f"{target}: cannot be read as a results document", said)


def test_a_document_nested_without_end_or_too_large_is_refused(scored, tmp_path):
    folder = _copy(scored, tmp_path)
    target = folder / "model-a/results.json"
    text = target.read_text()
    assert '"conditions":{' in text
    target.write_text(text.replace('"conditions":{', '"conditions":{"deep":' + "[" * 5000 + "]" * 5000 + ",", 1))
    _refused_by_both(folder, tmp_path, f"{target}: nested too deeply to be a results document")
    with target.open("w") as stream:  # larger than any document mathbode writes (sparse: no disk used)
        stream.truncate(MAX_DOCUMENT_BYTES + 1)
    _refused_by_both(folder, tmp_path, f"{target}: more than {MAX_DOCUMENT_BYTES:,} bytes")


def test_a_tampered_comparisons_file_is_refused(scored, tmp_path):
    folder = _copy(scored, tmp_path)
    target = folder / "comparisons.json"
    _edit(target, lambda tests: _set(tests, "0/shared_sweeps", "many"))
    _refused_by_both(folder, tmp_path, f"{target}: does not follow schema/comparisons.schema.json at 0/shared_sweeps")


def test_a_fifo_as_a_results_document_is_refused_not_waited_on(scored, tmp_path):
    folder = _copy(scored, tmp_path)
    target = folder / "model-a/results.json"
    target.unlink()
    os.mkfifo(target)
    outcome: dict = {}
    work = threading.Thread(
        target=lambda: outcome.update(
            got=CliRunner().invoke(mathbode, ["site", str(folder), "-o", str(tmp_path / "S")])
        )
    )
    work.start()
    work.join(timeout=60)
    if work.is_alive():  # before the fix: blocked on the pipe; a writer frees it so the test ends
        with open(target, "w") as stream:
            stream.write("{}")
        work.join(timeout=60)
        pytest.fail("mathbode site hung on a FIFO")
    got = outcome["got"]
    assert got.exit_code == 2, got.output
    assert f"{target}: not a regular file (a pipe, device or socket); a results document is a file" in got.output


def test_the_schema_s_kinds_of_non_compliance_are_the_parser_s():
    from mathbode.schema.json_schemas import load_schema

    kinds = load_schema("results.schema.json")["properties"]["scores"]["properties"]["non_compliant"]
    assert kinds["properties"]["kinds"]["propertyNames"]["enum"] == list(NON_COMPLIANT_KINDS)


# -- issue 49, section 4: numbers a renderer cannot draw -------------------------------------------
PAST_FLOAT = "an integer past the float range (larger than about 1.8e308), which no renderer can read as a number"
UNDRAWABLE = {
    # before: OverflowError from `mathbode site`
    "overall MB-Core past the float range": (
        "scores/overall/mb_core",
        10**400,
        f"at scores/overall/mb_core: {PAST_FLOAT}",
    ),
    "a negative one in a family": (
        "scores/families/linear_solve/mb_plus",
        -(10**309),
        f"at scores/families/linear_solve/mb_plus: {PAST_FLOAT}",
    ),
    # before: MemoryError (std::bad_alloc) or matplotlib's "Image size ... is too large" from `mathbode report`
    "dpi 5,000": (
        "rendering/figures",
        {"format": "png", "dpi": 5000},
        "at rendering/figures/dpi: 5000 is greater than the maximum of 1200",
    ),
    "dpi 1e6": (
        "rendering/figures",
        {"format": "png", "dpi": 1e6},
        "at rendering/figures/dpi: 1000000.0 is greater than the maximum of 1200",
    ),
}


@pytest.mark.parametrize("case", list(UNDRAWABLE), ids=list(UNDRAWABLE))
def test_a_number_no_renderer_can_draw_is_refused_naming_its_field(scored, tmp_path, case):
    at, value, said = UNDRAWABLE[case]
    folder = _copy(scored, tmp_path)
    target = folder / "model-a/results.json"
    _edit(target, lambda d: _set(d, at, value))
    _refused_by_both(folder, tmp_path, f"{target}: does not follow schema/results.schema.json {said}")


def test_the_schema_s_largest_dpi_is_the_score_command_s():
    """A document says the dpi `mathbode score --dpi` drew with, so the two ranges are one."""
    from mathbode.cli.score import main as score_cli
    from mathbode.schema.json_schemas import load_schema

    rendering = load_schema("results.schema.json")["properties"]["rendering"]["properties"]
    dpi = rendering["figures"]["oneOf"][1]["properties"]["dpi"]
    option = next(p for p in score_cli.params if p.name == "dpi").type
    assert (dpi["minimum"], dpi["maximum"]) == (option.min, option.max) == (30, 1200)


# -- every field, every wrong kind --------------------------------------------------------------------
WRONG = [("text", "x"), ("list", [1]), ("object", {"a": 1}), ("null", None), ("negative", -1), ("huge", 1e308)]
WRONG += [("true", True), ("surrogate", "\ud800"), ("big int", 10**30), ("removed", KeyError)]


def _leaves(node, at=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield at + (key,)
            yield from _leaves(value, at + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node[:2]):
            yield at + (i,)
            yield from _leaves(value, at + (i,))


def _tampered(documents, which, at, value):
    out = copy.deepcopy(documents)
    node = out[which]
    for key in at[:-1]:
        node = node[key]
    if value is KeyError:
        del node[at[-1]]
    else:
        node[at[-1]] = value
    return out


def test_every_field_of_the_wrong_kind_is_rendered_or_refused_never_a_traceback(scored, tmp_path):
    """Fields of both documents (the first two items of a list; the long arrays' values apart,
    whose checks are exercised above), in turn, set to a wrong kind of value in a rotation, then
    rendered as `report`, as `site`, or (every third) as both. Each is rendered, or refused
    by a MathBodeError (a message); any other exception fails the test with the field that raised it."""
    documents, tests = saved_results(scored)
    for d in documents:
        d["traces"] = d["traces"][:3]
        d["rendering"]["figures"] = None
    fields = [
        (which, at)
        for which, d in enumerate(documents)
        for at in _leaves(d)
        if not (at[0] in ("tables", "traces", "step_curves") and isinstance(at[-1], int) and len(at) > 3)
    ]
    failures = []
    # Every third field (a different third in each document), each kind of value in turn, each
    # render in turn: about 300 renders, a minute on one core.
    for n, (which, at) in enumerate(fields):
        if n % 3:
            continue
        name, value = WRONG[(n // 3) % len(WRONG)]
        tampered = _tampered(documents, which, at, value)
        folder = tmp_path / "R"
        shutil.rmtree(folder, ignore_errors=True)
        for i, d in enumerate(tampered):
            (folder / f"s{i}").mkdir(parents=True)
            (folder / f"s{i}/results.json").write_text(json.dumps(d))
        turn = n // 3
        for render in ("report", "site") if turn % 3 == 0 else ("report",) if turn % 2 else ("site",):
            try:
                if render == "report":
                    render_report(*saved_results(folder), tmp_path / "out")
                else:
                    build_site([folder], tmp_path / "site")
            except MathBodeError:
                break
            except Exception as err:  # noqa: BLE001 - what the test looks for
                failures.append(f"{'/'.join(map(str, at))} = {name}: {render}: {type(err).__name__}: {err}"[:300])
                break
            finally:
                shutil.rmtree(tmp_path / "out", ignore_errors=True)
                shutil.rmtree(tmp_path / "site", ignore_errors=True)
    assert len(fields) > 600
    assert not failures, "\n".join(failures[:20])
