"""Fuzz `mathbode convert` as the validator is fuzzed (issue #32): hostile values anywhere in an
lm-eval samples file get a verdict, never a traceback; what convert writes always validates, and
what it refuses is never written."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathbode.cli.convert import main as convert_cli
from mathbode.schema import layout, validate_path

LAY = layout()
KEY = list(LAY.key)
FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: JSON text (as a framework's writer may leave it) for any value of a sample.
HOSTILE_VALUES = [
    "NaN",
    "-Infinity",
    "1e400",
    '"x\\ud800y"',
    '"\\udfff"',
    "[NaN]",
    '{"a": [1, Infinity]}',
    "[" * 900 + "]" * 900,
    "[" * 5000 + "]" * 5000,
    "9" * 5000,
    "true",
    "null",
    '""',
    '"linear_solve"',
    "0",
    "-0",
    "1.5",
]


@pytest.fixture(scope="module")
def base_samples(tables) -> list[str]:
    rows = tables["linear_solve"].slice(0, 64).to_pylist()
    return [
        json.dumps({"doc_id": i, "doc": row, "resps": [[f"[answer_start] {row['ground_truth']:.6f} [answer_end]"]]})
        for i, row in enumerate(rows)
    ]


@st.composite
def hostile_samples(draw, lines: list[str]) -> bytes:
    lines = list(lines)
    i = draw(st.integers(0, len(lines) - 1))
    where = draw(st.sampled_from([*KEY, "doc_id", "resps", "response", "raw"]))
    value = draw(st.sampled_from(HOSTILE_VALUES))
    sample = json.loads(lines[i])
    if where == "raw":
        lines[i] = draw(st.sampled_from([value, "\x00" + value, value[:3]]))
    elif where == "doc_id":
        sample.pop("doc_id")
        lines[i] = json.dumps(sample)[:-1] + f', "doc_id": {value}}}'
    elif where in ("resps", "response"):
        sample.pop("resps")
        fragment = value if where == "resps" else f"[[{value}]]"
        lines[i] = json.dumps(sample)[:-1] + f', "resps": {fragment}}}'
    else:
        doc = sample.pop("doc")
        doc.pop(where)
        lines[i] = json.dumps(sample)[:-1] + f', "doc": {json.dumps(doc)[:-1]}, "{where}": {value}}}}}'
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


@given(data=st.data())
@FUZZ
def test_hostile_samples_get_a_verdict_and_only_valid_files_are_written(base_samples, tmp_path_factory, data):
    blob = data.draw(hostile_samples(base_samples))
    folder = tmp_path_factory.mktemp("convert-fuzz")
    log = folder / "samples_fuzz_2026-01-01T00-00-00.0.jsonl"
    log.write_bytes(blob)
    out = folder / "p.jsonl"
    result = CliRunner().invoke(convert_cli, [str(log), "-o", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), (blob[:300], result.exception)
    if result.exit_code == 0:
        report = validate_path(out)
        assert report.valid, report.format_text()
    else:
        assert result.exit_code in (1, 2) and result.output.strip().splitlines()[-1].startswith("Error: ")
        assert not out.exists()
    assert log.read_bytes() == blob


@given(blob=st.binary(max_size=2000))
@FUZZ
def test_arbitrary_bytes_as_a_samples_file_get_a_verdict(tmp_path_factory, blob):
    folder = tmp_path_factory.mktemp("convert-bytes")
    log = folder / "samples_x_1.jsonl"
    log.write_bytes(blob)
    result = CliRunner().invoke(convert_cli, [str(log), "-o", str(folder / "p.jsonl")])
    assert result.exception is None or isinstance(result.exception, SystemExit), (blob[:200], result.exception)
    assert result.exit_code in (0, 1, 2)


def test_a_samples_file_of_endless_lines_stops_where_validate_stops(tmp_path):
    log = tmp_path / "samples_many_1.jsonl"
    log.write_bytes(b'{"doc": {}}\n' * 200_000)  # 200,000 samples of no MathBode row
    result = CliRunner().invoke(convert_cli, [str(log), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {log} line 94,081: more than 94,080 lines, more than the samples of a MathBode task; not read.\n"
    )
