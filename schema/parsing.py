"""Strict answer parsing (paper, appendix C), decided case by case; see the table in docs/scoring.md ("Strict parsing").

Part of the contract (the answer format is a layout fact), so the evaluator scores with it and
the runner counts compliant answers with it as they arrive.

From a raw response: take the last complete `[answer_start] ... [answer_end]` pair, find the
plain decimal literals inside it, take the last one, and truncate it toward zero to six
decimals. Anything else is non-compliant and parses to NaN.
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import ROUND_DOWN, Context, Decimal, InvalidOperation
from typing import Callable, NamedTuple

import numpy as np

from .layout import layout

_FORMAT = layout()
START, END, DECIMALS = _FORMAT.answer_start, _FORMAT.answer_end, _FORMAT.answer_decimals
_QUANTUM = Decimal(1).scaleb(-DECIMALS)

#: How `scores.json` names this parser.
PARSER_NAME = "strict (paper appendix C; last complete tag pair, last plain decimal literal, truncated to 6 decimals)"

# A plain decimal literal: optional ASCII sign, ASCII digits, optional point: `5`, `-5.25`, `.5`,
# `5.`, `+5`. It must stand alone, so pieces of other notations are not mistaken for answers:
# - not glued to a letter, a digit of any script, `_` or `.` on either side (`1e-3`, `12cm`,
#   `1.2.3`, `x5`, an Arabic-Indic digit before `.5`);
# - not a sign glued to such a character (`1e-3` would otherwise yield `3`);
# - not preceded by a non-ASCII minus or dash (`−5` must not read as +5);
# - not part of a thousands-separated number (`1,234.5`).
_DASHES = "\u2212\u2010\u2011\u2012\u2013\u2014\u2015\ufe63\uff0d"
LITERAL = re.compile(
    rf"(?<![\w.{_DASHES}])"
    r"(?<![\w.][+-])"
    r"(?<!\d,)"
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?!\w)(?!\.\d)(?!,\d)"
)


def payload(response: str) -> str | None:
    """The text inside the last complete tag pair, or None."""
    end = response.rfind(END)
    if end < 0:
        return None
    start = response.rfind(START, 0, end)
    if start < 0:
        return None
    return response[start + len(START) : end]


def truncate(value: Decimal | float) -> float:
    """Toward zero, to exactly six decimals; NaN for non-finite input."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return math.nan
        value = Decimal(repr(float(value)))  # float(): numpy scalars repr as "np.float64(...)"
    # Enough precision for every digit of the literal, so quantize never fails on long input.
    context = Context(prec=max(28, len(value.as_tuple().digits), value.adjusted() + 1) + DECIMALS + 2)
    out = float(value.quantize(_QUANTUM, rounding=ROUND_DOWN, context=context))
    return out if math.isfinite(out) else math.nan


def truncate_array(values: np.ndarray) -> np.ndarray:
    """`truncate` of every value, vectorised: exact, the same floats as the scalar function.

    trunc(x * 10^6) / 10^6 in floating point is exact except where x * 10^6 lies within a few
    units in the last place of an integer (the product's rounding can cross it) or beyond 2^52;
    those few values go through the exact decimal path.
    """
    values = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # 1e305 * 10^6 overflows: the exact path takes it
        scaled = values * 10.0**DECIMALS
        out = np.trunc(scaled) / 10.0**DECIMALS
        doubtful = ~np.isfinite(scaled) | (np.abs(scaled) >= 2.0**52)
        doubtful |= np.abs(scaled - np.round(scaled)) <= 8 * np.spacing(np.abs(scaled))
        # A value that is the float nearest a decimal of six places or fewer (k / 10^6 gives it back)
        # is its own truncation: its shortest text has no seventh decimal to cut. Most exact
        # answers are such decimals; only the rest need the text.
        own = doubtful & (np.round(scaled) / 10.0**DECIMALS == values)
    out[own] = values[own]
    doubtful &= ~own
    finite = np.isfinite(values)
    out[~finite] = np.nan  # as `truncate` gives (no answer: NaN, as most of a column of responses' numbers)
    doubtful &= finite
    for i in np.flatnonzero(doubtful):
        out[i] = _truncate_repr(float(values[i]))
    return out


def _truncate_repr(value: float) -> float:
    """`truncate` of one float: its shortest decimal text cut after six decimals, as `truncate`
    quantizes that same text toward zero (the text in exponent form takes the decimal path)."""
    text = repr(value)
    if "e" in text or "n" in text:  # 1e-07, 1.5e+16, nan, inf
        return truncate(value)
    return truncate_literal(text)


def has_invisible(text: str) -> bool:
    """Whether `text` holds a Unicode format character (category Cf: zero-width space and joiners,
    word joiner, byte-order mark, soft hyphen, direction marks). None is ASCII, so ASCII text is
    answered at once."""
    return not text.isascii() and any(unicodedata.category(ch) == "Cf" for ch in text)


def parse_response(response: str | None) -> float:
    """The compliant answer in `response`, or NaN when it is non-compliant."""
    if not response:
        return math.nan
    inside = payload(response)
    if inside is None or has_invisible(inside):
        # `8\u200b.000000` would otherwise read as .000000: an invisible character is never
        # stepped over (which number was meant cannot be told), so the answer is not compliant.
        return math.nan
    literals = LITERAL.findall(inside)
    if not literals:
        return math.nan
    return truncate_literal(literals[-1])


