"""The lines a reader sees about a neighbour test (computed by `scorer.compare`, read from its dict)."""

from __future__ import annotations

from typing import Any


def describe(test: dict[str, Any]) -> list[str]:
    """The lines a reader sees about one neighbour test."""
    a, b = test["first"], test["second"]
    lines = []
    if test["shared_sweeps"] < max(test["sweeps"]):
        lines.append(
            f"{a} vs {b}: compared only on the {test['shared_sweeps']:,} sweeps both were scored on "
            f"({test['sweeps'][0]:,} and {test['sweeps'][1]:,})."
        )
    for score, t in test["scores"].items():
        if t["difference"] is None or t["difference"] != t["difference"]:
            lines.append(f"{a} - {b}, {score}: n/a on the shared sweeps.")
            continue
        interval = t["interval"]
        if interval is None:
            lines.append(f"{a} - {b}, {score}: {t['difference']:+.4f}, no interval or test: {t.get('no_interval')}.")
            continue
        ci = f"[{interval[0]:+.4f}, {interval[1]:+.4f}]"
        p = "p n/a" if t["p_value"] is None else _p_text(t["p_value"])
        lines.append(f"{a} - {b}, {score}: {t['difference']:+.4f} {ci}, {p} (paired t test)")
    c = test["correctness"]
    if c["shared_rows"] and "n_units" in c:
        lines.append(
            f"{a} vs {b}, exact {c['unit']}s: {c['only_first_correct']:,} right only in {a}, "
            f"{c['only_second_correct']:,} only in {b}, of {c['n_units']:,} shared ({c['shared_rows']:,} rows); "
            f"McNemar {_p_text(c['mcnemar_p_value'])}"
        )
    elif c["shared_rows"]:  # a document from before units were counted
        lines.append(
            f"{a} vs {b}, exact rows: {c['only_first_correct']:,} right only in {a}, {c['only_second_correct']:,} "
            f"only in {b}, of {c['shared_rows']:,} shared rows; McNemar {_p_text(c['mcnemar_p_value'])}"
        )
    return lines


def _p_text(p: float) -> str:
    """'p = 0.0312', or 'p < 1e-16' where the value is below what a double tells from 0."""
    return "p < 1e-16" if p < 1e-16 else f"p = {p:.3g}"
