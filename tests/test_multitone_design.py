"""The multi-tone design a practitioner chooses (issue #50, section 1): `mathbode-build --drives
multitone --realizations R --periods P --rms-level L`. The defaults build today's release byte
for byte; a design's rows, manifest record and name follow it, validate checks it whole, the
family check's drive rules hold at the chosen level, and a sweep of levels tells a
nonlinearity (a gain that moves with the level) from a linear gain error (one that does not)."""

from __future__ import annotations

import json
import math
import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release
from mathbode.cli.build import main as build_cli
from mathbode.cli.reference import builder_truth
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.drives import MultitoneDesign
from mathbode.schema.layout import layout

from .test_multitone import _reading, _serve

FAMILY = "linear_solve"
DESIGN = MultitoneDesign(realizations=2, periods=3, level=0.5)


def _build(root: Path, design: MultitoneDesign | None, family: str = FAMILY) -> Path:
    out = root / (f"{design.realizations}x{design.periods}-{design.level:g}" if design else "default")
    build_release([get_family(family)], out, drives="multitone", design=design)
    return out


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("design")


@pytest.fixture(scope="module")
def default(root) -> Path:
    return _build(root, None)


@pytest.fixture(scope="module")
def designed(root) -> Path:
    return _build(root, DESIGN)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(release: Path) -> list[dict[str, Any]]:
    return pq.read_table(release / "data" / f"{FAMILY}.parquet").to_pylist()


def test_the_layouts_design_builds_todays_release_byte_for_byte(root, default, tmp_path):
    # In the library, and through the command with every option spelled out.
    same = _build(tmp_path, MultitoneDesign(4, 2, 1.0))
    assert _files(same) == _files(default)
    out = tmp_path / "cli"
    argv = ["--drives", "multitone", "--families", FAMILY, "--out", str(out), "-q"]
    result = CliRunner().invoke(build_cli, [*argv, "--realizations", "4", "--periods", "2", "--rms-level", "1.000"])
    assert result.exit_code == 0, result.output
    assert _files(out) == _files(default)
    manifest = json.loads((default / "MANIFEST.json").read_text())
    assert "multitone_design" not in manifest and manifest["name"] == "MathBode-Multitone"


def test_a_designed_release_holds_its_rows_and_says_its_design(designed):
    rows = _rows(designed)
    # 3 questions x (2 realizations x 3 periods + 3 two-tone periods) x 64 steps.
    assert len(rows) == 3 * (2 * 3 + 3) * 64 == 1728
    multisine = [r for r in rows if r["signal_type"] == "multisine"]
    assert sorted({r["phase_deg"] for r in multisine}) == [0.0, 1.0]  # the realization
    assert sorted({r["frequency_cycles"] for r in rows}) == [0.0, 1.0, 2.0]  # the period
    assert {r["amplitude_scale"] for r in rows} == {0.5}
    manifest = json.loads((designed / "MANIFEST.json").read_text())
    assert manifest["name"] == "MathBode-Multitone-2x3-rms0.5"
    assert manifest["multitone_design"] == {"realizations": 2, "periods": 3, "rms_level": 0.5}
    drives = manifest["drives"]
    assert (drives["multisine"]["realizations"], drives["multisine"]["periods"]) == (2, 3)
    assert drives["two_tone"]["periods"] == 3 and drives["amplitude_scales"] == [0.5]
    assert list(drives["multisine"]["phases_turns"]) == ["0", "1"]
    card = (designed / "README.md").read_text()
    assert "2 realizations (independent phases phi_k), each asked for 3 periods" in card


def test_the_level_scales_the_drive(designed, default):
    # p_t = p0 + L epsilon u_t, rounded to the family's decimals: at level 0.5 every multisine
    # deviation is half the level-1 one, within one rounding step of each (the same realization's phases).
    fam = get_family(FAMILY)
    step, p0 = 10.0**-fam.decimals, float(fam.p_center)

    def deviations(release):
        return {
            (r["question_id"], r["phase_deg"], r["time_step"]): r["p_value"] - p0
            for r in _rows(release)
            if r["signal_type"] == "multisine" and r["frequency_cycles"] == 0.0
        }

    half, whole = deviations(designed), deviations(default)
    assert len(half) == 3 * 2 * 64
    assert max(abs(half[k] - 0.5 * whole[k]) for k in half) <= step * (1 + 1e-9)


