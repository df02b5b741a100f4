"""How sure a score is: bootstrap intervals over sweeps, paired comparisons, per-row tests.

The sampling unit is the sweep. A replicate resamples, with replacement, the sweeps of every
(family, frequency) cell, so each cell keeps its size, and recomputes the whole score from the
cells' means: frequency means, mid-band errors, MB-Core, MB-Plus, the overall mean. The
95 % interval is the 2.5th and 97.5th percentile of the replicates (percentile bootstrap). The
seed is fixed, so a submission always gets the same intervals, and the replicates are one
array operation per cell (1,000 replicates of a FULL submission take a few milliseconds).

Two submissions are compared on the sweeps both were scored on, with the same resampled
sweeps for both (paired bootstrap of the difference). Per-row correctness (the answer equals
the truth truncated to six decimals) is compared as the GAP robustness method does: Wilson
intervals for each accuracy, McNemar's test for the paired difference.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Mapping

import numpy as np

from .aggregate import ANGLE_COLUMNS, HEADLINE, SWEEP_COLUMNS, ScoreConfig
from .angles import angle_mean, wrap_degrees
from .table import Table

#: A fixed seed: the same submission gives the same intervals.
SEED = 20250930
LEVEL = 0.95
DEFAULT_RESAMPLES = 1000
#: The per-sweep metrics the headline scores are made from.
INPUTS = (
    *("gain", "phase_err_deg", "r2", "res_acf1", "compliance"),
    *("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal"),
)
#: The positions of INPUTS that are angles: their cell means are taken on the circle, as the
#: point estimate's (`aggregate.frequency_summary`) are.
_ANGLES = [i for i, name in enumerate(INPUTS) if name in ANGLE_COLUMNS]


def _nanmean(x: np.ndarray, axis: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice is NaN, as pandas' mean gives
        return np.nanmean(x, axis=axis)


def _clip01(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0.0, 1.0)  # NaN stays NaN


def _core(gain: np.ndarray, phase: np.ndarray, config: ScoreConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(MB-Core, |gain-1| mid, |phase| mid) from mid-band frequency means shaped (frequencies, replicates)."""
    gain_err = _nanmean(np.abs(gain - 1), axis=0)
    phase_err = _nanmean(np.abs(phase), axis=0)
    eg = _clip01(gain_err / config.gain_scale)
    ephi = _clip01(phase_err / config.phase_scale_deg)
    return _clip01(1 - (config.gain_weight * eg + config.phase_weight * ephi)), gain_err, phase_err


def family_headline(means: dict[float, np.ndarray], config: ScoreConfig) -> dict[str, np.ndarray]:
    """The four headline scores of one family from its frequency means.

    `means[f]` holds the mean of each of INPUTS over the cell's sweeps, shaped (replicates,
    len(INPUTS)). The formulas are those of `aggregate.family_scores`, on arrays.
    """
    col = {name: i for i, name in enumerate(INPUTS)}
    mid = [means[f] for f in config.mid_band if f in means]
    every = np.stack([means[f] for f in means])  # (frequencies, replicates, inputs)
    replicates = every.shape[1]
    if not mid:
        nan = np.full(replicates, math.nan)
        return {name: nan for name in HEADLINE}
    band = np.stack(mid)
    compliance = _nanmean(every[:, :, col["compliance"]], axis=0)

    def plus(core: np.ndarray, r2: str, acf: str) -> np.ndarray:
        r2_mean = _nanmean(band[:, :, col[r2]], axis=0)
        acf_abs = _nanmean(np.abs(band[:, :, col[acf]]), axis=0)
        return core * _clip01(r2_mean) ** 0.5 * _clip01(1 - acf_abs) ** 0.5 * _clip01(compliance) ** 0.5

    core, _, _ = _core(band[:, :, col["gain"]], band[:, :, col["phase_err_deg"]], config)
    core_cal, _, _ = _core(band[:, :, col["gain_cal"]], band[:, :, col["phase_err_cal_deg"]], config)
    return {
        "mb_core": core,
        "mb_plus": plus(core, "r2", "res_acf1"),
        "mb_core_calibrated": core_cal,
        "mb_plus_calibrated": plus(core_cal, "r2_cal", "acf1_cal"),
    }


