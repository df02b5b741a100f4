"""`mathbode-validate`: releases, data files and submissions; every problem named precisely."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.cli.validate import main as validate_cli
from mathbode.core.errors import UsageError
from mathbode.schema import layout, validate_dataset, validate_path, validate_submission
from mathbode.schema.keys import preset_keys

from .conftest import COMMITTED_DIST

LAY = layout()
KEY = list(LAY.key)


def _lines(table: pa.Table, **extra) -> list[dict]:
    out = []
    for row in table.select(KEY + ["ground_truth"]).to_pylist():
        truth = row.pop("ground_truth")
        out.append({**row, "response": f"[answer_start] {truth:.6f} [answer_end]", **extra})
    return out


def _write(path: Path, objs: list, raw_lines: list[str] | None = None) -> Path:
    text = "".join(json.dumps(o) + "\n" for o in objs) if raw_lines is None else "".join(raw_lines)
    path.write_text(text)
    return path


@pytest.fixture
def sub_file(tables, tmp_path):
    """A valid submission of one family, 64 lines (one sweep) per default."""

    def make(rows: int = 64, family: str = "linear_solve", **extra):
        return _write(tmp_path / "pred.jsonl", _lines(tables[family].slice(0, rows), **extra))

    return make


# -- releases -------------------------------------------------------------------------------
def test_committed_release_is_valid():
    report = validate_dataset(COMMITTED_DIST)
    assert report.valid, report.format_text()
    assert report.summary["rows"] == {f: 9_408 for f in LAY.families}
    assert report.format_text().splitlines()[0] == f"{COMMITTED_DIST}: valid dataset (0 error(s), 0 warning(s))"


def test_single_family_parquet_is_valid(built):
    report = validate_path(built / "data/linear_system.parquet")
    assert report.kind == "dataset" and report.valid


def _copy(built: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "rel"
    shutil.copytree(built, dst)
    return dst


def _codes(report) -> set[str]:
    return {p.code for p in report.errors}


def test_a_missing_row_is_an_incomplete_sweep_and_a_wrong_count(tables, tmp_path):
    t = tables["linear_solve"]
    path = tmp_path / "ls.parquet"
    pq.write_table(pa.concat_tables([t.slice(0, 5), t.slice(6)]), path)
    report = validate_dataset(path)
    text = report.format_text()
    assert _codes(report) == {"incomplete-sweep", "row-count"}
    assert (
        "all 64 steps of sweep (family=linear_solve, question_id=0, signal_type=sinusoid, "
        "amplitude_scale=0.5, frequency_cycles=1, phase_deg=0)"
    ) in text
    assert "ls.parquet: found 63 steps; missing 5" in text
    assert "expected 9,408 rows of linear_solve" in text and "found 9,407" in text


def test_duplicate_rows_and_bad_values_are_named_by_row(tables, tmp_path):
    t = tables["linear_solve"]
    truth = t.column("ground_truth").to_pylist()
    truth[7] = float("nan")
    steps = t.column("time_step").to_pylist()
    steps[9] = 64
    t = t.set_column(9, "ground_truth", pa.array(truth)).set_column(6, "time_step", pa.array(steps))
    path = tmp_path / "ls.parquet"
    pq.write_table(pa.concat_tables([t, t.slice(100, 1)]), path)
    report = validate_dataset(path)
    found = {(p.code, p.where, p.field) for p in report.errors}
    assert ("non-finite", "ls.parquet row 7", "ground_truth") in found
    assert ("schema", "ls.parquet row 9", "time_step") in found
    assert ("duplicate-key", "ls.parquet row 9408", "") in found


def test_wrong_column_order_and_types(tables, tmp_path):
    t = tables["similar_triangles"]
    swapped = t.select([1, 0] + list(range(2, 10)))
    pq.write_table(swapped, tmp_path / "a.parquet")
    report = validate_dataset(tmp_path / "a.parquet")
    assert [p.code for p in report.errors] == ["columns"]
    assert report.errors[0].expected.startswith("columns family, question_id, signal_type")
    narrow = t.set_column(1, "question_id", pc.cast(t.column("question_id"), pa.int32()))
    pq.write_table(narrow, tmp_path / "b.parquet")
    report = validate_dataset(tmp_path / "b.parquet")
    assert [(p.code, p.field, p.expected, p.found) for p in report.errors] == [
        ("column-type", "question_id", "Arrow type int64", "int32")
    ]


def test_tampered_file_fails_its_checksum_and_content_hash(built, tmp_path, tables):
    rel = _copy(built, tmp_path)
    t = tables["ratio_saturation"]
    truth = t.column("ground_truth").to_pylist()
    truth[0] += 1e-9
    pq.write_table(t.set_column(9, "ground_truth", pa.array(truth)), rel / "data/ratio_saturation.parquet")
    report = validate_dataset(rel)
    assert {"checksum", "content-hash"} <= _codes(report)
    assert any(p.where == "data/ratio_saturation.parquet" and p.field == "sha256" for p in report.errors)


def test_a_tampered_files_message_says_which_hash_is_which(built, tmp_path, tables):
    """Read as 'MANIFEST.json: found sha256:47a9...' before, though 47a9 was the edited rows' hash."""
    rel = _copy(built, tmp_path)
    t = tables["linear_solve"]
    truth = t.column("ground_truth").to_pylist()
    truth[5] += 1.0
    pq.write_table(t.set_column(9, "ground_truth", pa.array(truth)), rel / "data/linear_solve.parquet")
    recorded = json.loads((rel / "MANIFEST.json").read_text())["families"]["linear_solve"]["content_hash"]
    problem = next(p for p in validate_dataset(rel).errors if p.field == "families.linear_solve.content_hash")
    assert problem.where == "data/linear_solve.parquet"
    assert problem.expected == f"{recorded}, as MANIFEST.json records it"
    assert problem.found.endswith(", the hash of the rows this file holds") and recorded not in problem.found


