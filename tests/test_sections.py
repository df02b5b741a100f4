"""The results document is closed and typed (issue 49, section 2).

Three views of what `scores` holds must agree: the types (`evaluator/sections.py`), the JSON Schema
(`schema/results.schema.json`) and what the scorer writes. The types and the schema are compared
both ways, object by object; every kind of release is scored and its document read back through
the closed schema; a section nobody declared is refused, as is a tampered section that would
crash a renderer.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest
from click.testing import CliRunner

from mathbode.evaluator import sections
from mathbode.evaluator.results import ResultsVersionError, checked, dumps, to_document
from mathbode.schema.json_schemas import load_schema

from .fixtures.document_kinds import KINDS, reference_of, score_kind

SCHEMA = load_schema("results.schema.json")


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """The object schema a node stands for: through `$ref`, and past a null branch of `oneOf`."""
    while True:
        if "$ref" in node:
            node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        elif "oneOf" in node:
            objects = [b for b in node["oneOf"] if _resolve(b).get("type") == "object"]
            if len(objects) != 1:
                return node
            node = objects[0]
        else:
            return node


def _typed_dicts(annotation: Any) -> list[tuple[str, Any]]:
    """The TypedDicts inside an annotation, each with how to reach its schema from the key's node:
    '' (the node itself), '[]' (its items) or '{}' (its additionalProperties), nested."""
    if typing.is_typeddict(annotation):
        return [("", annotation)]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return [found for arg in args for found in _typed_dicts(arg)]
    if origin in (list, typing.Sequence, __import__("collections.abc").abc.Sequence):
        return [("[]" + way, t) for way, t in _typed_dicts(args[0])]
    if origin is dict:
        return [("{}" + way, t) for way, t in _typed_dicts(args[1])]
    return []


def _follow(node: dict[str, Any], way: str) -> dict[str, Any]:
    node = _resolve(node)
    while way:
        step, way = way[:2], way[2:]
        node = _resolve(node["items"] if step == "[]" else node["additionalProperties"])
    return node


def _compare(typed: Any, node: dict[str, Any], at: str, problems: list[str]) -> None:
    node = _resolve(node)
    declared = set(typed.__annotations__)
    properties = set(node.get("properties", {}))
    if declared - properties:
        problems.append(f"{at} ({typed.__name__}): the type declares {sorted(declared - properties)}, the schema not")
    if properties - declared:
        problems.append(f"{at} ({typed.__name__}): the schema declares {sorted(properties - declared)}, the type not")
    if set(typed.__required_keys__) != set(node.get("required", [])):
        problems.append(
            f"{at} ({typed.__name__}): required {sorted(typed.__required_keys__)} by the type, "
            f"{sorted(node.get('required', []))} by the schema"
        )
    if node.get("additionalProperties") is not False:
        problems.append(f"{at} ({typed.__name__}): the schema leaves it open (additionalProperties is not false)")
    hints = get_type_hints(typed)
    for key in declared & properties:
        for way, inner in _typed_dicts(hints[key]):
            _compare(inner, _follow(node["properties"][key], way), f"{at}/{key}{way}", problems)


def test_the_types_and_the_schema_declare_the_same_keys_both_ways():
    """Every typed object of `scores` is its schema object: the same keys, the same required ones,
    and closed; the comparison walks every nested type the sections declare."""
    problems: list[str] = []
    _compare(sections.Scores, SCHEMA["properties"]["scores"], "scores", problems)
    assert problems == []


def test_every_section_is_typed_and_closed():
    """A section added to the scorer without a type or a schema entry cannot reach a document."""
    scores = SCHEMA["properties"]["scores"]
    assert scores["additionalProperties"] is False
    assert set(scores["properties"]) == set(sections.Scores.__annotations__)
    assert sections.HEAD_KEYS | set(sections.Sections.__annotations__) == set(scores["properties"])


# -- what the scorer writes, for every kind of release -------------------------------------------------


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """A release per distinct build, built once as `mathbode-build` builds it."""
    from mathbode.cli.build import main as build_cli

    base = tmp_path_factory.mktemp("kinds")
    built: dict[tuple[str, ...], Path] = {}

    def folder(args: tuple[str, ...]) -> Path:
        if args not in built:
            out = base / f"release-{len(built)}"
            result = CliRunner().invoke(build_cli, [*args, "--out", str(out), "-q"])
            assert result.exit_code == 0, result.output
            built[args] = out
        return built[args]

    return folder


@pytest.fixture(scope="module")
def documents(releases):
    """Each kind's results document, as `mathbode score` writes it (name -> text)."""
    return {name: dumps(to_document(score_kind(kind, reference_of(kind, releases)))) for name, kind in KINDS.items()}