@dataclass(frozen=True)
class Cells:
    """A submission's sweeps grouped into (family, frequency) cells: the resampling strata."""

    #: family -> frequency -> per-sweep INPUTS, shaped (sweeps, len(INPUTS)).
    values: dict[str, dict[float, np.ndarray]]

    @classmethod
    def of(cls, sweeps: Table) -> "Cells":
        values: dict[str, dict[float, np.ndarray]] = {}
        numbers = sweeps.numbers(list(INPUTS))
        for (family, frequency), where in sweeps.groups(["family", "frequency_cycles"]):
            # Column-major, as the columns of a frame are: a resampled mean sums in the same order.
            values.setdefault(str(family), {})[float(frequency)] = np.asfortranarray(numbers[where])
        for family in values:
            values[family] = dict(sorted(values[family].items()))
        return cls(values)

    def draws(self, resamples: int, seed: int = SEED) -> dict[tuple[str, float], np.ndarray]:
        """Resampled sweep indices per cell, shaped (resamples, cell size); the same for the same cells."""
        rng = np.random.default_rng(seed)
        return {
            (family, f): rng.integers(0, len(table), size=(resamples, len(table)))
            for family, cells in self.values.items()
            for f, table in cells.items()
        }

    @staticmethod
    def _means(table: np.ndarray, draws: np.ndarray | None) -> np.ndarray:
        point = _cell_means(table[None, :, :])
        if draws is None:
            return point
        return _expanded(point, _cell_means(table[draws]), len(table))

    def replicate(self, draws: dict[tuple[str, float], np.ndarray] | None, config: ScoreConfig) -> dict[str, Any]:
        """Headline scores per family and overall, for each replicate (`draws` None: the sweeps as
        they are), and the cell means they were made from (`cells`: family -> frequency -> means)."""
        families, cell_means = {}, {}
        for family, cells in self.values.items():
            means = {f: self._means(table, None if draws is None else draws[(family, f)]) for f, table in cells.items()}
            families[family] = family_headline(means, config)
            cell_means[family] = means
        overall = {name: np.mean([s[name] for s in families.values()], axis=0) for name in HEADLINE}
        return {"families": families, "overall": overall, "cells": cell_means}


def _cell_means(x: np.ndarray) -> np.ndarray:
    """Means over the sweeps (axis 1) of each input: angles on the circle, the rest plainly, NaN skipped."""
    out = _nanmean(x, axis=1)
    out[..., _ANGLES] = angle_mean(x[..., _ANGLES], axis=1)
    return out


def _expanded(point: np.ndarray, resampled: np.ndarray, n: int) -> np.ndarray:
    """Resampled means with their spread widened by sqrt(n / (n - 1)).

    The bootstrap spread of a mean of n sweeps is that of the plug-in variance, which is low by
    the factor (n - 1) / n; with the few sweeps per cell of the paper's presets (6 at the mid-band
    frequencies of FULL) plain percentile intervals cover too little. Widening each cell's
    resampled means about its mean removes that bias (the "expanded" percentile bootstrap).
    """
    if n <= 1:
        return resampled
    offset = resampled - point
    offset[..., _ANGLES] = wrap_degrees(offset[..., _ANGLES])  # the short way round the circle
    return point + offset * math.sqrt(n / (n - 1))


