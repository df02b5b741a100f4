"""The JSON Schemas: well-formed, consistent with the layout, and applied exactly by the fast path."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathbode.schema import layout
from mathbode.schema.compiled import MISSING, CompiledSchema, compiled
from mathbode.schema.drives import MAX_LEVEL, MAX_PERIODS, MAX_REALIZATIONS, MIN_LEVEL, MULTITONE_SIGNALS
from mathbode.schema.json_schemas import load_schema
from mathbode.schema.layout import MAX_QUESTIONS

LAY = layout()


@pytest.mark.parametrize("name", ["row.schema.json", "predictions.schema.json", "manifest.schema.json"])
def test_schemas_are_valid_draft_2020_12(name):
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", ["row.schema.json", "predictions.schema.json"])
def test_schema_enums_match_the_layout(name):
    props = load_schema(name)["properties"]
    # Any well-named family (a release names its own); membership is checked against the reference in code.
    assert props["family"] == {"type": "string", "pattern": LAY.family_name_pattern}
    # Any problem a release of --questions N holds; a release's own are its grid check's.
    assert (props["question_id"]["minimum"], props["question_id"]["maximum"]) == (0, MAX_QUESTIONS - 1)
    assert props["time_step"]["maximum"] == LAY.time_steps - 1
    # The standard drives, then a multi-tone release's (schema/drives.py).
    assert props["signal_type"]["enum"] == ["sinusoid", "chirp", "step", *MULTITONE_SIGNALS]
    sinusoid = next(
        c["then"]["properties"]
        for c in load_schema(name)["allOf"]
        if c["if"]["properties"]["signal_type"].get("const") == "sinusoid"
    )
    assert sinusoid["frequency_cycles"]["enum"] == list(LAY.sinusoid_frequencies)
    assert sinusoid["phase_deg"]["enum"] == list(LAY.sinusoid_phases_deg)
    assert sinusoid["amplitude_scale"]["enum"] == list(LAY.sinusoid_amplitudes)
    # Any row: a level a multi-tone design may take (the standard signals' own amplitudes lie inside).
    assert (props["amplitude_scale"]["minimum"], props["amplitude_scale"]["maximum"]) == (
        float(MIN_LEVEL),
        float(MAX_LEVEL),
    )
    for signal in MULTITONE_SIGNALS:
        # A design's bounds (schema/drives.py); the exact grid of a release is the validator's grid check.
        then = _then(name, signal)
        assert (then["amplitude_scale"]["minimum"], then["amplitude_scale"]["maximum"]) == (
            float(MIN_LEVEL),
            float(MAX_LEVEL),
        )
        assert (then["frequency_cycles"]["minimum"], then["frequency_cycles"]["maximum"]) == (0, MAX_PERIODS - 1)
    assert (_then(name, "multisine")["phase_deg"]["minimum"], _then(name, "multisine")["phase_deg"]["maximum"]) == (
        0,
        MAX_REALIZATIONS - 1,
    )
    assert _then(name, "two_tone")["phase_deg"]["enum"] == [0]


def _then(name: str, signal: str) -> dict:
    """The properties a schema's `allOf` condition on `signal` requires."""
    return next(
        c["then"]["properties"]
        for c in load_schema(name)["allOf"]
        if c["if"]["properties"]["signal_type"].get("const") == signal
    )


def test_manifest_schema_accepts_the_committed_manifest_and_any_well_named_family():
    import copy
    import json

    from .conftest import COMMITTED_DIST

    schema = load_schema("manifest.schema.json")
    assert schema["properties"]["families"]["propertyNames"]["pattern"] == LAY.family_name_pattern
    manifest = json.loads((COMMITTED_DIST / "MANIFEST.json").read_text())
    checker = compiled("manifest.schema.json")
    assert checker.errors(manifest) == []
    for name, ok in [("acme.orbit", True), ("orbit_2", True), ("Acme.orbit", False), ("a.b.c", False), ("../x", False)]:
        other = copy.deepcopy(manifest)
        other["families"][name] = other["families"].pop("linear_solve")
        assert (checker.errors(other) == []) is ok, name
    other = copy.deepcopy(manifest)
    other["name"] = "MathBode-Extended"
    assert checker.errors(other) == []
    other["name"] = "bad name/with slash"
    assert checker.errors(other) != []


def test_row_schema_lists_the_ten_columns_in_order():
    schema = load_schema("row.schema.json")
    assert tuple(schema["required"]) == LAY.column_names == tuple(schema["properties"])


def test_both_schemas_take_the_fast_path():
    assert compiled("row.schema.json")._separable
    assert compiled("predictions.schema.json")._separable


