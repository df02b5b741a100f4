"""How every presentation writes a number: the console, report.md and the site share these, so a
formatting fix is made once and the three never disagree (the site once printed 193 digits and
"-0.0000" where the report printed an exponent and "0.0000")."""

from __future__ import annotations

import math
from typing import Any

#: From this size on a number is shown with an exponent: 1.2e203 in fixed notation is 204 digits.
SCIENTIFIC_FROM = 1e9


def number_text(x: float | None, digits: int = 4) -> str:
    """`x` with `digits` decimals; with an exponent from `SCIENTIFIC_FROM` on ("3.4858e+202");
    "n/a" for NaN or None; never "-0.0000"."""
    if x is None or math.isnan(x):
        return "n/a"
    if math.isfinite(x) and abs(x) >= SCIENTIFIC_FROM:
        return f"{x:.{digits}e}"
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"


def value_text(x: Any, digits: int = 4) -> str:
    """`number_text` for a float or a missing value (null reads back as None or NaN); anything else
    (a count, a name) as it is."""
    return number_text(x, digits) if x is None or isinstance(x, float) else str(x)


def signed_text(x: Any, digits: int) -> str:
    """A difference with its sign ("+0.0123", "-0.5000"), "0.0000" rather than "-0.0000", an
    exponent from `SCIENTIFIC_FROM` on, "n/a" when missing."""
    if x is None or x != x:
        return "n/a"
    if math.isfinite(x) and abs(x) >= SCIENTIFIC_FROM:
        return f"{x:+.{digits}e}"
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def p_text(p: Any) -> str:
    """A p-value as a reader compares it: '< 0.0001' below that (never '0.0000'), else four decimals."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"