@dataclass(frozen=True)
class Reported:
    """The point estimates a scorer reports, which its intervals must hold bit for bit.

    `families`: family -> score name -> value; `overall`: score name -> value; `cells`:
    (family, frequency) -> column -> value (the frequency summary's gain and phase error). A
    number missing here falls back to the bootstrap's own point estimate.
    """

    families: Mapping[str, Mapping[str, Any]]
    overall: Mapping[str, Any]
    cells: Mapping[tuple[str, float], Mapping[str, float]]

    @classmethod
    def of_point(cls, point: dict[str, Any]) -> "Reported":
        columns = {"gain": INPUTS.index("gain"), "phase_err_deg": INPUTS.index("phase_err_deg")}
        return cls(
            families={f: {n: float(v[0]) for n, v in s.items()} for f, s in point["families"].items()},
            overall={n: float(v[0]) for n, v in point["overall"].items()},
            cells={
                (family, f): {c: float(m[0][i]) for c, i in columns.items()}
                for family, by_f in point["cells"].items()
                for f, m in by_f.items()
            },
        )

    @classmethod
    def of_summary(
        cls, families: Mapping[str, Mapping[str, Any]], overall: Mapping[str, Any], summary: Table
    ) -> "Reported":
        cells = {
            (str(summary["family"][i]), float(summary["frequency_cycles"][i])): {
                c: float(summary[c][i]) for c in ("gain", "phase_err_deg") if c in summary
            }
            for i in range(len(summary))
        }
        return cls(families=families, overall=overall, cells=cells)

    def family_score(self, family: str, name: str, own: "Reported") -> float:
        return float(self.families.get(family, {}).get(name, own.families[family][name]))

    def overall_score(self, name: str, own: "Reported") -> float:
        return float(self.overall.get(name, own.overall[name]))

    def cell(self, family: str, frequency: float, column: str, own: "Reported") -> float:
        return float(self.cells.get((family, frequency), {}).get(column, own.cells[(family, frequency)][column]))


def _interval(samples: np.ndarray, estimate: float) -> tuple[list[float] | None, bool]:
    """The central LEVEL interval of the replicates, widened to hold `estimate` where it falls
    outside (see `intervals`), and whether it was; None when most replicates have no score."""
    finite = samples[np.isfinite(samples)]
    if finite.size < samples.size / 2:
        return None, False
    tail = (1 - LEVEL) / 2 * 100
    low, high = (float(x) for x in np.percentile(finite, [tail, 100 - tail]))
    if not math.isfinite(estimate) or low <= estimate <= high:
        return [low, high], False
    return [min(low, estimate), max(high, estimate)], True


def bootstrap(
    sweeps: Table,
    config: ScoreConfig,
    resamples: int = DEFAULT_RESAMPLES,
    families: tuple[str, ...] = (),
    reported: Reported | None = None,
) -> tuple[dict[str, Any], Table]:
    """(headline intervals, per-cell intervals) from one set of resampled sweeps.

    Headline: 95 % intervals of the headline scores, per family and overall. Every interval holds
    its estimate. The replicates compute the estimate's own statistic, but a statistic that folds
    or clips (|mean phase| near 0, a score at 0 or 1) has replicates that lie on one side of it,
    and their central 95 % can then miss it; such an interval is widened to the estimate, and
    `widened` names it, so a reader sees an interval and its estimate that agree.

    Per cell (the Bode plot's error bars): each (family, frequency) cell's mean gain and mean phase
    error, columns family, frequency_cycles, gain_low, gain_high, phase_err_low_deg,
    phase_err_high_deg, from the same replicates' cell means.

    The estimate an interval is widened to is the number the scorer reports (`reported`), that
    very float: the replicates' own point estimate is the same statistic summed in another order,
    and the two differ in the last bits from one CPU's kernels to another's.
    """
    cells = Cells.of(sweeps)
    reps = cells.replicate(cells.draws(resamples), config)
    point = cells.replicate(None, config)
    own = Reported.of_point(point)
    reported = own if reported is None else reported
    complete = all(f in cells.values for f in families)
    widened: list[str] = []

    def bounds(where: str, samples: np.ndarray, estimate: float) -> list[float] | None:
        interval, was_widened = _interval(samples, estimate)
        if was_widened:
            widened.append(where)
        return interval

    overall = {
        name: bounds(f"overall.{name}", reps["overall"][name], reported.overall_score(name, own)) if complete else None
        for name in HEADLINE
    }
    per_family = {
        family: {
            name: bounds(f"{family}.{name}", scores[name], reported.family_score(family, name, own))
            for name in HEADLINE
        }
        for family, scores in reps["families"].items()
    }
    headline = {
        "method": "percentile bootstrap over sweeps within (family, frequency) cells",
        "level": LEVEL,
        "resamples": resamples,
        "seed": SEED,
        "overall": overall,
        "families": per_family,
        "widened": widened,
    }
    gain, phase = INPUTS.index("gain"), INPUTS.index("phase_err_deg")
    rows = []
    for family, by_frequency in reps["cells"].items():
        for f, resampled in by_frequency.items():
            g, _ = _interval(resampled[:, gain], reported.cell(family, f, "gain", own))
            p, _ = _interval(resampled[:, phase], reported.cell(family, f, "phase_err_deg", own))
            rows.append([family, f, *(g or [math.nan] * 2), *(p or [math.nan] * 2)])
    columns = ["family", "frequency_cycles", "gain_low", "gain_high", "phase_err_low_deg", "phase_err_high_deg"]
    return headline, Table.from_rows([dict(zip(columns, row, strict=True)) for row in rows], columns)