def test_unrecognised_schema_shapes_fall_back_to_plain_validation():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "dependentRequired": {"a": ["b"]}}
    c = CompiledSchema(schema)
    assert not c._separable
    assert [e.keyword for e in c.errors({"a": 1})] == ["dependentRequired"]


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 70),
    st.sampled_from([0.5, 1.0, 2.5, 4.0, 120.0, 3.5, 16.0, 17.0, 63.0, 63.5, -0.0, 0.0]),
    st.floats(-100, 100),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.sampled_from(["", "x", "sinusoid", "chirp", "step", "linear_solve", "4", "nope"]),
    st.lists(st.integers(), max_size=2),
)
_fields = st.sampled_from([*LAY.column_names, "response", "prediction", "model", "extra"])
_valid_row = {
    "family": "linear_solve",
    "question_id": 0,
    "signal_type": "sinusoid",
    "amplitude_scale": 0.5,
    "frequency_cycles": 4.0,
    "phase_deg": 0.0,
    "time_step": 3,
    "p_value": 3.1,
    "prompt": "q",
    "ground_truth": 1.0,
}
_valid_prediction = {**{k: _valid_row[k] for k in LAY.key}, "response": "[answer_start] 1.000000 [answer_end]"}


def _edited(base, edits):
    obj = dict(base)
    for field, value in edits:
        if value == "<delete>":
            obj.pop(field, None)
        else:
            obj[field] = value
    return obj


@pytest.mark.parametrize(
    "name, base", [("row.schema.json", _valid_row), ("predictions.schema.json", _valid_prediction)]
)
@given(edits=st.lists(st.tuples(_fields, st.one_of(st.just("<delete>"), _values)), max_size=4))
@settings(max_examples=300, deadline=None)
def test_fast_path_reports_exactly_what_jsonschema_reports(name, base, edits):
    obj = _edited(base, edits)
    fast = compiled(name)
    plain = jsonschema.Draft202012Validator(load_schema(name))
    key = lambda e: (e.field, e.keyword, e.expected, e.found)  # noqa: E731
    slow = sorted((key(e) for e in fast._errors_full(obj)))
    assert sorted(key(e) for e in fast.errors(obj)) == slow
    assert (not slow) == plain.is_valid(obj)


@pytest.mark.parametrize(
    "name, base", [("row.schema.json", _valid_row), ("predictions.schema.json", _valid_prediction)]
)
@given(
    batch=st.lists(
        st.lists(st.tuples(_fields, st.one_of(st.just("<delete>"), _values)), max_size=3), min_size=1, max_size=12
    )
)
@settings(max_examples=200, deadline=None)
def test_the_column_wise_filter_lets_no_invalid_row_through(name, base, batch):
    """Rows checked column by column: a row left out of the suspects is one jsonschema accepts."""
    rows = [_edited(base, edits) for edits in batch]
    fast = compiled(name)
    plain = jsonschema.Draft202012Validator(load_schema(name))
    suspects = set(fast.suspect_columns(_columns(rows)))
    for i, row in enumerate(rows):
        if i not in suspects:
            assert plain.is_valid(row), row
            assert fast.errors(row) == []
        if not plain.is_valid(row):
            assert i in suspects


def _columns(rows):
    """Rows as `suspect_columns` takes them: a column per field, MISSING where a row lacks it."""
    names = sorted({name for row in rows for name in row})
    return {name: [row.get(name, MISSING) for row in rows] for name in names}


def test_the_column_wise_filter_passes_a_clean_batch_and_names_the_bad_rows():
    rows = [dict(_valid_prediction, time_step=t) for t in range(64)]
    schema = compiled("predictions.schema.json")
    assert schema.suspect_columns(_columns(rows)) == []
    rows[5]["time_step"] = 64
    rows[9]["meta"] = []
    rows[11] = dict(rows[11], prediction=1.0)
    rows[20] = dict(rows[20], response="", model="")
    assert schema.suspect_columns(_columns(rows)) == [5, 9, 11, 20]


def test_the_content_hash_of_strings_is_the_length_prefixed_stream():
    import hashlib
    import struct

    import pyarrow as pa

    from mathbode.core.hashing import _length_prefixed

    def by_value(column):
        return b"".join(struct.pack("<Q", len(d)) + d for d in ((v or "").encode() for v in column.to_pylist()))

    for column in (
        pa.array(["a", "", "héllo ✓", "x" * 1000]),
        pa.array(["a", "bc", "def", "ghij"]).slice(1, 2),
        pa.array([], pa.string()),
        pa.array(["a", None, "b"]),
    ):
        assert _length_prefixed(column) == by_value(column)
    assert (
        hashlib.sha256(_length_prefixed(pa.array(["ab"]))).hexdigest()
        == hashlib.sha256(struct.pack("<Q", 2) + b"ab").hexdigest()
    )