def test_card_configs_must_point_at_existing_files(built, tmp_path):
    rel = _copy(built, tmp_path)
    card = (rel / "README.md").read_text().replace("data/linear_system.parquet", "data/linear_systems.parquet")
    (rel / "README.md").write_text(card)
    report = validate_dataset(rel)
    card_problems = [p for p in report.errors if p.code == "card"]
    assert card_problems and card_problems[0].field == "configs[all]"
    assert card_problems[0].found == "data/linear_systems.parquet (missing)"


def test_truncated_and_foreign_parquet_files(built, tmp_path):
    data = (built / "data/linear_solve.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    report = validate_dataset(tmp_path / "cut.parquet")
    assert [p.code for p in report.errors] == ["unreadable"]
    assert report.errors[0].expected == "a readable parquet file"
    pq.write_table(pa.table({"x": [1, 2]}), tmp_path / "other.parquet")
    report = validate_dataset(tmp_path / "other.parquet")
    assert [(p.code, p.found) for p in report.errors] == [("columns", "x")]


def test_missing_manifest_and_card_are_errors(built, tmp_path):
    rel = _copy(built, tmp_path)
    (rel / "MANIFEST.json").unlink()
    (rel / "README.md").unlink()
    report = validate_dataset(rel)
    assert [(p.code, p.found) for p in report.errors] == [("manifest", "no MANIFEST.json"), ("card", "no README.md")]


def test_missing_folder_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file or folder"):
        validate_dataset(tmp_path / "nope")


# -- submissions ------------------------------------------------------------------------------
def test_valid_submission_reports_coverage(sub_file):
    report = validate_submission(sub_file(64 * 4, model="m1"))
    assert report.valid
    cov = report.summary["coverage"]
    assert cov["families"]["linear_solve"] == {"rows": 256, "of": 9_408}
    # The first four sweeps are q0, s=0.5, f=1 (phases 0/120/240) and f=2 phase 0.
    assert cov["presets"]["MVP_PLUS"]["rows"] == 128
    assert cov["presets_complete"] == []
    assert report.summary["model"] == "m1"


def test_a_smoke_submission_covers_smoke_completely(tables, tmp_path):
    wanted = preset_keys("SMOKE")
    objs = []
    for table in tables.values():
        for line in _lines(table):
            key = (
                line["family"],
                line["question_id"],
                line["signal_type"],
                line["amplitude_scale"],
                line["frequency_cycles"],
                line["phase_deg"],
                line["time_step"],
            )
            if key in wanted:
                objs.append(line)
    assert len(objs) == 5 * 2 * 2 * 64
    report = validate_submission(_write(tmp_path / "smoke.jsonl", objs))
    assert report.valid
    assert report.summary["coverage"]["presets_complete"] == ["SMOKE"]
    assert "presets fully covered: SMOKE" in report.format_text()


def test_chirp_and_step_keys_ignore_frequency_and_phase(tables, tmp_path):
    chirp = [line for line in _lines(tables["linear_solve"]) if line["signal_type"] == "chirp"][:3]
    chirp[0]["frequency_cycles"] = 99.0
    chirp[1]["phase_deg"] = 0.0
    assert validate_submission(_write(tmp_path / "c.jsonl", chirp)).valid


GOLDEN = [
    ("empty file", [""], [("empty", "file", "", "one JSON object per line", "an empty file")]),
    (
        "not json",
        ['{"family": \n'],
        [("json", "line 1", "", "one JSON object", "Expecting value at column 12: '{\"family\":'")],
    ),
    (
        "array",
        ['[{"family": "linear_solve"}]\n'],
        [
            (
                "not-object",
                "line 1",
                "",
                "a JSON object (JSON Lines: one object per line, not one array)",
                "a JSON array",
            )
        ],
    ),
    (
        "nan literal",
        ['{"prediction": NaN}\n'],
        [("non-finite", "line 1", "", "finite numbers (use null for no answer)", "NaN")],
    ),
    (
        "infinity literal",
        ['{"prediction": -Infinity}\n'],
        [("non-finite", "line 1", "", "finite numbers (use null for no answer)", "-Infinity")],
    ),
]


@pytest.mark.parametrize("name, lines, expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_bad_files(tmp_path, name, lines, expected):
    report = validate_submission(_write(tmp_path / "x.jsonl", [], lines))
    assert [(p.code, p.where, p.field, p.expected, p.found) for p in report.errors] == expected


def test_non_utf8_and_binary_garbage(tmp_path):
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b'{"a": "\xff"}\n' + bytes(range(256)) * 4)
    report = validate_submission(path)
    assert not report.valid
    assert report.errors[0].code == "encoding" and report.errors[0].found == "byte 0xff at column 8"


def test_numbers_as_strings_and_schema_problems_name_the_field(sub_file, tmp_path, tables):
    objs = _lines(tables["linear_solve"].slice(0, 3))
    objs[0]["time_step"] = "0"
    objs[1]["prediction"] = 1.5  # both response and prediction
    del objs[2]["family"]
    report = validate_submission(_write(tmp_path / "s.jsonl", objs))
    got = [(p.where, p.field, p.expected, p.found) for p in report.errors]
    assert ("line 1", "time_step", "a JSON integer", 'string "0"') in got
    assert ("line 2", "", "exactly one of 'response' or 'prediction'", "both") in got
    assert ("line 3", "family", "the field to be present", "missing") in got


def test_unknown_and_duplicate_keys_and_mixed_models(tables, tmp_path):
    objs = _lines(tables["linear_solve"].slice(0, 2), model="a")
    dup = dict(objs[0])
    ghost = dict(objs[0], amplitude_scale=1.0, frequency_cycles=3.0)  # 3 cycles is not in the grid
    objs += [dup, ghost, dict(objs[1], time_step=5, model="b", temperature=0)]
    report = validate_submission(_write(tmp_path / "s.jsonl", objs))
    got = [(p.code, p.where, p.found) for p in report.errors]
    assert (
        "duplicate-key",
        "line 3",
        "(family=linear_solve, question_id=0, signal_type=sinusoid, amplitude_scale=0.5, "
        "frequency_cycles=1, phase_deg=0, time_step=0) again (first on line 1)",
    ) in got
    assert ("schema", "line 4", "3.0") in got
    assert ("model", "file", "'a' (first on line 1), 'b' (first on line 5)") in got
    assert [(p.code, p.field) for p in report.warnings] == [("unknown-field", "temperature")]


def test_a_50_mb_line_is_reported_not_fatal(tmp_path, tables):
    obj = _lines(tables["linear_solve"].slice(0, 1))[0]
    obj["response"] = "x" * (50 * 1024 * 1024)
    path = _write(tmp_path / "big.jsonl", [obj, dict(obj, time_step="1")])
    report = validate_submission(path)
    assert report.summary["predictions"] == 1
    assert [(p.where, p.field) for p in report.errors] == [("line 2", "time_step")]


def test_repeated_problems_are_counted_and_the_first_few_shown(tmp_path, tables):
    objs = [dict(o, question_id=7) for o in _lines(tables["linear_solve"].slice(0, 10))]
    report = validate_submission(_write(tmp_path / "s.jsonl", objs))
    text = report.format_text()
    # Any question_id a release of --questions N may hold passes the schema; the key says it is none of this split's.
    assert "error (unknown-key): expected the key of a row of the canonical split [10 times, first 3 shown]" in text
    assert text.count("question_id=7") == 3


# -- the command --------------------------------------------------------------------------------
def test_cli_exit_codes_and_json(sub_file, tmp_path):
    good = sub_file(64)
    result = CliRunner().invoke(validate_cli, [str(good), str(COMMITTED_DIST)])
    assert result.exit_code == 0, result.output
    bad = _write(tmp_path / "bad.jsonl", [], ["nope\n"])
    result = CliRunner().invoke(validate_cli, ["--json", str(bad)])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["valid"] is False
    assert doc["reports"][0]["problems"][0] == {
        "severity": "error",
        "code": "json",
        "field": "",
        "expected": "one JSON object",
        "count": 1,
        "examples": [{"where": "line 1", "found": "Expecting value at column 1: 'nope'"}],
    }
    result = CliRunner().invoke(validate_cli, [str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.output == f"Error: {tmp_path / 'missing'}: no such file or folder.\n"
    assert CliRunner().invoke(validate_cli, []).exit_code == 2


def test_a_jsonl_release_validates_as_a_partial_dataset(tmp_path):
    from mathbode.builder import get_family
    from mathbode.builder.release import build_release

    build_release([get_family("linear_solve")], tmp_path / "rel", fmt="jsonl")
    report = validate_path(tmp_path / "rel")
    assert report.valid
    assert [(p.code, p.found) for p in report.warnings] == [
        ("partial", "missing ratio_saturation, exponential_interest, linear_system, similar_triangles")
    ]
    assert validate_path(tmp_path / "rel/data/linear_solve.jsonl").kind == "dataset"


@pytest.mark.parametrize(
    "edit, field, expected",
    [
        (lambda m: m.update(files=[]), "files", "a JSON object"),
        (lambda m: m["files"]["README.md"].update(sha256=5), "files.README.md.sha256", "a JSON string"),
        (lambda m: m["families"].update({"Cubic Roots": m["families"]["linear_solve"]}), "families", "pattern"),
        (
            lambda m: m["families"]["linear_solve"].pop("files"),
            "families.linear_solve.files",
            "the field to be present",
        ),
        (lambda m: m.update(content_hash="md5:x"), "content_hash", 'pattern: "^sha256:[0-9a-f]{64}$"'),
    ],
    ids=["files-not-object", "sha-not-string", "badly-named-family", "family-without-files", "bad-hash"],
)
def test_malformed_manifests_are_reported_not_raised(built, tmp_path, edit, field, expected):
    rel = _copy(built, tmp_path)
    manifest = json.loads((rel / "MANIFEST.json").read_text())
    edit(manifest)
    (rel / "MANIFEST.json").write_text(json.dumps(manifest))
    report = validate_dataset(rel)
    problems = [p for p in report.errors if p.code == "manifest"]
    assert problems and problems[0].field == field and problems[0].expected.startswith(expected), problems


# -- what a newcomer's first files get -------------------------------------------------------------
KEY_LINE = (
    '"question_id": 0, "signal_type": "sinusoid", "amplitude_scale": 0.5, "frequency_cycles": 4, '
    '"phase_deg": 0, "time_step": 0'
)


def _problems(report) -> list[tuple[str, str, str, str]]:
    return [(p.code, p.where, p.field, p.found) for p in report.problems]


def test_a_csv_file_gets_one_message_saying_so(tmp_path):
    path = tmp_path / "preds.csv"
    path.write_text("family,question_id,signal_type,time_step,prediction\n" + "linear_solve,0,sinusoid,0,1\n" * 50)
    report = validate_submission(path)
    assert _problems(report) == [("csv", "line 1", "", "'family,question_id,signal_type,time_step,prediction'")]
    assert "this looks like CSV" in report.format_text()


def test_gzipped_submissions_and_a_byte_order_mark_are_read(tmp_path):
    import gzip

    line = f'{{"family": "linear_solve", {KEY_LINE}, "prediction": 1}}\n'.encode()
    (tmp_path / "p.jsonl.gz").write_bytes(gzip.compress(b"\xef\xbb\xbf" + line))
    report = validate_path(tmp_path / "p.jsonl.gz")
    assert report.valid and report.summary["predictions"] == 1
    (tmp_path / "bad.jsonl.gz").write_bytes(gzip.compress(line)[:-6])
    assert _codes(validate_path(tmp_path / "bad.jsonl.gz")) == {"gzip"}


def test_a_misspelt_family_gets_did_you_mean(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(f'{{"family": "linear_solv", {KEY_LINE}, "prediction": 1}}\n')
    assert _problems(validate_submission(path)) == [
        ("schema", "line 1", "family", "string \"linear_solv\" (did you mean 'linear_solve'?)")
    ]


def test_a_number_given_as_a_string_is_one_message(tmp_path):
    path = tmp_path / "p.jsonl"
    keys = KEY_LINE.replace('"question_id": 0', '"question_id": "0"')
    path.write_text('{"family": "linear_solve", ' + keys + ', "prediction": 1}\n')
    assert _problems(validate_submission(path)) == [("schema", "line 1", "question_id", 'string "0"')]


@pytest.mark.parametrize(
    "tail, code, field, found",
    [
        ('"prediction": ' + "7" * 400, "non-finite", "prediction", "an integer of 400 digits"),
        ('"prediction": ' + "7" * 5000, "json", "", "an integer of over 4,300 digits"),
        ('"prediction": 1e400', "non-finite", "", "1e400"),
        ('"prediction": Infinity', "non-finite", "", "Infinity"),
        ('"model": "\\ud800", "prediction": 1', "encoding", "", "a lone surrogate"),
        ('"prediction": 1, "prediction": 2', "duplicate-field", "prediction", "the field twice"),
    ],
    ids=["400-digit-int", "5000-digit-int", "1e400", "Infinity", "lone-surrogate", "duplicate-field"],
)
def test_hostile_lines_are_named_never_raised(tmp_path, tail, code, field, found):
    path = tmp_path / "p.jsonl"
    path.write_text('{"family": "linear_solve", ' + KEY_LINE + ", " + tail + "}\n")
    result = CliRunner().invoke(validate_cli, [str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert _problems(validate_submission(path)) == [(code, "line 1", field, found)]


def test_deep_nesting_is_a_message(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("[" * 3000 + "]" * 3000 + "\n")
    assert _problems(validate_submission(path)) == [("json", "line 1", "", "values nested too deeply to read")]


def _swinging_sweep(tmp_path: Path, size: float) -> Path:
    """One linear_solve sweep whose answers alternate between -size and +size: p.jsonl."""
    rows = [json.loads('{"family": "linear_solve", ' + KEY_LINE + "}") for _ in range(64)]
    for t, row in enumerate(rows):
        row.update(time_step=t, prediction=size if t % 2 else -size)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_answers_near_the_float_limit_give_strict_json(tmp_path):
    from mathbode.cli.score import main as score_cli

    path = _swinging_sweep(tmp_path, 1.7e308)
    result = CliRunner().invoke(score_cli, [str(path), "--json", "--no-plots", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    for text in (result.stdout, (tmp_path / "r" / "scores.json").read_text()):
        json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))


def test_answers_near_the_float_limit_print_no_numpy_warning(tmp_path):
    # Their sums of squares overflow: the scores say n/a or inf-sized numbers, and numpy's
    # RuntimeWarnings (with the scorer's own file paths) are not printed beside them.
    path = _swinging_sweep(tmp_path, 1.2e203)
    argv = [sys.executable, "-m", "mathbode", "score", str(path), "--no-plots", "--out", str(tmp_path / "r")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "Warning" not in done.stdout, done.stderr
    # Their |G-1| is about 3.5e187: shown with an exponent, not as 188 digits, in the console and report.md.
    report = (tmp_path / "r" / "report.md").read_text()
    for text in (done.stdout, report):
        assert re.search(r"\d{20}", text) is None
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("linear_solve ")]
    assert re.search(r" \d\.\d{4}e\+187 ", row), row
    assert re.search(r"\| \d\.\d{4}e\+187 \|", report)


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0.25, "0.2500"),
        (-0.00001, "0.0000"),  # never "-0.0000"
        (999_999_999.99994, "999999999.9999"),
        (1e9, "1.0000e+09"),
        (-3.48584833e187, "-3.4858e+187"),
        (float("inf"), "inf"),
        (float("nan"), "n/a"),
        (None, "n/a"),
    ],
)
def test_a_number_too_long_for_fixed_notation_is_shown_with_an_exponent(x, text):
    from mathbode.evaluator.presentation.text import number_text

    assert number_text(x) == text