def truncate_literal(literal: str) -> float:
    """Truncate a decimal literal toward zero to six decimals by cutting its digits (exact)."""
    point = literal.find(".")
    if point >= 0:
        literal = literal[: point + 1 + DECIMALS]
    value = float(literal)
    return value if math.isfinite(value) else math.nan


#: Why a response is not compliant, in the order a reader should hear it (see `why_non_compliant`).
NON_COMPLIANT_KINDS = {
    "empty": "were empty",
    "no-tags": "had no answer tags at all",
    "start-only": f"had {START} but no {END} after it",
    "end-only": f"had {END} but no {START} before it",
    "no-number": "had a tag pair with no plain decimal number inside",
    "invisible": "had an invisible formatting character (zero-width space, word joiner, byte-order mark, "
    "soft hyphen) inside the tag pair",
    "not-finite": "had a number too large to be finite",
    "null": "gave no answer (prediction null)",
}


def why_non_compliant(response: str | None) -> str | None:
    """The kind of non-compliance of a raw response (a key of NON_COMPLIANT_KINDS), or None when compliant."""
    if not response or not response.strip():
        return "empty"
    has_start, has_end = START in response, END in response
    if payload(response) is None:
        if has_start and not has_end:
            return "start-only"
        if has_end and not has_start:
            return "end-only"
        # Both tags present but the end only before the start: no complete pair.
        return "start-only" if has_start else "no-tags"
    if has_invisible(payload(response) or ""):
        return "invisible"
    if math.isnan(parse_response(response)):
        literals = LITERAL.findall(payload(response) or "")
        return "not-finite" if literals else "no-number"
    return None


# --- The paper authors' evaluation code (MathBode-Eval), as a named alternative -------------------
#
# Its rules, restated so its published numbers can be reproduced (docs/scoring.md, "Strict parsing"): normalize
# line ends, delete zero-width characters, read U+2212 as `-` and a no-break space as a space;
# take the last `[answer_start] ... [answer_end]` pair (shortest match from each start); inside it
# take the last number token, exponent allowed, with no look at its neighbours (`12cm` gives 12,
# `1,234.5` gives 234.5); truncate toward zero to six decimals with Python's default decimal
# precision of 28 digits, which refuses numbers of 1e22 and above (non-compliant there too).
_EVAL_DELETE = "\u200b\u200c\u200d\u2060\ufeff"
_EVAL_TRANSLATE = {**dict.fromkeys(map(ord, _EVAL_DELETE)), ord("\u2212"): "-", ord("\xa0"): " "}
_EVAL_PAIR = re.compile(re.escape(START) + r"\s*(.*?)\s*" + re.escape(END), re.DOTALL)
_EVAL_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_EVAL_CONTEXT = Context(prec=28)


def _eval_payload(response: str) -> str | None:
    text = response.replace("\r\n", "\n").replace("\r", "\n").translate(_EVAL_TRANSLATE)
    pairs = _EVAL_PAIR.findall(text)
    return pairs[-1] if pairs else None


def parse_response_eval(response: str | None) -> float:
    """The answer MathBode-Eval's parser reads in `response`, or NaN where it reads none."""
    if not response:
        return math.nan
    inside = _eval_payload(response)
    if inside is None:
        return math.nan
    numbers = _EVAL_NUMBER.findall(inside)
    if not numbers:
        return math.nan
    try:
        value = Decimal(numbers[-1]).quantize(_QUANTUM, rounding=ROUND_DOWN, context=_EVAL_CONTEXT)
    except InvalidOperation:
        return math.nan
    out = float(value)
    return out if math.isfinite(out) else math.nan


def why_non_compliant_eval(response: str | None) -> str | None:
    """`why_non_compliant` under MathBode-Eval's rules."""
    if not response or not response.strip():
        return "empty"
    inside = _eval_payload(response)
    if inside is None:
        return why_non_compliant(response) or "no-tags"  # same tag rules: say which tag is missing
    if math.isnan(parse_response_eval(response)):
        return "not-finite" if _EVAL_NUMBER.search(inside) else "no-number"
    return None


class Parser(NamedTuple):
    """A named set of answer rules: how a raw response becomes a number (NaN = non-compliant)."""

    #: The `--parser` choice.
    name: str
    #: How `scores.json` describes it.
    description: str
    parse: Callable[[str | None], float]
    why_non_compliant: Callable[[str | None], str | None]


STRICT = Parser("strict", PARSER_NAME, parse_response, why_non_compliant)
MATHBODE_EVAL = Parser(
    "mathbode-eval",
    "mathbode-eval (the paper authors' evaluation code: last tag pair, last number token with exponent, "
    "Unicode minus read as '-', truncated to 6 decimals; see docs/scoring.md)",
    parse_response_eval,
    why_non_compliant_eval,
)
#: The parsers a user can choose; strict (the paper's appendix C) is the default.
PARSERS = {p.name: p for p in (STRICT, MATHBODE_EVAL)}
