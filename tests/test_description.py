"""A release is described once (issue #49, section 1): validate rebuilds the description of the
release its manifest says was built (families, drives, variants, seed) and compares it whole,
naming the first path that differs; no field is listed, so a field a new dimension adds is
checked too. Every JSON file a release holds is strict JSON, for every kind of release."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import FAMILIES, gap_families, resolve_families
from mathbode.builder.release import build_release, described_family
from mathbode.builder.splits import SplitPlan
from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.build import main as build_cli
from mathbode.cli.reference import BuilderTruth, builder_truth
from mathbode.cli.validate import main as validate_cli
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.description import ABSENT, first_difference
from mathbode.schema.release_hashes import RELEASE_FAMILY_VERSIONS

from .conftest import COMMITTED_DIST
from .test_tampering import rehash

PRIVATE_SEED = "3f9a1c7e5b2d4086a1e9c3b7d5f20864"


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    """One release of every kind the builder makes (one family each, to stay small)."""
    root = tmp_path_factory.mktemp("kinds")
    one = resolve_families("linear_solve")
    out = {name: root / name for name in ("split", "private", "half", "multitone", "gap", "gap-split", "jsonl")}
    build_release(one, out["split"], split=SplitPlan("2026-12"))
    build_release(one, out["private"], split=SplitPlan(PRIVATE_SEED, private=True))
    build_release(one, out["half"], split=SplitPlan(PRIVATE_SEED, private=True, prompts_only=True))
    build_release(one, out["multitone"], drives="multitone")
    paired, _ = gap_families(one)
    build_release(paired, out["gap"])
    build_release(paired, out["gap-split"], split=SplitPlan("2026-12"))
    build_release(one, out["jsonl"], fmt="jsonl", split=SplitPlan("2026-12"))
    return out


def _tampered(source: Path, tmp_path: Path, edit: Callable[[dict], Any]) -> Path:
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    edit(manifest)
    # Python's json writes NaN for a NaN: the edit a careless or hostile tool makes.
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    return folder


def _first_error(folder: Path) -> tuple[str, str, str]:
    result = CliRunner().invoke(validate_cli, [str(folder)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report = validate_dataset(folder, builder_truth)
    first = report.errors[0]
    return first.code, first.field, first.found


def _ms(key: str, value: Any) -> Callable[[dict], None]:
    return lambda m: m["drives"]["multisine"].__setitem__(key, value)


def _tt(key: str, value: Any) -> Callable[[dict], None]:
    return lambda m: m["drives"]["two_tone"].__setitem__(key, value)


PATH_MS = "drives.multisine"
MULTITONE_EDITS: dict[str, tuple[Callable[[dict], Any], str, str]] = {
    "realizations 3": (_ms("realizations", 3), f"{PATH_MS}.realizations", "3, the builder's 4"),
    "realizations 0": (_ms("realizations", 0), f"{PATH_MS}.realizations", "0, the builder's 4"),
    "realizations -1": (_ms("realizations", -1), f"{PATH_MS}.realizations", "-1, the builder's 4"),
    "realizations 1e12": (_ms("realizations", 1e12), f"{PATH_MS}.realizations", "1000000000000.0, the builder's 4"),
    "realizations 4.0": (_ms("realizations", 4.0), f"{PATH_MS}.realizations", "4.0, the builder's 4"),
    "realizations null": (_ms("realizations", None), f"{PATH_MS}.realizations", "null, the builder's 4"),
    "periods 3": (_ms("periods", 3), f"{PATH_MS}.periods", "3, the builder's 2"),
    "a line changed": (
        lambda m: m["drives"]["multisine"]["excited_lines"].__setitem__(5, 17),
        f"{PATH_MS}.excited_lines[5]",
        "17, the builder's 15",
    ),
    "lines emptied": (_ms("excited_lines", []), f"{PATH_MS}.excited_lines[0]", "(absent), the builder's 1"),
    "a million lines": (_ms("excited_lines", [1] * 1_000_000), f"{PATH_MS}.excited_lines[1]", "1, the builder's 3"),
    "a phase changed": (
        lambda m: m["drives"]["multisine"]["phases_turns"]["0"].__setitem__(0, "1/2"),
        f"{PATH_MS}.phases_turns.0[0]",
        '"1/2", the builder\'s "663/1024"',
    ),
    "a phase not a fraction": (
        lambda m: m["drives"]["multisine"]["phases_turns"]["1"].__setitem__(2, 0.25),
        f"{PATH_MS}.phases_turns.1[2]",
        '0.25, the builder\'s "287/1024"',
    ),
    "a realization's phases dropped": (
        lambda m: m["drives"]["multisine"]["phases_turns"].pop("3"),
        f"{PATH_MS}.phases_turns.3",
        '(absent), the builder\'s ["19/128", "37/1024", "661/1024", "303/1024", "435/512", "389/1024"]',
    ),
    "two-tone lines": (_tt("lines", [3, 5]), "drives.two_tone.lines[1]", "5, the builder's 4"),
    "two-tone periods": (_tt("periods", 1), "drives.two_tone.periods", "1, the builder's 2"),
    "two-tone product": (
        lambda m: m["drives"]["two_tone"]["products"].__setitem__("2f1", 8),
        "drives.two_tone.products.2f1",
        "8, the builder's 6",
    ),
    "multisine removed": (lambda m: m["drives"].pop("multisine"), PATH_MS, "(absent), the builder's {"),
    "two-tone removed": (lambda m: m["drives"].pop("two_tone"), "drives.two_tone", "(absent), the builder's {"),
    "a field added": (lambda m: m["drives"].__setitem__("level", 2), "drives.level", "2, the builder's (absent)"),
}


@pytest.mark.parametrize("edit", list(MULTITONE_EDITS), ids=list(MULTITONE_EDITS))
def test_every_edit_of_a_multitone_description_is_named(releases, tmp_path, edit):
    change, field, found = MULTITONE_EDITS[edit]
    code, where, said = _first_error(_tampered(releases["multitone"], tmp_path, change))
    assert (code, where) == ("description", field)
    assert said.startswith(f"{field}: {found}")


@pytest.mark.parametrize(
    ("edit", "field", "found"),
    [
        ("standard", "drives.drives", 'string "standard"'),
        ("MULTITONE", "drives.drives", 'string "MULTITONE"'),
        ("a string", "drives", 'string "multitone"'),
        ("null", "drives", "null"),
        ("drives.drives removed", "drives.drives", "missing"),
    ],
)
def test_a_multitone_release_claiming_other_drives_is_refused_by_its_schema(releases, tmp_path, edit, field, found):
    change = {
        "standard": lambda m: m["drives"].__setitem__("drives", "standard"),
        "MULTITONE": lambda m: m["drives"].__setitem__("drives", "MULTITONE"),
        "a string": lambda m: m.__setitem__("drives", "multitone"),
        "null": lambda m: m.__setitem__("drives", None),
        "drives.drives removed": lambda m: m["drives"].pop("drives"),
    }[edit]
    assert _first_error(_tampered(releases["multitone"], tmp_path, change)) == ("manifest", field, found)


def test_a_multitone_release_without_its_drives_is_told_its_rows_are_of_another_grid(releases, tmp_path):
    folder = _tampered(releases["multitone"], tmp_path, lambda m: m.pop("drives"))
    assert _first_error(folder) == ("drives", "signal_type", "rows on the multitone grid")
    assert validate_dataset(folder, builder_truth).errors[0].expected == (
        "rows on the standard grid, as MANIFEST.json describes the release (drives)"
    )


def test_nan_in_a_manifest_is_not_json(releases, tmp_path):
    folder = _tampered(releases["multitone"], tmp_path, _ms("realizations", math.nan))
    code, field, found = _first_error(folder)
    assert (code, field) == ("manifest", "")
    assert found.startswith("unparseable (NaN is not a JSON value")


GS = "families.linear_solve__gs"


def _gs(change: Callable[[dict], Any]) -> Callable[[dict], Any]:
    return lambda m: change(m["families"]["linear_solve__gs"])


def _swap_names(entry: dict) -> None:
    names = entry["surface"]["names"]
    names["a"], names["b"] = names["b"], names["a"]


GAP_EDITS: dict[str, tuple[Callable[[dict], Any], str, str]] = {
    "names swapped": (_gs(_swap_names), f"{GS}.surface.names.a", '"zPSKIrXC", the builder\'s "IOqPbynX"'),
    "a name with a digit": (
        _gs(lambda e: e["surface"]["names"].__setitem__("x", "x1")),
        f"{GS}.surface.names.x",
        '"x1", the builder\'s "quafzuip"',
    ),
    "markup": (
        _gs(lambda e: e["surface"]["names"].__setitem__("x", "<img src=x onerror=alert(1)>")),
        f"{GS}.surface.names.x",
        '"<img src=x onerror=alert(1)>", the builder\'s "quafzuip"',
    ),
    "terminal escapes": (
        _gs(lambda e: e["surface"]["names"].__setitem__("x", "\x1b]0;pwned\x07\x1b[31mred")),
        f"{GS}.surface.names.x",
        '"\\u001b]0;pwned\\u0007\\u001b[31mred", the builder\'s "quafzuip"',
    ),
    "another seed": (_gs(lambda e: e["surface"].__setitem__("seed", "gap-2")), f"{GS}.surface.seed", '"gap-2", the'),
    "surface removed": (_gs(lambda e: e.pop("surface")), f"{GS}.surface", '(absent), the builder\'s {"seed": "gap-1"'),
    "DL -> GS": (
        lambda m: m["families"]["linear_solve__dl"].__setitem__("variant", "GS"),
        "families.linear_solve__dl.variant",
        '"GS", the builder\'s "DL"',
    ),
    "-> kernel": (_gs(lambda e: e.__setitem__("variant", "kernel")), f"{GS}.variant", '"kernel", the builder\'s "GS"'),
    "variant_of itself": (
        _gs(lambda e: e.__setitem__("variant_of", "linear_solve__gs")),
        f"{GS}.variant_of",
        '"linear_solve__gs", the builder\'s "linear_solve"',
    ),
    "an original made a variant": (
        lambda m: m["families"]["linear_solve"].update(variant_of="linear_solve__gs", variant="DL"),
        "families.linear_solve.variant_of",
        '"linear_solve__gs", the builder\'s (absent)',
    ),
}


@pytest.mark.parametrize("edit", list(GAP_EDITS), ids=list(GAP_EDITS))
def test_every_edit_of_a_paired_description_is_named(releases, tmp_path, edit):
    change, field, found = GAP_EDITS[edit]
    code, where, said = _first_error(_tampered(releases["gap"], tmp_path, change))
    assert (code, where) == ("description", field)
    assert said.startswith(f"{field}: {found}")


@pytest.mark.parametrize(
    ("kind", "change", "field", "found"),
    [
        ("split", lambda m: m.__setitem__("canary", "00000000-0000-5000-8000-000000000000"), "canary", '"0000'),
        ("split", lambda m: m.__setitem__("parquet_writer", "<b>pyarrow</b>"), "parquet_writer", '"<b>pyarrow</b>"'),
        (
            "split",
            lambda m: m.__setitem__("format", "jsonl"),
            "families.linear_solve.files[0]",
            '"data/linear_solve.parquet"',
        ),
        ("split", lambda m: m.__setitem__("note", "\x1b[2J"), "note", '"\\u001b[2J", the builder\'s (absent)'),
        ("split", lambda m: m.pop("split"), "canary", '"'),
        ("jsonl", lambda m: m.__setitem__("prompts_only", False), "prompts_only", "false, the builder's (absent)"),
    ],
    ids=["canary", "writer", "format", "a field added", "split removed", "prompts_only false"],
)
def test_any_other_field_is_compared_too(releases, tmp_path, kind, change, field, found):
    folder = _tampered(releases[kind], tmp_path, change)
    described = [p for p in validate_dataset(folder, builder_truth).errors if p.code == "description"]
    assert [p.field for p in described] == [field]
    assert described[0].found.startswith(f"{field}: {found}")


def test_the_inputs_are_taken_as_asked_and_proved_by_the_rows(releases, tmp_path):
    """The name and the builder's version are what the builder was asked or was: not rebuilt (a
    version other than this validator's is a warning); a seed is proved by the rows drawn from it."""
    renamed = _tampered(releases["split"], tmp_path / "a", lambda m: m.update(name="Another-Name"))
    assert validate_dataset(renamed, builder_truth).valid
    older = _tampered(releases["split"], tmp_path / "b", lambda m: m.update(builder_version="0.0.9"))
    report = validate_dataset(older, builder_truth)
    assert report.valid and [p.code for p in report.warnings] == ["builder-version", "partial"]
    reseeded = _tampered(releases["split"], tmp_path / "c", lambda m: m["split"].update(seed="2027-01"))
    codes = [p.code for p in validate_dataset(reseeded, builder_truth).errors]
    assert codes[0] == "description" and "content" in codes  # the canary, then the rows of another seed
    whole = _tampered(releases["half"], tmp_path / "d", lambda m: m.pop("prompts_only"))
    assert [p.code for p in validate_dataset(whole, builder_truth).errors] == ["columns"]  # no ground_truth