@pytest.mark.parametrize("name", list(KINDS), ids=list(KINDS))
def test_every_kind_of_document_reads_back_through_the_closed_schema(documents, name):
    document = checked(json.loads(documents[name]), name)
    # Each kind shows the sections it is there for (a kind that stopped writing one proves nothing).
    expected = {
        "dynamics": "sequential" in name and "multi-tone" not in name,
        "multitone": "multi-tone" in name,
        "variants": "GAP" in name,
        "diagnostics": "chirp" in name,
        "intervals": KINDS[name].resamples > 0,
    }
    assert {k: k in document["scores"] for k in expected} == expected


#: Keys the types declare that no kind writes, and why (every other key is written by some kind).
NOT_WRITTEN_BY_A_KIND = {
    # Older documents only (they must still read).
    "scores/repeatability/overall/spread_mean": "the overall spread before the relative one",
    "scores/dynamics{}/delay_phase_residual": "a residual of the first dynamics fit",
    "scores/dynamics{}/interval_note": "a note the intervals no longer need",
    # Added by `mathbode score`, not by the scorer.
    "scores/provenance/input": "the submission file's name and hash",
    # A family scored at no mid-band frequency.
    "scores/families{}/note": "why a family has no MB-Core",
    # A variant kind pooled over too few units for an interval.
    "scores/variants_pooled{}/no_interval": "why the pooled difference has no interval",
    # A pair with too few units in a cell (test_evidence_units scores one of one shared sweep).
    "scores/variants{}{}/mb_core_diff_no_interval": "why a pair's difference has no interval",
}


def _nodes(value: Any, way: str) -> list[dict[str, Any]]:
    found = [value]
    while way:
        step, way = way[:2], way[2:]
        found = [v for x in found for v in ((x if step == "[]" else x.values()) if isinstance(x, (list, dict)) else ())]
    return [v for v in found if isinstance(v, dict)]


def _unwritten(typed: Any, objects: list[dict[str, Any]], at: str, out: list[str]) -> None:
    seen = set().union(*objects) if objects else set()
    out += [f"{at}/{key}" for key in typed.__annotations__ if key not in seen]
    for key, annotation in get_type_hints(typed).items():
        for way, inner in _typed_dicts(annotation):
            below = [n for o in objects if key in o for n in _nodes(o[key], way)]
            if below:
                _unwritten(inner, below, f"{at}/{key}{way}", out)


def test_the_kinds_together_write_every_key_the_types_declare(documents):
    """The types are the truth generated from real documents: every key they declare is written by
    some kind, or is listed with the reason no kind writes it (older documents, the CLI's)."""
    unwritten: list[str] = []
    _unwritten(sections.Scores, [json.loads(text)["scores"] for text in documents.values()], "scores", unwritten)
    assert sorted(unwritten) == sorted(NOT_WRITTEN_BY_A_KIND)


# -- a section nobody declared, a tampered section -------------------------------------------------------


def test_a_section_the_types_do_not_declare_is_refused(documents):
    document = json.loads(documents["canonical SMOKE stateless, intervals"])
    document["scores"]["headline_v2"] = {"mb_core": 1.0}
    with pytest.raises(ResultsVersionError, match="at scores: Additional properties are not allowed .'headline_v2'"):
        checked(document, "results.json")


def test_a_key_added_inside_a_section_is_refused(documents):
    document = json.loads(documents["multi-tone sequential"])
    document["scores"]["multitone"]["families"]["similar_triangles"]["memory"]["secret"] = 1
    with pytest.raises(ResultsVersionError, match="at scores/multitone/families/similar_triangles/memory: Additional"):
        checked(document, "results.json")


