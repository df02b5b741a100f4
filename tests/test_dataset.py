"""The built release: counts, columns, nulls, keys, rendered values and exact ground truth."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np
import pyarrow as pa
import pytest

from mathbode.builder import FAMILIES
from mathbode.schema import layout

LAY = layout()
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _question_numbers(prompt: str) -> list[str]:
    question, instruction = prompt.split("\n\n")
    assert instruction == layout().answer_instruction()
    return NUMBER.findall(question)


# Independent recomputation from the numbers printed in the prompt, in the order they appear,
# with mpmath at 50 digits. Deliberately not the builder's sympy solution.
def _linear_solve(a, b, c):
    return (c - b) / a


def _ratio_saturation(K, L):
    return L / (L + K)


def _exponential_interest(A, r, n):
    return A * (1 + r / 100) ** int(n)


def _linear_system(a, b, e, c, d, f):
    return (e * d - b * f) / (a * d - b * c)


def _similar_triangles(s, k, k_again):
    assert k == k_again
    return s * k


RECOMPUTE = {
    "linear_solve": (_linear_solve, 0),
    "ratio_saturation": (_ratio_saturation, 1),
    "exponential_interest": (_exponential_interest, 1),
    "linear_system": (_linear_system, 0),
    "similar_triangles": (_similar_triangles, 1),
}


def test_every_family_has_a_recomputation():
    assert set(RECOMPUTE) == set(FAMILIES) == set(LAY.families)


@pytest.mark.parametrize("family", LAY.families)
def test_counts_per_family_and_signal_type(tables, family):
    table = tables[family]
    assert table.num_rows == 9_408
    assert Counter(table.column("signal_type").to_pylist()) == {"sinusoid": 8_640, "chirp": 384, "step": 384}
    assert Counter(table.column("question_id").to_pylist()) == {0: 3_136, 1: 3_136, 2: 3_136}
    assert set(table.column("family").to_pylist()) == {family}


@pytest.mark.parametrize("family", LAY.families)
def test_columns_names_order_and_types(tables, family):
    schema = tables[family].schema
    assert schema.names == list(LAY.column_names)
    assert [str(t) for t in schema.types] == [
        "string",
        "int64",
        "string",
        "double",
        "double",
        "double",
        "int64",
        "double",
        "string",
        "double",
    ]


@pytest.mark.parametrize("family", LAY.families)
def test_null_pattern_per_signal_type(tables, family):
    rows = tables[family].select(["signal_type", "frequency_cycles", "phase_deg"]).to_pylist()
    for row in rows:
        kind, f, ph = row["signal_type"], row["frequency_cycles"], row["phase_deg"]
        if kind == "sinusoid":
            assert f in (1.0, 2.0, 4.0, 8.0, 16.0) and ph in (0.0, 120.0, 240.0)
        elif kind == "chirp":
            assert 1.0 <= f <= 16.0 and ph is None
        else:
            assert kind == "step" and f is None and ph is None
    for column in [
        "family",
        "question_id",
        "signal_type",
        "amplitude_scale",
        "time_step",
        "p_value",
        "prompt",
        "ground_truth",
    ]:
        assert tables[family].column(column).null_count == 0


@pytest.mark.parametrize("family", LAY.families)
def test_row_key_is_unique_and_sweeps_are_complete(tables, family):
    rows = tables[family].select(list(LAY.key)).to_pylist()
    keys = [tuple(r.values()) for r in rows]
    assert len(set(keys)) == len(keys)
    # Chirp and step sweeps are identified without frequency and phase: still 64 steps each.
    sweeps = Counter(
        (
            r["question_id"],
            r["signal_type"],
            r["amplitude_scale"],
            r["frequency_cycles"] if r["signal_type"] == "sinusoid" else None,
            r["phase_deg"],
        )
        for r in rows
    )
    assert len(sweeps) == 3 * 49 and set(sweeps.values()) == {64}


@pytest.mark.parametrize("family", LAY.families)
def test_p_value_is_the_rendered_number_and_in_range(tables, family):
    fam = FAMILIES[family]
    _, p_index = RECOMPUTE[family]
    lo, hi = (float(x) for x in fam.p_range)
    rows = tables[family].select(["p_value", "prompt"]).to_pylist()
    for row in rows:
        rendered = _question_numbers(row["prompt"])[p_index]
        assert len(rendered.split(".")[1]) == fam.decimals
        assert float(rendered) == row["p_value"]
        assert lo <= row["p_value"] <= hi


@pytest.mark.parametrize("family", LAY.families)
def test_ground_truth_equals_50_digit_recomputation_from_the_prompt(tables, family):
    recompute, _ = RECOMPUTE[family]
    mpmath.mp.dps = 50
    rows = tables[family].select(["prompt", "ground_truth"]).to_pylist()
    seen = {}
    for row in rows:
        prompt = row["prompt"]
        if prompt not in seen:
            numbers = [mpmath.mpf(n) for n in _question_numbers(prompt)]
            seen[prompt] = float(recompute(*numbers))
        assert row["ground_truth"] == seen[prompt], prompt


@pytest.mark.parametrize("family", LAY.families)
def test_every_sweep_swings_at_least_1e_3(tables, family):
    # The six-decimal answer format must resolve every sweep's amplitude to better than 0.1%.
    df = tables[family].to_pandas()
    df.loc[df["signal_type"] != "sinusoid", "frequency_cycles"] = np.nan  # a chirp's frequency varies per step
    sweeps = df.groupby(
        ["question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg"], dropna=False
    )["ground_truth"]
    half_swing = (sweeps.max() - sweeps.min()) / 2
    assert half_swing.min() >= 1e-3
    assert np.isfinite(df["ground_truth"]).all()


def test_prompts_are_sentences_with_the_answer_format(tables):
    prompt = tables["linear_solve"].column("prompt")[0].as_py()
    assert prompt == (
        "Solve the linear equation a*x + b = c for x, where a = 3.000, b = 3 and c = 27. "
        "What is the value of x?\n\n"
        "Reply with only the final answer in the form [answer_start] X.YYYYYY [answer_end], "
        "written as a decimal number with exactly 6 digits after the decimal point and no other text."
    )
    assert tables["linear_solve"].column("ground_truth")[0].as_py() == 8.0


def test_first_sinusoid_sweep_values(tables):
    # linear_solve, q0, s=0.5, f=1, phase 0: p = 3 + 0.1 sin(2 pi t / 64), rendered to 3 decimals.
    t = tables["linear_solve"].slice(0, 64)
    p = t.column("p_value").to_pylist()
    assert p[:3] == [3.0, 3.01, 3.02] and p[16] == 3.1 and p[48] == 2.9
    # x = 24 / 3.1 exactly, i.e. 240/31 correctly rounded (not the float quotient 24 / 3.1).
    assert t.column("ground_truth").to_pylist()[16] == float(Fraction(240, 31))


def test_table_types_are_arrow_nullable_doubles_where_the_contract_says(tables):
    schema = tables["linear_solve"].schema
    assert schema.field("frequency_cycles").type == pa.float64()
    assert [f.name for f in LAY.arrow_schema if f.nullable] == ["frequency_cycles", "phase_deg"]