def test_a_designed_release_validates_with_its_content_checked(designed, tmp_path):
    report = validate_dataset(designed, builder_truth)
    # Valid, its content checked (a release of one family is partial, nothing else is said).
    assert report.valid and [w.code for w in report.warnings] == ["partial"], report.format_text()
    # Its content is the builder's rows for that design: one truth changed is named.
    folder = tmp_path / "edited"
    shutil.copytree(designed, folder)
    table = pq.read_table(folder / "data" / f"{FAMILY}.parquet")
    truth = table.column("ground_truth").to_pylist()
    truth[700] += 1e-3
    pq.write_table(
        table.set_column(table.schema.get_field_index("ground_truth"), "ground_truth", [truth]),
        folder / "data" / f"{FAMILY}.parquet",
    )
    report = validate_dataset(folder, builder_truth)
    assert not report.valid
    assert any("row 700" in e.where for e in report.errors if e.code == "content"), report.format_text()


def test_a_lone_data_file_of_a_design_validates(designed):
    # A data file read alone says its design by its rows, and its content is recomputed for it.
    data = designed / "data" / f"{FAMILY}.parquet"
    result = CliRunner().invoke(validate_cli, [str(data)])
    assert result.exit_code == 0, result.output
    assert "valid dataset (0 error(s), 0 warning(s))" in result.output


def _edit(folder: Path, tmp_path: Path, change: Callable[[dict], Any]) -> Path:
    out = tmp_path / "tampered"
    shutil.copytree(folder, out)
    manifest = json.loads((out / "MANIFEST.json").read_text())
    change(manifest)
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    return out


def _design(key: str, value: Any) -> Callable[[dict], None]:
    return lambda m: m["multitone_design"].__setitem__(key, value)


