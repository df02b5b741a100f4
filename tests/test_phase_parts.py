"""Lag and per-prompt inconsistency (issue #30, section 4): the mirrored 120/240-degree pairs
split a phase error into the part a memory shows and the part per-prompt errors make."""

from __future__ import annotations

import numpy as np
import pytest

from mathbode.schema.selection import key_fields, select_rows

from .conftest import by_sweep, score_lines


@pytest.fixture(scope="module")
def full_rows(reference):
    return select_rows(reference.table, "FULL")


def test_a_memoryless_model_has_no_lag_and_its_inconsistency_is_reported(reference, full_rows, tmp_path):
    """5 % per-prompt errors, the same for every repeat of a prompt: the paper's phase term sees
    0 lag in the pairs' average while each sweep's phase is tens of degrees off."""
    rng = np.random.default_rng(1)
    error: dict[str, float] = {}
    lines = []
    for r in full_rows:
        e = error.setdefault(r["prompt"], 1 + 0.05 * rng.standard_normal())
        lines.append({**key_fields(r), "prediction": r["ground_truth"] * e})
    scored = score_lines(lines, reference, tmp_path, "memoryless")
    parts = scored.extra["phase_parts"]
    assert set(parts) == set(scored.families)
    for family, p in parts.items():
        assert p["lag_deg"] == pytest.approx(0.0, abs=1e-9), family
        assert p["inconsistency_deg"] > 5 and p["pairs"] == 4, (family, p)


def test_a_delay_is_all_lag_and_no_inconsistency(reference, full_rows, tmp_path):
    """A circular 2-step delay of every sweep: -45 degrees at 4 cycles, -90 at 8; the mid-band lag
    is their mean, -67.5, and both sweeps of a pair agree."""
    lines = []
    for sweep in by_sweep(full_rows):
        truth = np.array([r["ground_truth"] for r in sweep])
        for r, y in zip(sweep, np.roll(truth, 2), strict=True):
            lines.append({**key_fields(r), "prediction": float(y)})
    parts = score_lines(lines, reference, tmp_path, "delay").extra["phase_parts"]
    for family, p in parts.items():
        # Six-decimal answers: the fitted phases are exact to about 1e-4 degrees.
        assert p["lag_deg"] == pytest.approx(-67.5, abs=1e-3), family
        assert p["inconsistency_deg"] == pytest.approx(0.0, abs=1e-3), family


def test_the_report_says_what_the_papers_phase_term_measured(reference, full_rows, tmp_path):
    from mathbode.evaluator.presentation.report import phase_parts_lines

    lines = [
        {**key_fields(r), "prediction": r["ground_truth"] * (1.01 if r["time_step"] % 3 else 0.99)} for r in full_rows
    ]
    text = "\n".join(phase_parts_lines(score_lines(lines, reference, tmp_path, "x")))
    assert "The paper's phase term, |mean phase| of a cell, averages each pair and so measures the lag alone." in text
    assert "| family | lag (deg) | per-prompt inconsistency (deg) | pairs |" in text