def test_a_version_or_origin_edit_is_named(releases, tmp_path):
    folder = _tampered(releases["split"], tmp_path, lambda m: m["families"]["linear_solve"].update(version="2.0.0"))
    assert _first_error(folder) == (
        "description",
        "families.linear_solve.version",
        'families.linear_solve.version: "2.0.0", the builder\'s "1.0.0"',
    )
    folder = _tampered(releases["gap"], tmp_path, lambda m: m["families"]["linear_solve"].update(origin="acme 1.0"))
    assert _first_error(folder)[1:] == (
        "families.linear_solve.origin",
        'families.linear_solve.origin: "acme 1.0", the builder\'s (absent)',
    )


def test_every_kind_of_release_validates(releases):
    for name, folder in releases.items():
        report = validate_dataset(folder, builder_truth)
        assert report.valid, report.format_text()
        assert not [p for p in report.problems if p.code.startswith("description")], name


def _strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_every_json_file_of_every_kind_of_release_is_strict_json(releases, tmp_path):
    folders = [COMMITTED_DIST, *releases.values()]
    fresh = tmp_path / "canonical"
    build_release(resolve_families("all"), fresh)
    folders.append(fresh)
    for folder in folders:
        for path in [*folder.glob("*.json"), *folder.glob(".*.json")]:
            _strict(path.read_text("utf-8"))
        for path in folder.glob("data/*.jsonl"):
            for line in path.read_text("utf-8").splitlines():
                _strict(line)
    multitone = _strict((releases["multitone"] / "MANIFEST.json").read_text("utf-8"))
    assert "truth" not in multitone["families"]["linear_solve"]  # no sinusoid to read it on, no Infinity


