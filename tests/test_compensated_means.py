"""`table.compensated_means` sums in Python floats; these are, to the bit, the sums of the row-by-row
numpy form it replaced (kept here as the reference: pandas' Kahan-compensated grouped mean)."""

from __future__ import annotations

import numpy as np
import pytest

from mathbode.evaluator.table import compensated_means


def _numpy_rows(values: np.ndarray) -> np.ndarray:
    total = np.zeros(values.shape[1])
    compensation = np.zeros(values.shape[1])
    count = np.zeros(values.shape[1])
    for row in values:
        seen = ~np.isnan(row)
        y = np.where(seen, row - compensation, 0.0)
        t = total + y
        with np.errstate(invalid="ignore"):
            c = (t - total) - y
        compensation = np.where(seen, np.where(np.isnan(c), 0.0, c), compensation)
        total = np.where(seen, t, total)
        count += seen
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


@pytest.mark.parametrize("seed", range(4))
def test_the_same_floats_as_the_numpy_rows(seed):
    rng = np.random.default_rng(seed)
    for trial in range(300):
        rows, columns = int(rng.integers(0, 40)), int(rng.integers(1, 12))
        values = rng.normal(size=(rows, columns)) * 10.0 ** float(rng.integers(-8, 12))
        values[rng.random((rows, columns)) < 0.2] = np.nan
        if rows and trial % 5 == 0:
            values[rng.integers(0, rows), rng.integers(0, columns)] = (np.inf, -np.inf)[trial % 2]
        assert compensated_means(values).tobytes() == _numpy_rows(values).tobytes()


def test_compensation_recovers_what_a_plain_sum_loses():
    values = np.array([[1e16], [1.0], [1.0], [-1e16], [np.nan]])
    assert compensated_means(values).tolist() == [0.5]  # a plain left-to-right sum gives 0.0
    assert np.isnan(compensated_means(np.full((3, 1), np.nan))).all()
    assert compensated_means(np.empty((0, 2))).shape == (2,)
