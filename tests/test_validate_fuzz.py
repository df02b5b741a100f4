"""Fuzz: mutated submissions and data files never crash the validator, and broken ones are caught."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.schema import layout, validate_path

LAY = layout()
KEY = list(LAY.key)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def base_lines(tables) -> list[bytes]:
    rows = tables["exponential_interest"].slice(0, 128).select(KEY + ["ground_truth"]).to_pylist()
    return [json.dumps({**{k: r[k] for k in KEY}, "prediction": r["ground_truth"]}).encode() for r in rows]


@st.composite
def broken_submission(draw, lines: list[bytes]) -> bytes:
    lines = list(lines)
    i = draw(st.integers(0, len(lines) - 1))
    obj = json.loads(lines[i])
    kind = draw(
        st.sampled_from(
            ["drop-field", "wrong-type", "out-of-range", "duplicate", "garbage", "truncate", "nan", "bad-family"]
        )
    )
    if kind == "drop-field":
        del obj[draw(st.sampled_from(KEY + ["prediction"]))]
    elif kind == "wrong-type":
        obj[draw(st.sampled_from(KEY))] = draw(st.sampled_from(["1", [1], {"x": 1}, True]))
    elif kind == "out-of-range":
        obj["time_step"] = draw(st.one_of(st.integers(max_value=-1), st.integers(min_value=64)))
    elif kind == "bad-family":
        obj["family"] = draw(st.text(max_size=12).filter(lambda s: s not in LAY.families))
    if kind in ("drop-field", "wrong-type", "out-of-range", "bad-family"):
        lines[i] = json.dumps(obj).encode()
    elif kind == "duplicate":
        lines.insert(draw(st.integers(0, len(lines))), lines[i])
    elif kind == "garbage":
        lines[i] = b"\x00" + draw(st.binary(max_size=40))
    elif kind == "nan":
        lines[i] = lines[i].replace(b'"prediction": ', b'"prediction": NaN, "was": ')
    else:  # truncate inside line i: the rest of the file is lost
        cut = draw(st.integers(1, len(lines[i]) - 1))
        return b"\n".join(lines[:i] + [lines[i][:cut]])
    return b"\n".join(lines) + b"\n"


@given(data=st.data())
@FUZZ
def test_broken_submissions_are_reported_never_raised(base_lines, tmp_path_factory, data):
    blob = data.draw(broken_submission(base_lines))
    path = tmp_path_factory.mktemp("fuzz") / "sub.jsonl"
    path.write_bytes(blob)
    report = validate_path(path)
    assert not report.valid, blob[:300]


@given(blob=st.binary(max_size=2000))
@FUZZ
def test_arbitrary_bytes_get_a_verdict_and_located_problems(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("fuzz") / "any.jsonl"
    path.write_bytes(blob)
    result = CliRunner().invoke(validate_cli, [str(path), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    doc = json.loads(result.output)
    assert result.exit_code == (0 if doc["valid"] else 1)
    for problem in doc["reports"][0]["problems"]:
        for example in problem["examples"]:
            assert re.fullmatch(r"line \d+|file", example["where"]), example


def test_the_unmutated_base_is_valid(base_lines, tmp_path):
    path = tmp_path / "ok.jsonl"
    path.write_bytes(b"\n".join(base_lines) + b"\n")
    assert validate_path(path).valid


@st.composite
def broken_table(draw, table: pa.Table) -> pa.Table | bytes:
    n = table.num_rows
    kind = draw(st.sampled_from(["drop-row", "dup-row", "bad-cell", "swap-cols", "cast", "truncate-bytes"]))
    i = draw(st.integers(0, n - 1))
    if kind == "drop-row":
        return pa.concat_tables([table.slice(0, i), table.slice(i + 1)])
    if kind == "dup-row":
        return pa.concat_tables([table, table.slice(i, 1)])
    if kind == "bad-cell":
        column, value = draw(
            st.sampled_from(
                [
                    ("family", "nope"),
                    ("question_id", 3),
                    ("signal_type", "square"),
                    ("amplitude_scale", 0.7),
                    ("time_step", 64),
                    ("ground_truth", float("inf")),
                    ("prompt", ""),
                ]
            )
        )
        values = table.column(column).to_pylist()
        values[i] = value
        idx = table.schema.get_field_index(column)
        return table.set_column(idx, table.schema.field(column), pa.array(values, type=table.schema.field(column).type))
    if kind == "swap-cols":
        a, b = draw(st.lists(st.integers(0, 9), min_size=2, max_size=2, unique=True))
        order = list(range(10))
        order[a], order[b] = order[b], order[a]
        return table.select(order)
    if kind == "cast":
        return table.set_column(6, "time_step", table.column("time_step").cast(pa.int32()))
    return b"truncate"


@given(data=st.data())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_broken_data_files_are_reported_never_raised(tables, built, tmp_path_factory, data):
    table = tables["similar_triangles"]
    mutated = data.draw(broken_table(table))
    path = tmp_path_factory.mktemp("fuzz") / "similar_triangles.parquet"
    if isinstance(mutated, bytes):
        blob = (built / "data/similar_triangles.parquet").read_bytes()
        path.write_bytes(blob[: data.draw(st.integers(0, len(blob) - 1))])
    else:
        pq.write_table(mutated, path)
    report = validate_path(path)
    assert not report.valid


# Each class of hostile input the validator and the scorer must answer with a message, not a traceback.
HOSTILE = {
    "deep-nesting": ('"meta": ' + "[" * 1000 + "]" * 1000, False),
    "5000-digit-integer": ('"question_id": ' + "9" * 5000, False),
    "400-digit-prediction": ('"prediction": ' + "9" * 400, False),
    "1e22-prediction": ('"prediction": 1e22', True),
    "1e400-prediction": ('"prediction": 1e400', False),
    "infinity-literal": ('"prediction": -Infinity', False),
    "nan-literal": ('"prediction": NaN', False),
    "lone-surrogate-model": ('"model": "x\\ud800y"', False),
    "lone-surrogate-response": ('"response": "[answer_start] 1 \\udfff [answer_end]"', False),
    "duplicate-key": ('"prediction": 1.5, "prediction": 2.5', False),
    "near-float-limit": ('"prediction": 1.7e308', True),
}


@st.composite
def hostile_submission(draw, lines: list[bytes]) -> tuple[bytes, bool, str]:
    """The base file with one line made hostile: (bytes, still valid?, class)."""
    kind = draw(st.sampled_from(sorted(HOSTILE) + ["byte-order-mark"]))
    lines = list(lines)
    if kind == "byte-order-mark":
        return b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n", True, kind
    fragment, valid = HOSTILE[kind]
    i = draw(st.integers(0, len(lines) - 1))
    obj = json.loads(lines[i])
    field = fragment.split(":", 1)[0].strip('"')
    obj.pop(field, None)
    if field == "model":
        for n, line in enumerate(lines):  # one model name per file: give the others the same
            lines[n] = line[:-1] + b', "model": "x\\ud800y"}'
    lines[i] = (json.dumps(obj)[:-1] + ", " + fragment + "}").encode()
    return b"\n".join(lines) + b"\n", valid, kind


@given(data=st.data())
@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_hostile_lines_get_a_verdict_in_validate_and_score(base_lines, tmp_path_factory, data):
    blob, valid, kind = data.draw(hostile_submission(base_lines))
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "sub.jsonl"
    path.write_bytes(blob)
    result = CliRunner().invoke(validate_cli, [str(path), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), (kind, result.exception)
    doc = json.loads(result.output)  # strict JSON, whatever the input
    assert doc["valid"] is valid, (kind, doc["reports"][0]["problems"])
    assert result.exit_code == (0 if valid else 1)
    scored = CliRunner().invoke(score_cli, [str(path), "--json", "--no-plots", "--out", str(folder / "report")])
    assert isinstance(scored.exception, SystemExit) or scored.exception is None, (kind, scored.exception)
    assert scored.exit_code == (0 if valid else 1), (kind, scored.output[-500:])
    if valid:
        json.loads(scored.stdout, parse_constant=lambda name: pytest.fail(f"{kind}: {name} in --json output"))
        json.loads((folder / "report" / "scores.json").read_text(), parse_constant=lambda name: pytest.fail(name))