def intervals(
    sweeps: Table, config: ScoreConfig, resamples: int = DEFAULT_RESAMPLES, families: tuple[str, ...] = ()
) -> dict[str, Any]:
    """95 % bootstrap intervals of the headline scores, per family and overall (see `bootstrap`)."""
    return bootstrap(sweeps, config, resamples, families)[0]


def shared_sweeps(a: Table, b: Table) -> tuple[Table, Table]:
    """Both submissions' sweeps restricted to the sweeps both were scored on, in the same order (a's)."""
    in_b = {key: i for i, key in enumerate(b.keys(SWEEP_COLUMNS))}
    pairs = [(i, in_b[key]) for i, key in enumerate(a.keys(SWEEP_COLUMNS)) if key in in_b]
    return a.take([i for i, _ in pairs]), b.take([j for _, j in pairs])


def paired_difference(
    a: Table, b: Table, config: ScoreConfig, score: str, resamples: int = DEFAULT_RESAMPLES
) -> dict[str, Any]:
    """Score(a) - score(b) on their shared sweeps, with a paired-bootstrap interval and two-sided p-value."""
    a, b = shared_sweeps(a, b)
    if a.empty:
        return {
            "score": score,
            "shared_sweeps": 0,
            "difference": None,
            "interval": None,
            "p_value": None,
            "resamples": resamples,
        }
    cells_a, cells_b = Cells.of(a), Cells.of(b)
    draws = cells_a.draws(resamples)  # the same sweeps for both: the cells hold the same keys in the same order
    point = cells_a.replicate(None, config)["overall"][score][0] - cells_b.replicate(None, config)["overall"][score][0]
    diffs = cells_a.replicate(draws, config)["overall"][score] - cells_b.replicate(draws, config)["overall"][score]
    finite = diffs[np.isfinite(diffs)]
    p_value = None
    if finite.size and math.isfinite(point):
        below, above = float(np.mean(finite <= 0)), float(np.mean(finite >= 0))
        p_value = min(1.0, 2 * min(below, above))
    return {
        "score": score,
        "shared_sweeps": len(a),
        "difference": float(point),
        "interval": _interval(diffs, float(point))[0],
        "p_value": p_value,
        "resamples": resamples,
    }


def wilson_interval(successes: int, trials: int, level: float = LEVEL) -> list[float] | None:
    """Wilson score interval of a proportion."""
    if trials == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / trials
    denom = 1 + z**2 / trials
    centre = (p + z**2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z**2 / (4 * trials**2)) / denom
    # At 0 or all successes the bound is 0 (or 1) exactly; the formula leaves rounding (2e-19).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return [low, high]


def mcnemar(only_a: int, only_b: int) -> float:
    """Two-sided p-value of McNemar's test from the discordant counts.

    Exact (binomial, p = 1/2) below 25 discordant pairs; above, the chi-square statistic with
    continuity correction, (|b - c| - 1)^2 / (b + c), on one degree of freedom.
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    if n < 25:
        k = min(only_a, only_b)
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
        return min(1.0, 2 * tail)
    statistic = (abs(only_a - only_b) - 1) ** 2 / n
    return math.erfc(math.sqrt(statistic / 2))


def paired_correctness(a: Mapping[Any, bool], b: Mapping[Any, bool]) -> dict[str, Any]:
    """McNemar's test on the rows both were scored on (each: row key -> answer correct)."""
    shared = a.keys() & b.keys()
    only_a = sum(1 for k in shared if a[k] and not b[k])
    only_b = sum(1 for k in shared if b[k] and not a[k])
    return {
        "shared_rows": len(shared),
        "only_first_correct": only_a,
        "only_second_correct": only_b,
        "mcnemar_p_value": mcnemar(only_a, only_b),
    }
