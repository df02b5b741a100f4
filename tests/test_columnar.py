"""The columnar paths of issue #11 give exactly what the line-by-line and row-by-row paths give."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathbode.schema import layout, submission

from .conftest import COMMITTED_DIST

LAY = layout()


@pytest.fixture(scope="module")
def valid_lines():
    """Two sinusoid sweeps, a chirp sweep and a step sweep of linear_solve, answered exactly (256 lines)."""
    table = pq.read_table(COMMITTED_DIST / "data" / "linear_solve.parquet")
    rows = table.select([*LAY.key, "ground_truth"]).to_pylist()
    chirp = next(i for i, r in enumerate(rows) if r["signal_type"] == "chirp")
    step = next(i for i, r in enumerate(rows) if r["signal_type"] == "step")
    rows = rows[:128] + rows[chirp : chirp + 64] + rows[step : step + 64]
    return [
        json.dumps({**{k: r[k] for k in LAY.key}, "response": f"[answer_start] {r['ground_truth']:.6f} [answer_end]"})
        for r in rows
    ]


#: Damage a user or an attacker does to one line (the text of the line in, the new text out).
MUTATIONS = {
    "blank": lambda line: "   ",
    "extra field": lambda line: line[:-1] + ', "id": 7}',
    "model": lambda line: line[:-1] + ', "model": "m"}',
    "other model": lambda line: line[:-1] + ', "model": "n"}',
    "empty model": lambda line: line[:-1] + ', "model": ""}',
    "meta": lambda line: line[:-1] + ', "meta": {"prompting": "few-shot", "latency_s": 0.5}}',
    "other meta": lambda line: line[:-1] + ', "meta": {"prompting": "zero-shot"}}',
    "meta list": lambda line: line[:-1] + ', "meta": [1]}',
    "duplicate field": lambda line: line[:-1] + ', "time_step": 3}',
    "both answers": lambda line: line[:-1] + ', "prediction": null}',
    "prediction": lambda line: (
        json.dumps({k: v for k, v in json.loads(line).items() if k != "response"})[:-1] + ', "prediction": 1.5}'
    ),
    "huge integer": lambda line: line.replace(
        '"response": "[answer_start]', '"prediction": 1' + "0" * 400 + ', "x": "'
    ),
    "overflow": lambda line: line[:-1] + ', "meta": {"latency_s": 1e400}}',
    "nan": lambda line: line[:-1] + ', "meta": {"latency_s": NaN}}',
    "lone surrogate": lambda line: line[:-1] + ', "model": "\\ud800"}',
    "escaped text": lambda line: line[:-1] + ', "model": "caf\\u00e9"}',
    "string step": lambda line: line.replace('"time_step": ', '"time_step": "') + "",
    "float step": lambda line: line.replace('"time_step": ', '"time_step": 1.0 + '),
    "whole float step": lambda line: json.dumps(
        {**json.loads(line), "time_step": float(json.loads(line)["time_step"])}
    ),
    "bool id": lambda line: json.dumps({**json.loads(line), "question_id": True}),
    "bad family": lambda line: json.dumps({**json.loads(line), "family": "linear_solv"}),
    "not an object": lambda line: "[1, 2]",
    "broken": lambda line: line[:-3],
    "latin-1": lambda line: line[:-1] + ', "model": "caf\xe9"}',
}


def _read_both(path, monkeypatch):
    """The file read as the reader reads it (clean blocks by Arrow), and every line by Python's reader."""
    fast = submission.read_submission(path)
    with monkeypatch.context() as m:
        m.setattr(submission, "ARROW_BLOCKS", False)
        exact = submission.read_submission(path)
    return fast, exact


def _same(fast, exact):
    assert fast.report.to_dict(max_examples=1000) == exact.report.to_dict(max_examples=1000)
    assert fast.predictions == exact.predictions
    assert (fast.model, fast.conditions) == (exact.model, exact.conditions)


