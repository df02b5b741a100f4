"""Strict parsing (paper, appendix C): one golden case per decision in the table of docs/scoring.md."""

from __future__ import annotations

import math

import pytest

from mathbode.schema.parsing import parse_response, truncate

S, E = "[answer_start]", "[answer_end]"

GOLDEN = [
    # (id, response, parsed value or None for non-compliant)
    ("plain six decimals", f"{S} 7.741935 {E}", 7.741935),
    ("more decimals are truncated, not rounded", f"{S} 7.7419359 {E}", 7.741935),
    ("negative truncates toward zero", f"{S} -1.9999999 {E}", -1.999999),
    ("fewer decimals are padded", f"{S} 3.5 {E}", 3.5),
    ("integer", f"{S} 12 {E}", 12.0),
    ("leading plus is accepted", f"{S} +5.5 {E}", 5.5),
    ("leading point .5", f"{S} .5 {E}", 0.5),
    ("trailing point 5.", f"{S} 5. {E}", 5.0),
    ("sentence full stop after the number", f"{S} The answer is 4.5. {E}", 4.5),
    ("the last literal inside wins", f"{S} x = 3, so 4.25 {E}", 4.25),
    ("unit separated by a space", f"{S} 12.5 cm {E}", 12.5),
    ("whitespace and newlines inside the tags", f"{S}\n\t 7.25 \n{E}", 7.25),
    ("text around the tags is ignored", f"Let me think. 99 {S} 1.000000 {E} done, 42", 1.0),
    ("the last complete pair wins", f"{S} 1 {E} then {S} 2 {E}", 2.0),
    ("nested start tags: the innermost start before the end", f"{S} 1 {S} 2 {E}", 2.0),
    ("a trailing unclosed start is ignored", f"{S} 1 {E} {S} 2", 1.0),
    ("unicode minus is non-compliant", f"{S} \u22125.0 {E}", None),
    ("en dash is non-compliant", f"{S} \u20135.0 {E}", None),
    ("thousands separator is non-compliant", f"{S} 1,234.5 {E}", None),
    ("scientific notation is non-compliant", f"{S} 1e-3 {E}", None),
    ("capital E notation is non-compliant", f"{S} 2.5E+2 {E}", None),
    ("number glued to a unit is non-compliant", f"{S} 12cm {E}", None),
    ("version-like dotted number is non-compliant", f"{S} 1.2.3 {E}", None),
    ("fraction text has two literals: the last is taken", f"{S} 1/3 {E}", 3.0),
    ("no literal inside", f"{S} seven {E}", None),
    ("empty payload", f"{S}{E}", None),
    ("missing tags", "7.741935", None),
    ("missing end tag", f"{S} 7.741935", None),
    ("missing start tag", f"7.741935 {E}", None),
    ("end before start", f"{E} 7.5 {S}", None),
    ("tags are case-sensitive", "[ANSWER_START] 7.5 [ANSWER_END]", None),
    ("nan text", f"{S} nan {E}", None),
    ("inf text", f"{S} inf {E}", None),
    ("a literal beyond float range is non-finite", f"{S} {'9' * 400} {E}", None),
    ("non-ASCII digits are not digits", f"{S} \u0667.5 {E}", None),
    ("negative zero", f"{S} -0.0000001 {E}", -0.0),
    # Invisible formatting characters (Unicode Cf) inside the tags: never stepped over.
    ("zero-width space inside a number", f"{S} 8\u200b.000000 {E}", None),
    ("word joiner before a number", f"{S} \u20608.5 {E}", None),
    ("byte-order mark inside the tags", f"{S} \ufeff8.5 {E}", None),
    ("soft hyphen inside a number", f"{S} 8.000\u00ad000 {E}", None),
    ("zero-width joiner after a number", f"{S} 8.5\u200d {E}", None),
    ("a zero-width space outside the tags is other text", f"\u200b{S} 8.5 {E}", 8.5),
    ("a no-break space is a space, not a format character", f"{S}\u00a08.5 {E}", 8.5),
]


@pytest.mark.parametrize("response, expected", [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN])
def test_golden(response, expected):
    got = parse_response(response)
    if expected is None:
        assert math.isnan(got)
    else:
        assert got == expected
        assert math.copysign(1.0, got) == math.copysign(1.0, expected)  # -0.0 stays negative


def test_none_and_empty_are_non_compliant():
    assert math.isnan(parse_response(None)) and math.isnan(parse_response(""))


@pytest.mark.parametrize(
    "value, expected",
    [
        (1.23456789, 1.234567),
        (-1.23456789, -1.234567),
        (1e-7, 0.0),
        (2.0, 2.0),
        (1e20, 1e20),
        (float("inf"), None),
        (float("nan"), None),
    ],
)
def test_prediction_numbers_are_truncated_too(value, expected):
    got = truncate(value)
    assert math.isnan(got) if expected is None else got == expected


def test_the_vectorised_truncation_equals_the_exact_one():
    import numpy as np

    from mathbode.schema.parsing import truncate_array

    rng = np.random.default_rng(0)
    values = np.concatenate(
        [
            np.round(rng.uniform(-1e4, 1e4, 5000), 6),  # exactly six decimals: the doubtful products
            rng.uniform(-1e3, 1e3, 5000),
            [0.0, -0.0, 1e-7, -1e-7, 0.1 + 0.2, 2.675, 1e20, -1e300, 1e16 + 1, 7.7419359, -1.9999999],
            # Floats next to a decimal of six places: their product with 10^6 rounds onto an integer.
            [1.9999999999999998, 2.0000000000000004, -0.9999999999999999, 0.30000000000000004],
            np.nextafter(np.round(rng.uniform(-1e3, 1e3, 2000), 6), np.inf),
            np.nextafter(np.round(rng.uniform(-1e3, 1e3, 2000), 6), -np.inf),
            np.round(rng.uniform(4e9, 1e10, 1000), 6),  # where 10^6 x passes 2^52
            np.nextafter(np.round(rng.uniform(4e9, 1e10, 1000), 6), np.inf),
        ]
    )
    expected = np.array([truncate(float(v)) for v in values])
    got = truncate_array(values)
    assert np.array_equal(got, expected) and np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e"])
def test_an_invisible_character_is_named_as_the_reason(char):
    from mathbode.schema.parsing import NON_COMPLIANT_KINDS, why_non_compliant

    assert why_non_compliant(f"{S} 8{char}.000000 {E}") == "invisible"
    assert "invisible formatting character" in NON_COMPLIANT_KINDS["invisible"]
    assert why_non_compliant(f"{S} 8.000000 {E}") is None