def test_a_family_it_cannot_describe_is_unchecked_not_passed(releases):
    class WithoutTheKernel(BuilderTruth):
        def describe_family(self, family: str) -> dict[str, Any] | None:
            return None if family == "linear_solve__kernel" else super().describe_family(family)

    report = validate_dataset(releases["gap"], WithoutTheKernel())
    assert report.valid
    assert [(p.code, p.field, p.expected, p.found) for p in report.warnings] == [
        (
            "description-unchecked",
            "families.linear_solve__kernel",
            "a family this installation can describe (validate it where the family is installed)",
            "linear_solve__kernel: its version, origin and pairing were not checked: a family this installation "
            "does not know",
        )
    ]


def test_the_canonical_families_are_described_without_the_builder():
    assert {name: described_family(name) for name in FAMILIES} == {
        name: {"version": v} for name, v in RELEASE_FAMILY_VERSIONS.items()
    }
    report = validate_dataset(COMMITTED_DIST)  # no builder: the pinned versions describe it
    assert report.valid and report.warnings == []


def test_first_difference_is_typed_and_ordered():
    assert first_difference({"a": [1, 2], "b": 1}, {"a": [1, 2], "b": 1}) is None
    assert first_difference({"a": 1}, {"a": 1.0}) == ("a", 1, 1.0)
    assert first_difference({"a": True}, {"a": 1}) == ("a", True, 1)
    assert first_difference({"a": math.nan}, {"a": math.nan})[0] == "a"
    assert first_difference({"b": 1, "a": 2}, {"a": 1, "b": 1}) == ("a", 2, 1)
    assert first_difference({"a": 1, "z": 0}, {"a": 1}) == ("z", 0, ABSENT)
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == ("a[1]", ABSENT, 2)
    assert first_difference({"a": {"b": 1}}, {"a": [1]}) == ("a", {"b": 1}, [1])