EDITS: dict[str, tuple[Callable[[dict], Any], str, str]] = {
    # The record is the request: the description rebuilt from it differs from the drives it describes.
    "realizations 3": (_design("realizations", 3), "drives.multisine.realizations", "2, the builder's 3"),
    "periods 2": (_design("periods", 2), "drives.multisine.periods", "3, the builder's 2"),
    "level 0.25": (_design("rms_level", 0.25), "drives.amplitude_scales[0]", "0.5, the builder's 0.25"),
    "level as an integer": (_design("rms_level", 2), "drives.amplitude_scales[0]", "0.5, the builder's 2.0"),
    # A record that says no design is said as itself.
    "realizations 33": (_design("realizations", 33), "multitone_design.realizations", "33: realizations = 33: a whole"),
    "realizations 2.0": (_design("realizations", 2.0), "multitone_design.realizations", "2.0: realizations = 2.0"),
    "realizations true": (_design("realizations", True), "multitone_design.realizations", "true: realizations = True"),
    "periods null": (_design("periods", None), "multitone_design.periods", "null: periods = None"),
    "level 1e300": (_design("rms_level", 1e300), "multitone_design.rms_level", "1e+300: rms level = 1e+300"),
    "level a string": (_design("rms_level", "0.5"), "multitone_design.rms_level", "\"0.5\": rms level = '0.5'"),
    "level 0.0005": (_design("rms_level", 0.0005), "multitone_design.rms_level", "0.0005: rms level = 0.0005"),
    "a field added": (_design("seed", 1), "multitone_design.seed", "1, the builder's (absent)"),
    # No record: the builder's drives are the layout's.
    "the record removed": (lambda m: m.pop("multitone_design"), "drives.amplitude_scales[0]", "0.5, the builder's 1.0"),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_every_edit_of_a_design_is_named(designed, tmp_path, edit):
    change, field, found = EDITS[edit]
    folder = _edit(designed, tmp_path, change)
    result = CliRunner().invoke(validate_cli, [str(folder)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report = validate_dataset(folder, builder_truth)
    first = report.errors[0]
    assert (first.code, first.field) == ("description", field), report.format_text()
    assert first.found.startswith(f"{field}: {found}"), first.found


def test_a_record_that_is_no_object_is_refused_by_the_manifest_schema(designed, tmp_path):
    folder = _edit(designed, tmp_path, lambda m: m.__setitem__("multitone_design", [2, 3, 0.5]))
    first = validate_dataset(folder, builder_truth).errors[0]
    assert (first.code, first.field, first.expected, first.found) == (
        "manifest",
        "multitone_design",
        "a JSON object",
        "[2, 3, 0.5]",
    )


def test_the_layouts_design_written_out_is_no_record_the_builder_writes(default, tmp_path):
    # The builder writes no record of the layout's design, so one added is a difference, not a no-op.
    record = {"realizations": 4, "periods": 2, "rms_level": 1.0}
    folder = _edit(default, tmp_path, lambda m: m.__setitem__("multitone_design", record))
    first = validate_dataset(folder, builder_truth).errors[0]
    assert (first.code, first.field) == ("description", "multitone_design")
    assert first.found.endswith("the builder's (absent)")


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--realizations", "0", "realizations = 0: a whole number from 1 to 32"),
        ("--realizations", "33", "realizations = 33: a whole number from 1 to 32"),
        ("--periods", "0", "periods = 0: a whole number from 1 to 16"),
        ("--periods", "17", "periods = 17: a whole number from 1 to 16"),
        ("--rms-level", "0", "rms level = 0.0: a number from 0.01 to 10 with at most 3 decimals"),
        ("--rms-level", "-1", "rms level = -1.0: a number from 0.01 to 10"),
        ("--rms-level", "10.5", "rms level = 10.5: a number from 0.01 to 10"),
        ("--rms-level", "0.0005", "rms level = '0.0005': a number from 0.01 to 10"),
        ("--rms-level", "abc", "rms level = 'abc': a number from 0.01 to 10"),
        ("--rms-level", "nan", "rms level = 'nan': a number from 0.01 to 10"),
        ("--rms-level", "inf", "rms level = 'inf': a number from 0.01 to 10"),
        ("--rms-level", "1e400", "rms level = '1e400': a number from 0.01 to 10"),
    ],
)
def test_a_design_out_of_range_is_refused_naming_the_option(tmp_path, option, value, said):
    out = tmp_path / "out"
    argv = ["--drives", "multitone", "--families", FAMILY, "--out", str(out), option, value]
    result = CliRunner().invoke(build_cli, argv)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {option}: {said}" in " ".join(result.output.split())
    assert not out.exists()


def test_a_design_asks_for_the_multitone_drives(tmp_path):
    result = CliRunner().invoke(build_cli, ["--families", FAMILY, "--out", str(tmp_path / "o"), "--periods", "4"])
    assert result.exit_code == 2
    assert "Invalid value for --periods: designs the multi-tone drives: give --drives multitone too" in " ".join(
        result.output.split()
    )


def _build_cli(out: Path, level: str, family: str = FAMILY) -> Any:
    argv = ["--drives", "multitone", "--families", family, "--out", str(out), "-q", "--rms-level", level]
    return CliRunner().invoke(build_cli, argv)


def test_the_drive_may_not_clip_at_the_chosen_level(tmp_path):
    # The family check's clipping rule at the multi-tone drives' peak: the message names the
    # highest level that fits, and that level builds while the next one up does not.
    result = _build_cli(tmp_path / "loud", "8")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"family '{FAMILY}' cannot be driven so: [clipping] at --rms-level 8 the multi-tone drives reach" in said
    highest = Decimal(re.search(r"Choose --rms-level ([0-9.]+) or lower", said).group(1))
    assert _build_cli(tmp_path / "at", str(highest)).exit_code == 0
    rows = pq.read_table(tmp_path / "at" / "data" / f"{FAMILY}.parquet").to_pylist()
    fam = get_family(FAMILY)
    lo, hi = (float(x) for x in fam.p_range)
    # Nothing clipped: the drive's every value inside the range, and some close to its edge.
    assert all(lo <= r["p_value"] <= hi for r in rows)
    assert min(min(r["p_value"] - lo, hi - r["p_value"]) for r in rows) < 0.01 * (hi - lo)
    above = _build_cli(tmp_path / "above", str(highest + Decimal("0.001")))
    assert above.exit_code == 2 and "[clipping]" in above.output
    assert not (tmp_path / "above").exists()


def test_the_drive_must_move_p_at_the_chosen_level(tmp_path):
    result = _build_cli(tmp_path / "quiet", "0.01")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "[resolution] at --rms-level 0.01 the multi-tone drives' RMS moves p by" in said
    lowest = Decimal(re.search(r"choose --rms-level ([0-9.]+) or higher", said).group(1))
    assert _build_cli(tmp_path / "at", str(lowest)).exit_code == 0
    assert _build_cli(tmp_path / "below", str(lowest - Decimal("0.001"))).exit_code == 2


@pytest.fixture(scope="module")
def levels(root) -> dict[float, Path]:
    return {level: _build(root, MultitoneDesign(4, 2, level)) for level in (0.5, 1.0, 2.0)}


def test_a_sweep_of_levels_tells_a_nonlinearity_from_a_gain_error(levels, tmp_path):
    # poly-0-0.1 (t + s 0.1 u^3, one map of the answer at every level: the stand-in's scale is
    # the spread at level 1) through `mathbode run` and `score`: its BLA gain grows with the
    # level and its odd distortion by 20 log10(4) = 12 dB a doubling (a cubic term's relative
    # level goes as L^2); the truncation floor and the even terms of the family's own answer
    # blur that by at most 2 dB here.
    readings, linear = {}, {}
    for level, release in levels.items():
        rows = pq.read_table(release / "data" / f"{FAMILY}.parquet").to_pylist()
        server = _serve(rows)
        try:
            (tmp_path / str(level)).mkdir()
            readings[level] = _reading(server, release, tmp_path / str(level), "poly-0-0.1")
            linear[level] = _reading(server, release, tmp_path / str(level), "gain-0.8")
        finally:
            server.stop()
    gains = {level: [line["gain"] for line in r["lines"] if line["kind"] == "excited"] for level, r in readings.items()}
    mean = {level: sum(g) / len(g) for level, g in gains.items()}
    assert 1.0 < mean[0.5] < mean[1.0] < mean[2.0]
    assert mean[2.0] - 1 > 10 * (mean[0.5] - 1)  # 1 + 3 O sigma^2: 16 times at 4 times the level
    odd = {level: r["odd_added_db"] for level, r in readings.items()}
    assert 10 < odd[1.0] - odd[0.5] < 14 and 10 < odd[2.0] - odd[1.0] < 14, odd
    # A linear gain error about each question's centre (the stand-in's gain-0.8) reads the same
    # gain at every level, and no distortion.
    for level, reading in linear.items():
        gain = [line["gain"] for line in reading["lines"] if line["kind"] == "excited"]
        assert all(abs(g - 0.8) < 1e-3 for g in gain), (level, gain)
        assert reading["verdict"].startswith("linear within the floor"), (level, reading["verdict"])


def _linear_gain(release: Path, folder: Path, g: float) -> list[float]:
    """The BLA gain at the excited lines of centre + g (t - centre), each question's centre its mean truth."""
    folder.mkdir()
    rows = pq.read_table(release / "data" / f"{FAMILY}.parquet").to_pylist()
    centres: dict[int, list[float]] = {}
    for r in rows:
        centres.setdefault(r["question_id"], []).append(r["ground_truth"])
    mean = {q: math.fsum(v) / len(v) for q, v in centres.items()}
    keys = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")
    lines = [
        {
            **{k: r[k] for k in keys},
            "prediction": round(mean[r["question_id"]] + g * (r["ground_truth"] - mean[r["question_id"]]), 6),
        }
        for r in rows
    ]
    sub = folder / "linear.jsonl"
    sub.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = CliRunner().invoke(
        score_cli, [str(sub), "--reference", str(release), "--out", str(folder / "r"), "--no-plots"]
    )
    assert result.exit_code == 0, result.output
    reading = json.loads((folder / "r" / "scores.json").read_text())["multitone"]["families"][FAMILY]
    return [line["gain"] for line in reading["lines"] if line["kind"] == "excited"]


def test_the_scorer_reads_a_design_from_its_release(designed, tmp_path):
    # The exact answers on a design of 2 realizations x 3 periods: 3 x 2 experiments, linear.
    gain = _linear_gain(designed, tmp_path / "truth", 1.0)
    assert all(abs(g - 1) < 1e-4 for g in gain)
    reading = json.loads((tmp_path / "truth" / "r" / "scores.json").read_text())["multitone"]["families"][FAMILY]
    assert reading["experiments"] == 6
    assert layout("multitone", None, DESIGN).multitone.realizations == 2


def test_every_command_reads_the_design_from_its_release(designed, tmp_path):
    # prompts, batch write and read, and a sequential run (its run-in on the design's period):
    # each names the design's 1,728 rows, and the exact answers read linear through each.
    from mathbode.cli.batch import main as batch_cli
    from mathbode.cli.prompts import main as prompts_cli
    from mathbode.cli.run import main as run_cli
    from mathbode.schema.keys import row_key

    from .fixtures.stub_batch import answer_batch
    from .test_multitone_commands import ENV, _scored

    rows = _rows(designed)
    out = tmp_path / "requests.jsonl"
    result = CliRunner().invoke(prompts_cli, ["--preset", "ALL", "--reference", str(designed), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    by_key = {row_key(r): r["prompt"] for r in rows}
    assert len(lines) == 1728 and all(line["prompt"] == by_key[row_key(line)] for line in lines)

    server = _serve(rows)
    try:
        folder = tmp_path / "batch"
        argv = ["write", "--reference", str(designed), "--preset", "ALL", "--model", "truth", "-o", str(folder)]
        assert CliRunner().invoke(batch_cli, argv, env=ENV).exit_code == 0
        answer_batch(
            server.base_url, sorted(folder.glob("requests*.jsonl")), tmp_path / "o.jsonl", tmp_path / "e.jsonl"
        )
        batch = tmp_path / "from-batch.jsonl"
        argv = ["read", str(folder), str(tmp_path / "o.jsonl"), str(tmp_path / "e.jsonl"), "-o", str(batch)]
        result = CliRunner().invoke(batch_cli, [*argv, "--reference", str(designed)], env=ENV)
        assert result.exit_code == 0, result.output
        sequential = tmp_path / "sequential.jsonl"
        argv = ["--base-url", server.base_url, "--model", "truth", "-o", str(sequential), "--reference", str(designed)]
        argv += ["--preset", "ALL", "--protocol", "sequential", "--concurrency", "8"]
        result = CliRunner().invoke(run_cli, argv, env=ENV)
        assert result.exit_code == 0, result.output
    finally:
        server.stop()
    # What the commands wrote of the run is strict JSON (no NaN or Infinity a strict reader refuses).
    for written in (folder / "manifest.json", sequential.with_name("sequential.run.json")):
        json.loads(written.read_text(), parse_constant=lambda name, at=written.name: pytest.fail(f"{at}: {name}"))
    for name, submission in (("batch", batch), ("sequential", sequential)):
        (tmp_path / f"score-{name}").mkdir()
        scores = _scored(tmp_path / f"score-{name}", submission, designed)
        reading = scores["multitone"]["families"][FAMILY]
        assert scores["multitone"]["rows"] == scores["multitone"]["answers"] == 1728, name
        assert reading["experiments"] == 6 and reading["verdict"].startswith("linear within the floor"), reading
        assert all(abs(line["gain"] - 1) < 1e-5 for line in reading["lines"] if line["kind"] == "excited")


def test_family_check_says_the_levels_that_fit_and_a_family_no_level_drives_is_refused(tmp_path):
    import dataclasses

    from mathbode.builder.families.check import multitone_drive, multitone_levels
    from mathbode.cli.family import main as family_cli

    result = CliRunner().invoke(family_cli, ["check", "similar_triangles"])
    assert result.exit_code == 0, result.output
    assert "  multi-tone levels that fit (--rms-level, 4 realizations): 0.142 to 5.401" in result.output.splitlines()
    plan = layout("multitone").multitone
    # The levels said are the build's: the highest builds, as the clipping test shows for linear_solve.
    assert multitone_levels(get_family("similar_triangles"), plan) == (Decimal("0.142"), Decimal("5.401"))
    # Whole numbers only (decimals 0): ten steps of p at the drives' RMS need a level the range cannot hold.
    coarse = dataclasses.replace(get_family(FAMILY), decimals=0)
    lowest, highest = multitone_levels(coarse, plan)
    assert lowest > highest
    (finding,) = multitone_drive(coarse, plan)
    assert finding.code == "levels" and f"above {highest} the multi-tone drives clip, below {lowest}" in finding.message