def _report_folder(text: str, tmp_path: Path) -> Path:
    """A report folder of one document, as `mathbode score` leaves it (the site reads results.json)."""
    from mathbode.evaluator.presentation.report import render_report

    folder = tmp_path / "report"
    render_report([json.loads(text)], [], folder)
    return folder


#: Before: `mathbode site` ended in a traceback on each (issue 49, section 2).
TAMPERED = {
    # ValueError: zip() argument 2 is longer than argument 1
    "no lines": (
        lambda m: m.update(lines=[]),
        "scores/multitone/families/similar_triangles/lines: [] should be non-empty",
    ),
    "an interval more than the excited lines": (
        lambda m: m.update(lines=[line for line in m["lines"] if line["kind"] != "excited"][:3]),
        "scores/multitone/families/similar_triangles/bla_intervals: 6 intervals for 0 excited lines",
    ),
    # OverflowError: int too large to convert to float
    "a gain past the float range": (
        lambda m: m["lines"][0].update(gain=10**400),
        "scores/multitone/families/similar_triangles/lines/0/gain: an integer past the float range",
    ),
}


@pytest.mark.parametrize("case", list(TAMPERED), ids=list(TAMPERED))
def test_a_tampered_multitone_section_is_refused_at_read_naming_file_and_field(documents, tmp_path, case):
    from mathbode.cli.report import main as report_cli
    from mathbode.cli.site import main as site_cli

    tamper, said = TAMPERED[case]
    folder = _report_folder(documents["multi-tone stateless"], tmp_path)
    target = folder / "results.json"
    document = json.loads(target.read_text())
    tamper(document["scores"]["multitone"]["families"]["similar_triangles"])
    target.write_text(json.dumps(document))
    for cli, argv in ((site_cli, [str(folder), "--out", str(tmp_path / "site")]), (report_cli, [str(folder)])):
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code != 0 and isinstance(result.exception, SystemExit), result.output
        assert f"{target}: does not follow schema/results.schema.json at {said}" in result.output


# -- the bytes written do not change ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(KINDS), ids=list(KINDS))
def test_a_document_read_into_its_types_writes_the_same_bytes(documents, name):
    """The types are of the dict that exists: read back (sections and all) and written again, every
    kind of document is byte for byte what the scorer wrote."""
    from mathbode.evaluator.results import Rendering, from_document

    r, rendering = from_document(checked(json.loads(documents[name])))
    assert isinstance(rendering, Rendering)
    assert dumps(to_document(r, rendering)) == documents[name]


# -- documents saved by earlier versions still read ---------------------------------------------------


def test_an_older_document_with_fewer_keys_still_reads(documents):
    """Closing the schema refuses what nobody declared, not what an older version left out."""
    document = json.loads(documents["GAP sequential"])
    scores = document["scores"]
    for key in ("accuracy", "answered_rows", "transient_answers", "num_answered", "repeatability"):
        del scores[key]
    for family in scores["dynamics"].values():
        del family["reading"], family["time_constant_interval"]
    for kinds in scores["variants"].values():
        for comparison in kinds.values():
            for key in [k for k in comparison if k not in sections.VariantComparison.__required_keys__]:
                del comparison[key]
    checked(document, "results.json")


def test_a_document_of_the_first_version_that_wrote_them_still_reads_and_renders(tmp_path):
    """Written by mathbode at 65f2b95 (the first results documents): a sequential SMOKE submission
    with chirp and step answers scored with intervals (its traces and tables cut short)."""
    from mathbode.evaluator.presentation.report import render_report
    from mathbode.evaluator.results import read_document

    document, _ = read_document(Path(__file__).parent / "fixtures" / "results_v0.1_65f2b95.json")
    assert {"dynamics", "diagnostics", "intervals", "repeatability"} <= document["scores"].keys()
    render_report([document], [], tmp_path / "report")
    assert (tmp_path / "report" / "report.md").read_text().count("linear_solve") > 0


def test_the_scorer_declares_each_section_once_and_every_one_is_typed():
    from mathbode.evaluator.scorer.scoring import SECTIONS

    names = [name for name, _ in SECTIONS]
    assert len(names) == len(set(names))
    assert set(names) == set(sections.Sections.__annotations__)