@pytest.mark.parametrize("command", ["build", "validate", "baseline"])
def test_a_seed_that_is_not_text_is_refused_by_name(command, tmp_path):
    seed = "abc\udcff"  # what Python makes of the byte 0xff in an argument that is not UTF-8
    cli, args = {
        "build": (build_cli, ["--families", "linear_solve", "--seed", seed, "--out", str(tmp_path / "x")]),
        "validate": (validate_cli, [str(COMMITTED_DIST), "--seed", seed]),
        "baseline": (baseline_cli, ["--seed", seed, "-o", str(tmp_path / "b.jsonl")]),
    }[command]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (
        "Invalid value for '--seed': b'abc\\xff' is not text: it holds bytes that are not UTF-8 (or a lone "
        "surrogate). Give the seed as UTF-8 text (the label or hex string the split was built with)."
    ) in result.output
    lone = CliRunner().invoke(cli, [a if a != seed else "x\ud800" for a in args])
    assert lone.exit_code == 2 and "is not text" in lone.output


def test_a_manifest_holding_a_lone_surrogate_is_named(releases, tmp_path):
    folder = _tampered(releases["split"], tmp_path, lambda m: m["split"].__setitem__("seed", "x\ud800"))
    assert _first_error(folder) == ("manifest", "split.seed", "a lone surrogate (an unpaired \\uD800-\\uDFFF)")


