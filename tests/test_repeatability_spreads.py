"""Repeatability's spreads are found at once for the prompts answered alike and by `_spread` for the
others: the very numbers of `_spread` called on every repeated group (the reference, kept here)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mathbode.evaluator.scorer import repeatability as rep


def _reference(families, prompts, identities, values, names):
    """`repeatability` with `_spread` on every repeated group, as it was before the shortcut."""
    families, identities, values, starts, sizes = rep.repeat_groups(families, prompts, identities, values)
    repeated = sizes >= 2
    found = [rep._spread(values[a : a + n]) for a, n in zip(starts[repeated], sizes[repeated], strict=True)]
    spreads, relative = np.array(found).reshape(-1, 2).T
    return spreads, relative, families[starts[repeated]]


@pytest.mark.parametrize("seed", range(5))
def test_the_same_numbers_as_spread_on_every_group(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    families = rng.integers(0, 3, n)
    prompts = rng.integers(0, 400, n)
    values = np.round(rng.normal(size=n), 2)
    alike = rng.random(n) < 0.6
    values[alike] = (prompts[alike] % 7) / 4  # most prompts answered alike each time
    values[rng.random(n) < 0.1] = np.nan
    values[rng.random(n) < 0.02] = np.inf
    values[rng.random(n) < 0.02] = -0.0
    identities = np.where(np.isfinite(values), np.round(values * 1e6), -1).astype(np.int64)
    names = ["a", "b", "c"]

    spreads, relative, family_of = _reference(families, prompts, identities, values, names)
    found = rep.repeatability(families, prompts, identities, values, names)
    assert found is not None and found["overall"]["repeated_prompts"] == len(spreads)

    def mean(of):
        finite = of[np.isfinite(of)]
        return float(np.mean(finite)) if finite.size else float("nan")

    for f, name in enumerate(names):
        mask = family_of == f
        expected = {"spread_mean": mean(spreads[mask]), "spread_relative_mean": mean(relative[mask])}
        got = {k: found["families"][name][k] for k in expected}
        assert json.dumps(got) == json.dumps(expected)  # NaN equal to NaN, every float to the bit