@given(
    damage=st.lists(st.tuples(st.integers(0, 255), st.sampled_from(sorted(MUTATIONS))), max_size=6),
    duplicate=st.booleans(),
    bom=st.booleans(),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_block_reader_reports_what_the_line_reader_reports(
    valid_lines, tmp_path, monkeypatch, damage, duplicate, bom
):
    monkeypatch.setattr(submission, "BLOCK_LINES", 32)  # several blocks: clean ones and damaged ones
    lines = list(valid_lines)
    for index, name in damage:
        lines[index] = MUTATIONS[name](valid_lines[index])  # the last damage to a line wins
    if duplicate:
        lines.append(lines[3])  # a key seen in an earlier block
    data = ("\ufeff" if bom else "") + "\n".join(lines) + "\n"
    path = tmp_path / "sub.jsonl"
    path.write_bytes(data.encode("utf-8", "surrogatepass").replace("caf\xe9".encode(), b"caf\xe9"))
    fast, exact = _read_both(path, monkeypatch)
    _same(fast, exact)


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
@pytest.mark.parametrize("text", ["ascii", "escaped"])
def test_a_clean_file_is_read_by_arrow_and_reads_every_line(valid_lines, tmp_path, monkeypatch, ending, text):
    lines = valid_lines
    if text == "escaped":  # as Python's json.dumps writes non-ASCII text by default: \u00d7
        lines = [json.dumps({**json.loads(line), "model": "m \u00d7 \u2248"}) for line in lines]
        assert all("\\u00d7" in line for line in lines)
    path = tmp_path / "sub.jsonl"
    path.write_bytes((ending.join(lines) + ending).encode())
    calls = []
    original = submission._read_arrow_block

    def counted(*args):
        calls.append(original(*args))
        return calls[-1]

    monkeypatch.setattr(submission, "_read_arrow_block", counted)
    sub = submission.read_submission(path)
    calls = [answers is not None for answers in calls]
    assert calls == [True] and len(sub.predictions) == 256 and sub.report.valid
    assert [p.line for p in sub.predictions] == list(range(1, 257))
    _same(sub, _read_both(path, monkeypatch)[1])


def _prediction(line, literal):
    """The line with `prediction` (the number as written) in place of its response."""
    return (
        json.dumps({k: v for k, v in json.loads(line).items() if k != "response"})[:-1] + f', "prediction": {literal}}}'
    )


#: Lines Arrow's reader takes but Python's `json` reads otherwise or refuses (see `_read_arrow_block`).
ARROW_TRAPS = {
    "escaped key": lambda line: line.replace('"response"', '"resp\\u006fnse"'),
    "escaped key twice": lambda line: line[:-1] + ', "resp\\u006fnse": "x"}',
    "escaped model key": lambda line: line[:-1] + ', "m\\u006fdel": "m"}',
    "escaped text": lambda line: line.replace("[answer_end]", "\\u00d7 \\u2248 [answer_end]"),
    "escaped emoji": lambda line: line.replace("[answer_end]", "\\ud83d\\ude00 [answer_end]"),
    "lone surrogate": lambda line: line.replace("[answer_end]", "\\ud83d [answer_end]"),
    "escaped backslash u": lambda line: line.replace("[answer_end]", "\\\\ud800 [answer_end]"),
    "escaped meta key": lambda line: line[:-1] + ', "meta": {"pr\\u006fmpting": "few-shot"}}',
    "escaped null prediction": lambda line: line[:-1] + ', "predicti\\u006fn": null}',
    "null prediction beside a response": lambda line: line[:-1] + ', "prediction": null}',
    "prediction named inside the text": lambda line: line.replace("[answer_end]", 'said \\"prediction\\" [answer_end]'),
    "nan": lambda line: line[:-1] + ', "meta": {"latency_s": NaN}}',
    "infinity": lambda line: line[:-1] + ', "meta": {"latency_s": Infinity}}',
    "integer minus zero": lambda line: (
        json.dumps({k: v for k, v in json.loads(line).items() if k != "response"})[:-1] + ', "prediction": -0}'
    ),
    "two objects": lambda line: line + line,
    "missing phase": lambda line: json.dumps({k: v for k, v in json.loads(line).items() if k != "phase_deg"}),
    "null phase": lambda line: json.dumps({**json.loads(line), "phase_deg": None}),
    "bool step": lambda line: json.dumps({**json.loads(line), "time_step": True}),
    "nested meta": lambda line: line[:-1] + ', "meta": {"prompting": "few-shot", "inner": {"response": 1}}}',
    "meta null": lambda line: line[:-1] + ', "meta": null}',
    "400-digit prediction": lambda line: (
        json.dumps({k: v for k, v in json.loads(line).items() if k != "response"})[:-1]
        + ', "prediction": 1'
        + "0" * 400
        + "}"
    ),
    "2^53 + 1 prediction": lambda line: _prediction(line, "9007199254740993"),
    "int64 max prediction": lambda line: _prediction(line, "9223372036854775807"),
    "2^64 prediction": lambda line: _prediction(line, "18446744073709551616"),
    "2^53 + 1 question": lambda line: line.replace('"question_id": 0', '"question_id": 9007199254740993'),
    "2^53 + 1 step": lambda line: json.dumps({**json.loads(line), "time_step": 2**53 + 1}),
    "400-digit meta": lambda line: line[:-1] + ', "meta": {"tokens": 1' + "0" * 400 + "}}",
    "5000-digit meta": lambda line: line[:-1] + ', "meta": {"tokens": 1' + "0" * 5000 + "}}",
    "1e400 meta": lambda line: line[:-1] + ', "meta": {"latency_s": 1e400}}',
    "deep meta": lambda line: line[:-1] + ', "meta": {"x": ' + "[" * 3000 + "]" * 3000 + "}}",
    # Arrow's reader crashes the process at this depth: the layer must never hand it such a line.
    "very deep meta": lambda line: line[:-1] + ', "meta": {"x": ' + "[" * 200_000 + "]" * 200_000 + "}}",
    "deep object meta": lambda line: line[:-1] + ', "meta": {"x": ' + '{"y": ' * 3000 + "1" + "}" * 3000 + "}}",
}


@pytest.mark.parametrize("line", [9, 140, 200], ids=["sinusoid", "chirp", "step"])
@pytest.mark.parametrize("trap", sorted(ARROW_TRAPS))
def test_the_arrow_layer_reads_hostile_lines_as_the_line_reader_does(valid_lines, tmp_path, monkeypatch, trap, line):
    lines = list(valid_lines)
    lines[line] = ARROW_TRAPS[trap](lines[line])  # one line: any other damage would make the layer decline
    path = tmp_path / "sub.jsonl"
    path.write_text("\n".join(lines) + "\n")
    fast, exact = _read_both(path, monkeypatch)
    _same(fast, exact)


def _table_reports(table, monkeypatch):
    from mathbode.schema import dataset
    from mathbode.schema.report import Report

    out = []
    for exact in (False, True):
        with monkeypatch.context() as m:
            if exact:
                m.setattr(dataset, "_clean_table", lambda table, *grid: None)
            report = Report("x", "dataset")
            found = dataset.check_table(table, report, "data/x.parquet")
            out.append((found, report.to_dict(max_examples=1000)))
    return out


def _set(table, column, index, value):
    import pyarrow as pa

    values = table.column(column).to_pylist()
    values[index] = value
    return table.set_column(
        table.schema.get_field_index(column),
        table.schema.field(column),
        pa.array(values, table.schema.field(column).type),
    )


@pytest.mark.parametrize(
    "damage",
    [
        "none",
        "two families",
        "two families, a row repeated",
        "rows swapped",
        "row dropped",
        "row repeated",
        "nan truth",
        "empty prompt",
        "chirp frequency out of range",
        "chirp frequency moved",
        "sinusoid frequency moved",
        "step with a phase",
        "unknown family",
    ],
)
def test_the_column_wise_table_check_agrees_with_the_row_by_row_check(damage, monkeypatch):
    import pyarrow as pa

    table = pq.read_table(COMMITTED_DIST / "data" / "linear_solve.parquet")
    signals = table.column("signal_type").to_pylist()
    chirp, step = signals.index("chirp"), signals.index("step")
    if damage.startswith("two families"):
        table = pa.concat_tables([table, pq.read_table(COMMITTED_DIST / "data" / "linear_system.parquet")])
        if damage.endswith("repeated"):
            table = table.take([*range(table.num_rows), 9500])
    elif damage == "rows swapped":
        order = list(range(table.num_rows))
        order[10], order[11] = 11, 10
        table = table.take(order)
    elif damage == "row dropped":
        table = table.take([i for i in range(table.num_rows) if i != 500])
    elif damage == "row repeated":
        table = table.take([*range(table.num_rows), 7])
    elif damage == "nan truth":
        table = _set(table, "ground_truth", 3, float("nan"))
    elif damage == "empty prompt":
        table = _set(table, "prompt", 4, "")
    elif damage == "chirp frequency out of range":
        table = _set(table, "frequency_cycles", chirp + 2, 17.5)
    elif damage == "chirp frequency moved":
        table = _set(table, "frequency_cycles", chirp + 2, 2.0)  # in range: not part of a chirp's key
    elif damage == "sinusoid frequency moved":
        table = _set(table, "frequency_cycles", 0, 2.0)
    elif damage == "step with a phase":
        table = _set(table, "phase_deg", step, 0.0)
    elif damage == "unknown family":
        table = _set(table, "family", 0, "linear_solv")
    (fast_found, fast), (exact_found, exact) = _table_reports(table, monkeypatch)
    assert fast == exact and fast_found == exact_found
    # Row order is the content check's business (`row-order`), not the grid's.
    assert fast["valid"] == (damage in ("none", "two families", "rows swapped", "chirp frequency moved"))


def test_a_field_spelt_with_escapes_is_not_taken_for_an_absent_one(valid_lines, tmp_path, monkeypatch):
    """Line 10 names `prediction` in plain text, line 11 with a \\u escape beside its response:
    counting the plain name alone would take line 11's null prediction for an absent field."""
    lines = list(valid_lines)
    plain = json.loads(lines[9])
    del plain["response"]
    lines[9] = json.dumps({**plain, "prediction": 1.5})
    lines[10] = lines[10][:-1] + ', "predicti\\u006fn": null}'
    path = tmp_path / "sub.jsonl"
    path.write_text("\n".join(lines) + "\n")
    fast, exact = _read_both(path, monkeypatch)
    _same(fast, exact)
    assert [(p.code, p.where) for p in exact.report.errors] == [("schema", "line 11")]


@given(
    st.lists(
        st.integers(0, len(__import__("mathbode.schema.keys", fromlist=["x"]).canonical_row_order()) - 1), max_size=3000
    )
)
@settings(max_examples=30, deadline=None)
def test_coverage_counted_per_sweep_equals_counting_the_preset_rows(positions):
    from collections import Counter

    import numpy as np

    from mathbode.schema.keys import canonical_row_order, coverage, preset_keys

    order = canonical_row_order()
    rows = sorted(set(positions) | set(range(64)))  # a whole sweep, and scattered rows
    keys = {order[i] for i in rows}
    cov = coverage(np.array(rows))
    for name, found in cov["presets"].items():
        wanted = preset_keys(name)
        have = Counter(k.family for k in wanted & keys)
        need = Counter(k.family for k in wanted)
        assert found["rows"] == sum(have.values()) and found["of"] == len(wanted)
        assert found["families_complete"] == [f for f in LAY.families if have.get(f, 0) == need.get(f)]
    assert {f: c["rows"] for f, c in cov["families"].items()} == {
        f: sum(k.family == f for k in keys) for f in LAY.families
    }


def test_chirp_windows_fitted_together_equal_the_sweep_at_a_time_fits(reference):
    """Shared projectors for complete windows, lstsq alone for windows with missing answers."""
    import numpy as np

    from mathbode.evaluator.scorer.reference_index import reference_index
    from mathbode.evaluator.scorer.transients import chirp_curve, chirp_curves

    index = reference_index(reference)
    chirps = [s for s in index.transient_sweeps if s.signal_type == "chirp"]
    truth = np.array([index.truth[index.steps[s]] for s in chirps])
    rng = np.random.default_rng(3)
    models = {
        "exact": truth.copy(),
        "noisy": truth + rng.normal(size=truth.shape) * 0.01,
        "holes": np.where(rng.random(truth.shape) < 0.15, np.nan, 0.9 * truth),
    }
    for name, model in models.items():
        together = chirp_curves(truth, model, LAY.chirp_start_cycles, LAY.chirp_end_cycles)
        for i in range(len(chirps)):
            alone = chirp_curve(truth[i], model[i], LAY.chirp_start_cycles, LAY.chirp_end_cycles)
            for field in ("gain", "phase_err_deg", "compliance"):
                a, b = np.array([row[field] for row in alone]), together[field][i]
                assert np.array_equal(np.isnan(a), np.isnan(b)), (name, field)
                # lstsq against a shared pseudo-inverse: equal to rounding, not bit for bit (BLAS kernels differ
                # between CPUs); 1e-9 is far above that rounding and far below what a report prints.
                assert np.allclose(a, b, rtol=0, atol=1e-9, equal_nan=True), (name, field)
            # Two computations of one power f0 k^(t/63): numpy's scalar and vectorised pow, whose SIMD
            # kernels may differ by an ulp on some CPUs (seen: ...729 against ...7285); 1e-12 relative
            # is four orders above that and far below the 2 decimals any report prints.
            freqs = [row["frequency_cycles"] for row in alone]
            assert np.allclose(freqs, together["frequency_cycles"], rtol=1e-12, atol=0)


def test_row_ids_from_key_columns_are_the_canonical_positions():
    """Every key of the split maps to its position; a key the split lacks, or a value of a type no
    key has, does not; the key spellings `row_key` accepts (1 for 1.0, any frequency on a chirp)
    map as it maps them."""
    import numpy as np
    import pyarrow as pa

    from mathbode.schema.keys import canonical_row_ids, canonical_row_order

    order = canonical_row_order()
    columns = {name: [getattr(key, name) for key in order] for name in LAY.key}
    ids = canonical_row_ids({name: pa.array(values) for name, values in columns.items()})
    assert ids.tolist() == list(range(len(order))) == list(range(47_040))

    chirp = next(i for i, key in enumerate(order) if key.signal_type == "chirp")
    rows = {
        "as given": {name: columns[name][chirp] for name in LAY.key},
        "whole floats": {**{name: columns[name][1] for name in LAY.key}, "question_id": 0.0, "time_step": 1.0},
        "a chirp's frequency": {**{name: columns[name][chirp] for name in LAY.key}, "frequency_cycles": 3.25},
        "step 64": {**{name: columns[name][0] for name in LAY.key}, "time_step": 64},
        "step 1.5": {**{name: columns[name][0] for name in LAY.key}, "time_step": 1.5},
        "sinusoid without a phase": {**{name: columns[name][0] for name in LAY.key}, "phase_deg": None},
        "unknown family": {**{name: columns[name][0] for name in LAY.key}, "family": "linear_solv"},
        "chirp at 0.5": {**{name: columns[name][chirp] for name in LAY.key}, "amplitude_scale": 0.5},
        "question 3": {**{name: columns[name][0] for name in LAY.key}, "question_id": 3},
    }
    table = pa.Table.from_pylist(list(rows.values()))
    found = canonical_row_ids({name: table.column(name) for name in LAY.key})
    assert dict(zip(rows, found.tolist(), strict=True)) == {
        "as given": chirp,
        "whole floats": 1,
        "a chirp's frequency": chirp,
        "step 64": -1,
        "step 1.5": -1,
        "sinusoid without a phase": -1,
        "unknown family": -1,
        "chirp at 0.5": -1,
        "question 3": -1,
    }
    strings = {name: pa.array([str(v) for v in columns[name][:2]]) for name in LAY.key}
    assert canonical_row_ids(strings) is None
    assert np.array_equal(
        canonical_row_ids(
            {n: pa.array(v[:0], pa.float64()) for n, v in columns.items()}
            | {"family": pa.array([], pa.string()), "signal_type": pa.array([], pa.string())}
        ),
        np.array([], dtype=np.int64),
    )


def test_every_key_of_the_split_passes_the_schema():
    """The Arrow block reader takes a key of the split as valid in every key field (see
    `submission._read_arrow_block`): the schema must agree, for every key."""
    from mathbode.schema.compiled import compiled
    from mathbode.schema.keys import canonical_row_order

    schema = compiled("predictions.schema.json")
    bad = [key for key in canonical_row_order() if schema.errors({**key._asdict(), "prediction": None})]
    assert bad == []


@given(
    st.lists(
        st.sampled_from(
            [
                '{"a": 1}',
                ' {"a": 1}',
                '{"a": 1} ',
                '{"a": 1}\r',
                "",
                " ",
                "null",
                "[1]",
                "{",
                "}",
                "{}",
                '{"a": ' + "[" * 950 + "]" * 950 + "}",
                '{"a": ' + "[" * 890 + "]" * 890 + "}",
                '"x"',
            ]
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_column_wise_arrow_guard_is_never_looser_than_the_line_guard(lines):
    """A block the column-wise guard passes has no line the line guard refuses (it may refuse
    more: a line with surrounding spaces goes to Python's reader)."""
    from mathbode.schema.arrow_guard import arrow_line_problem

    raw = [line.encode() for line in lines]
    if submission._arrow_may_read(b"\n".join(raw), submission._line_starts(raw)):
        assert all(arrow_line_problem(line) is None for line in raw)
    if all(line in ('{"a": 1}', '{"a": 1}\r', "{}") for line in lines):
        assert submission._arrow_may_read(b"\n".join(raw), submission._line_starts(raw))


#: Any JSON value, numbers at their edges included (integers past 2^53 and 2^64, floats near the limit).
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, 2, 0.5, 1.0, 2.5, 4, 63, 64, -0.0, 1e308, 2**53 + 1, "sinusoid", "chirp", ""])
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=4,
)
FIELDS = [*LAY.key, "response", "prediction", "model", "meta", "extra"]


@given(
    edits=st.lists(
        st.tuples(st.integers(0, 255), st.sampled_from(FIELDS), st.one_of(st.just("<delete>"), JSON_VALUES)),
        min_size=1,
        max_size=3,
    ),
    ascii_only=st.booleans(),
)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_value_in_any_field_reads_the_same_both_ways(valid_lines, tmp_path, monkeypatch, edits, ascii_only):
    """The Arrow reader takes a block only where Python's reader finds it clean, and then reads the
    same numbers and texts; it never raises, whatever a field holds."""
    monkeypatch.setattr(submission, "BLOCK_LINES", 32)  # the damaged block aside, the others are Arrow's
    lines = list(valid_lines)
    for index, name, value in edits:
        obj = json.loads(lines[index])
        if value == "<delete>":
            obj.pop(name, None)
        else:
            obj[name] = value
        lines[index] = json.dumps(obj, ensure_ascii=ascii_only)
    path = tmp_path / "sub.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    fast, exact = _read_both(path, monkeypatch)
    _same(fast, exact)