@pytest.mark.parametrize(
    ("field", "change"),
    [
        (
            "families.linear_solve.truth.smallest_swing",
            lambda m: m["families"]["linear_solve"]["truth"].update(smallest_swing=5.0),
        ),
        (
            "families.linear_solve.prompts_hash",
            lambda m: m["families"]["linear_solve"].update(prompts_hash="sha256:" + "0" * 64),
        ),
        ("prompts_hash", lambda m: m.update(prompts_hash="sha256:" + "0" * 64)),
    ],
)
def test_what_the_rows_give_is_recomputed_in_a_release_that_is_no_split(tmp_path, field, change):
    """The description leaves out what the rows give: it is recomputed in every release, the
    canonical one too (it was only for splits: these edits of dist/ validated)."""
    folder = _tampered(COMMITTED_DIST, tmp_path, change)
    assert [(p.code, p.field) for p in validate_dataset(folder).errors] == [("split", field)]


def test_a_multitone_family_claiming_truth_facts_is_named(releases, tmp_path):
    claim = {"smallest_swing": 0.0, "harmonic_distortion": 1.0}
    folder = _tampered(releases["multitone"], tmp_path, lambda m: m["families"]["linear_solve"].update(truth=claim))
    assert [(p.code, p.field, p.found) for p in validate_dataset(folder, builder_truth).errors] == [
        ("split", "families.linear_solve.truth", "facts")
    ]


def test_a_surface_file_with_two_signal_types_swapped_is_named_not_a_traceback(releases, tmp_path):
    folder = tmp_path / "gap"
    shutil.copytree(releases["gap"], folder)
    rel = folder / "data/linear_solve__gs.parquet"
    table = pq.read_table(rel)
    signals = table.column("signal_type").to_pylist()
    chirp = signals.index("chirp")
    signals[0], signals[chirp] = signals[chirp], signals[0]
    index = table.schema.get_field_index("signal_type")
    pq.write_table(table.set_column(index, "signal_type", pa.array(signals, pa.string())), rel)
    rehash(folder)
    result = CliRunner().invoke(validate_cli, [str(folder)])
    assert result.exit_code == 1 and not isinstance(result.exception, TypeError), result.output
    report = validate_dataset(folder, builder_truth)
    order = [p for p in report.errors if p.code == "row-order"]
    assert [p.where for p in order] == [
        "data/linear_solve__gs.parquet row 0",
        f"data/linear_solve__gs.parquet row {chirp}",
    ]
    assert order[1].found.startswith(
        "(family='linear_solve__gs', question_id=0, signal_type='sinusoid', amplitude_scale=1.0, "
        "frequency_cycles=1.0, phase_deg=None, time_step=0), where the canonical row is (family=linear_solve__gs, "
        "question_id=0, signal_type=chirp, amplitude_scale=1, time_step=0)"
    )
    assert [p.found for p in report.errors if p.code == "pairing"] == [
        "row 0: signal_type is 'chirp', its original's 'sinusoid' (2 rows differ)"
    ]
