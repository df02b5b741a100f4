"""How sure a score is: t intervals from the sweeps' spread, paired comparisons, per-row tests.

The sampling unit is the sweep, and the strata are the (family, frequency) cells. Every score is
a function of the cells' means; to first order (the delta method) its error is a sum over cells
of each cell's mean error, so its variance is the sum of the cells' variances of the mean, each
estimated from that cell's own sweeps (n - 1 degrees of freedom), and its 95 % interval is the
estimate +- t x the standard error, with the degrees of freedom of that sum by Satterthwaite's
formula. A cell's bar (the Bode plot's) is the plain t interval of its mean, t on n - 1 degrees
of freedom: with 2 sweeps per cell that is t = 12.7, exact for normal noise, where a bootstrap of
2 sweeps (mean +- sqrt(2) |x1 - x2| / 2) covers 61 %.

Where the score is not smooth the expansion is taken as the steepest of the secants over one and
over two standard errors of each cell's mean (12.7 for a cell of 2 sweeps), on either side, so a
clip within reach of the noise (a gain error at the 0.25 that costs the whole gain part, a phase
error at 45 degrees) still counts. A score that folds (|mean gain - 1|, |mean phase|, |ACF(1)|
near 0) is biased: |mean| is larger than |population mean| by up to sqrt(2 / pi) standard errors
(at a population mean of 0), so where a cell's mean lies within two standard errors of the
fold, the interval's upper side reaches that much further (`fold`).

No interval is given, with the reason, where the spread cannot be measured (a cell that the
score depends on with one sweep) or where no method covers 93-97 % (an overall score with a cell
of fewer than `MIN_SWEEPS` sweeps: SMOKE and MVP; see `benchmarks/bench_coverage.py`, which
measures every interval's coverage by simulation). The intervals are deterministic (no
resampling) and hold the number the scorer reports, that very float (`Reported`).

What the intervals do not include: systematic error. They measure how much the score would move
with other sweeps of the same kind, not a bias every sweep shares: a sequential run's start-up
transient without a run-in, or the truncation of answers to six decimals.

Two submissions are compared on the sweeps both were scored on, sweep by sweep (a paired t test
of the difference, on the same expansion). Per-row correctness (the answer equals the truth
truncated to six decimals) is compared as the GAP robustness method does: Wilson intervals for
each accuracy, McNemar's test for the paired difference.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
import threading
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Mapping, Sequence

import numpy as np

from ..results import HEADLINE
from ..table import Table
from .aggregate import ANGLE_COLUMNS, SWEEP_COLUMNS, ScoreConfig
from .angles import angle_mean, wrap_degrees

LEVEL = 0.95
#: `mathbode score --bootstrap N`'s default: any N > 0 turns the intervals on (they were a
#: bootstrap of N resamples; they are now computed, and the number is not used).
DEFAULT_RESAMPLES = 1000
#: The fewest sweeps in each cell an overall score depends on for it to get an interval. With 2,
#: the sign of a gain or phase error cannot be told from noise (t = 12.7 on 1 degree of
#: freedom) and |mean gain - 1|, |mean phase| are biased by an amount 2 sweeps cannot measure,
#: which averaging five families does not shrink. Measured (`benchmarks/bench_coverage.py
#: --min-sweeps 2`, 200 simulations a model): the overall's intervals would cover 0.91 where
#: the errors are 0 and 0.99-1.00 for a typical model. From 3 sweeps on (the partial file) the
#: coverage is in the band.
MIN_SWEEPS = 3
#: The same for a family's scores: from 2 sweeps per cell the t on 1 to 2 degrees of freedom is
#: wide enough, a little conservative (SMOKE and MVP: MB-Core 0.95-0.98, MB-Plus 0.95-0.99, at a
#: mean width of 0.64-0.84 for a typical model: most of [0, 1]).
MIN_FAMILY_SWEEPS = 2
METHOD = (
    "t interval on a first-order expansion of the score in its cells' means (variance from the sweeps "
    "within each (family, frequency) cell, Satterthwaite degrees of freedom)"
)
#: The per-sweep metrics the headline scores are made from.
INPUTS = (
    *("gain", "phase_err_deg", "r2", "res_acf1", "compliance"),
    *("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal"),
)
#: The positions of INPUTS that are angles: their cell means are taken on the circle, as the
#: point estimate's (`aggregate.frequency_summary`) are.
_ANGLES = [i for i, name in enumerate(INPUTS) if name in ANGLE_COLUMNS]
#: The INPUTS a score folds (takes |x - at|) at the mid-band: input position -> the fold.
_FOLDS = {INPUTS.index(name): at for name, at in (("gain", 1.0), ("gain_cal", 1.0), ("res_acf1", 0.0))}
_FOLDS |= {INPUTS.index(name): 0.0 for name in ("phase_err_deg", "phase_err_cal_deg", "acf1_cal")}
#: The INPUTS each score is made from: (at the mid-band, at every frequency), as positions.
_DEPENDS = {
    name: ([INPUTS.index(n) for n in mid], [INPUTS.index(n) for n in every])
    for name, mid, every in (
        ("mb_core", ("gain", "phase_err_deg"), ()),
        ("mb_plus", ("gain", "phase_err_deg", "r2", "res_acf1", "compliance"), ("compliance",)),
        ("mb_core_calibrated", ("gain_cal", "phase_err_cal_deg"), ()),
        ("mb_plus_calibrated", ("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal", "compliance"), ("compliance",)),
    )
}
#: E|x| - |mu| at mu = 0 for x ~ N(mu, se^2), in standard errors: the most a fold biases a mean.
_FOLD_BIAS = math.sqrt(2 / math.pi)
#: How far (standard errors) a fold or a clip is looked for from a cell's mean. Measured on the
#: simulation: the cell's own t (4.3 with 3 sweeps) covered 98-99 % on the partial file, 2 covers 95-97 %.
_SIGN_REACH = 2.0


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


def _load_t_ufuncs_alone() -> Any:
    """scipy.special's compiled ufuncs module, loaded without running `scipy/special/__init__.py`.

    That `__init__` costs 0.25-0.6 s (its array-API layer imports numpy.f2py, numpy.testing and
    more), 20 times the extension module the t functions live in. Python loads a submodule only
    under its parent package, so the parent is put in `sys.modules` as an empty shell (found by
    scipy's own spec, never executed) for as long as the submodule loads, then taken out: a later
    `import scipy.special` runs the real `__init__`, which finds the same extension modules
    already loaded, so `scipy.special.stdtrit` is this very ufunc (tests prove it).
    """
    spec = importlib.util.find_spec("scipy.special")
    if spec is None or spec.loader is None:
        raise ImportError("scipy.special not found")
    shell = importlib.util.module_from_spec(spec)
    sys.modules["scipy.special"] = shell
    try:
        return importlib.import_module("scipy.special._ufuncs")
    finally:
        if sys.modules.get("scipy.special") is shell:
            del sys.modules["scipy.special"]


@lru_cache(maxsize=1)
def t_ufuncs() -> Any:
    """The module that holds scipy's Student t ufuncs (`stdtr`, `stdtrit`): the numbers are scipy's.

    With scipy.special already imported, or another thread running (which could import it while
    the shell of `_load_t_ufuncs_alone` stands in for it), scipy.special itself; else the
    extension module alone, and scipy.special should that fail in a scipy laid out otherwise.
    """
    loaded = sys.modules.get("scipy.special")
    if loaded is not None or threading.active_count() > 1:
        return importlib.import_module("scipy.special")
    try:
        module = _load_t_ufuncs_alone()
        module.stdtr, module.stdtrit  # noqa: B018 (a layout without them is refused here, not mid-score)
        return module
    except (ImportError, AttributeError):
        return importlib.import_module("scipy.special")


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function on `df` (any positive real) degrees of freedom."""
    return float(t_ufuncs().stdtr(df, t))  # scipy loads only when an interval is computed


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The `p` quantile of Student's t on `df` (any positive real) degrees of freedom."""
    return float(t_ufuncs().stdtrit(df, p))


def _t(df: float) -> float:
    return t_quantile(0.5 + LEVEL / 2, df)


@dataclass
class Linear:
    """A score's first-order expansion in its sweeps.

    `influence[(family, frequency)]`: per sweep of the cell, the score's change (to first order)
    from that sweep's departure from its cell's means; `fold`: how far the score may lie above
    its estimate through a fold its cells cannot sign; `cells`: the size of each cell the score
    depends on, (family, frequency) -> sweeps (the fewest of any input it depends on).
    """

    influence: dict[tuple[str, float], np.ndarray] = field(default_factory=dict)
    fold: float = 0.0
    cells: dict[tuple[str, float], int] = field(default_factory=dict)

    def combined(self, other: "Linear", weight: float = 1.0) -> "Linear":
        """self + weight x other (a mean over families, a paired difference)."""
        influence = dict(self.influence)
        for key, u in other.influence.items():
            influence[key] = influence[key] + weight * u if key in influence else weight * u
        cells = dict(self.cells)
        for key, n in other.cells.items():
            cells[key] = min(n, cells.get(key, n))
        return Linear(influence, self.fold + max(weight, 0.0) * other.fold, cells)

    def variance(self) -> tuple[float, float]:
        """(variance of the score, its Satterthwaite degrees of freedom; inf when the variance is 0)."""
        parts = [
            (len(u) / (len(u) - 1) * float(np.sum(u * u)), len(u) - 1) for u in self.influence.values() if len(u) > 1
        ]
        total = sum(v for v, _ in parts)
        if total == 0:
            return 0.0, math.inf
        return total, total**2 / sum(v * v / df for v, df in parts)


def _influence(cells: dict[float, np.ndarray], family: str, config: ScoreConfig) -> dict[str, Linear]:
    """Each headline score of one family, expanded in its cells' means (see the module text)."""
    freqs = list(cells)
    k = len(INPUTS)
    means = {f: _cell_means(cells[f][None, :, :]) for f in freqs}  # (1, k) each
    dev, count, se = {}, {}, {}
    for f in freqs:
        d = cells[f] - means[f]
        d[:, _ANGLES] = wrap_degrees(d[:, _ANGLES])  # the short way round, as the circular mean unwraps
        dev[f] = d
        count[f] = np.sum(np.isfinite(d), axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            se[f] = np.sqrt(np.nansum(d * d, axis=0) / (count[f] - 1) / count[f])
    # Every cell at its mean, then each (cell, input) moved by +- one and +- two standard errors
    # (a clip or a fold that far away still counts).
    # (a cell of 2 sweeps: its t, 12.7, as its standard error is a guess from 1 degree of freedom)
    reach = {f: np.array([_t(1) if n == 2 else _SIGN_REACH for n in count[f]]) for f in freqs}
    reps = 1 + 4 * len(freqs) * k
    moved = {f: np.repeat(means[f], reps, axis=0) for f in freqs}
    steps = {}
    r = 1
    for f in freqs:
        m = means[f][0]
        h = np.where(np.isfinite(se[f]) & (se[f] > 0), se[f], 1e-6 * np.maximum(1.0, np.abs(m)))
        steps[f] = np.stack([h, h * reach[f]])
        for j in range(k):
            for step in steps[f][:, j]:
                moved[f][r, j] += step
                moved[f][r + 1, j] -= step
                r += 2
    for f in freqs:
        moved[f][:, _ANGLES] = wrap_degrees(moved[f][:, _ANGLES])
    scores = family_headline(moved, config)
    # The folds the mid-band cells cannot sign (within two standard errors of the mean).
    unsigned = {f: np.zeros(k, dtype=bool) for f in freqs}
    for f in freqs:
        if f in config.mid_band:
            for j, fold in _FOLDS.items():
                m = means[f][0, j]
                unsigned[f][j] = count[f][j] > 1 and abs(m - fold) <= _SIGN_REACH * se[f][j]
    out = {}
    for name in HEADLINE:
        s = scores[name]
        lin = Linear()
        base = s[0]
        r = 1
        for f in freqs:
            slopes = np.zeros(k)
            for j in range(k):
                secants = []
                for step in steps[f][:, j]:
                    secants += [(s[r] - base) / step, (base - s[r + 1]) / step]
                    r += 2
                finite = [x for x in secants if math.isfinite(x)]
                slopes[j] = max(finite, key=abs) if finite else 0.0
                if unsigned[f][j]:
                    lin.fold += abs(slopes[j]) * _FOLD_BIAS * float(se[f][j])
            # The cell's size for this score: the fewest sweeps of any input the score is made from
            # there (whether or not it moves the score at this estimate: a clip 2 standard errors
            # away from a mean of 2 sweeps is not known to hold).
            used = [j for j in _DEPENDS[name][0 if f in config.mid_band else 1] if count[f][j] > 0]
            if used:
                lin.cells[(family, f)] = min(int(count[f][j]) for j in used)
            d = np.where(np.isfinite(dev[f]), dev[f], 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                weights = np.where(count[f] > 0, slopes / np.maximum(count[f], 1), 0.0)
            lin.influence[(family, f)] = d @ weights
        out[name] = lin
    return out


@dataclass(frozen=True)
class Cells:
    """A submission's sweeps grouped into (family, frequency) cells: the strata."""

    #: family -> frequency -> per-sweep INPUTS, shaped (sweeps, len(INPUTS)).
    values: dict[str, dict[float, np.ndarray]]

    @classmethod
    def of(cls, sweeps: Table) -> "Cells":
        values: dict[str, dict[float, np.ndarray]] = {}
        numbers = sweeps.numbers(list(INPUTS))
        for (family, frequency), where in sweeps.groups(["family", "frequency_cycles"]):
            values.setdefault(str(family), {})[float(frequency)] = np.asfortranarray(numbers[where])
        for family in values:
            values[family] = dict(sorted(values[family].items()))
        return cls(values)

    def point(self, config: ScoreConfig) -> dict[str, Any]:
        """Headline scores per family and overall, each a 1-element array, and the cell means
        they were made from (`cells`: family -> frequency -> means, shaped (1, len(INPUTS)))."""
        families, cell_means = {}, {}
        for family, cells in self.values.items():
            means = {f: _cell_means(table[None, :, :]) for f, table in cells.items()}
            families[family] = family_headline(means, config)
            cell_means[family] = means
        overall = {name: np.mean([s[name] for s in families.values()], axis=0) for name in HEADLINE}
        return {"families": families, "overall": overall, "cells": cell_means}

    def expansion(self, config: ScoreConfig) -> dict[str, Any]:
        """Every headline score's `Linear` expansion: per family, and overall (the mean of the families)."""
        families = {family: _influence(cells, family, config) for family, cells in self.values.items()}
        overall = {}
        for name in HEADLINE:
            total = Linear()
            for scores in families.values():
                total = total.combined(scores[name], 1 / len(families))
            overall[name] = total
        return {"families": families, "overall": overall}


def _cell_means(x: np.ndarray) -> np.ndarray:
    """Means over the sweeps (axis 1) of each input: angles on the circle, the rest plainly, NaN skipped."""
    out = _nanmean(x, axis=1)
    out[..., _ANGLES] = angle_mean(x[..., _ANGLES], axis=1)
    return out


@dataclass(frozen=True)
class Reported:
    """The point estimates a scorer reports, which its intervals must hold bit for bit.

    `families`: family -> score name -> value; `overall`: score name -> value; `cells`:
    (family, frequency) -> column -> value (the frequency summary's gain and phase error). A
    number missing here falls back to the intervals' own point estimate.
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


def _too_few(lin: Linear, min_sweeps: int) -> str | None:
    """Why a score gets no interval from the size of its cells, or None."""
    short = sorted((n, family, f) for (family, f), n in lin.cells.items() if 0 < n < min_sweeps)
    if not short:
        return None
    fewest = short[0][0]
    named = [f"{family} at {f:g} cycles" for n, family, f in short if n == fewest]
    where = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    cells = "a cell" if len(named) == 1 else f"{len(named)} cells"
    if fewest == 1:
        return f"one sweep in {cells} it depends on ({where}): the spread of one sweep cannot be measured"
    return (
        f"{fewest} sweeps in {cells} it depends on ({where}): with fewer than {min_sweeps} per cell the sign of "
        "a gain or phase error cannot be told from noise, and no interval of the mean of the families covers "
        "93-97 % (simulated: 91-100 % depending on where the errors lie; benchmarks/bench_coverage.py "
        "--min-sweeps 2); each family's interval is in scores.json"
    )


def _interval(
    lin: Linear, estimate: float, bounds: tuple[float, float] = (0.0, 1.0), min_sweeps: int | None = None
) -> tuple[list[float] | None, str | None, float]:
    """(the LEVEL interval of a score, None; or None, why not) and the degrees of freedom.

    The interval is estimate -+ t x standard error (plus the fold above), cut to the score's
    range; its bounds are made from `estimate` itself, so it holds that very float."""
    if not math.isfinite(estimate):
        return None, "the score is n/a", math.nan
    why = _too_few(lin, MIN_SWEEPS if min_sweeps is None else min_sweeps)
    if why:
        return None, why, math.nan
    variance, df = lin.variance()
    half = _t(df) * math.sqrt(variance) if variance > 0 else 0.0
    low, high = estimate - half, estimate + half + lin.fold
    low, high = max(bounds[0], min(float(low), estimate)), min(bounds[1], max(float(high), estimate))
    return [min(low, estimate), max(high, estimate)], None, df


def _cell_bar(values: np.ndarray, estimate: float, angle: bool) -> list[float] | None:
    """The t interval (n - 1 degrees of freedom) of a cell's mean about its reported mean; None
    with fewer than 2 sweeps (an angle's interval is at most the whole circle)."""
    finite = values[np.isfinite(values)]
    if finite.size < 2 or not math.isfinite(estimate):
        return None
    d = finite - estimate
    if angle:
        d = wrap_degrees(d)
    half = _t(finite.size - 1) * math.sqrt(float(np.sum((d - d.mean()) ** 2)) / (finite.size - 1) / finite.size)
    if angle:
        half = min(half, 180.0)
    return [estimate - half, estimate + half]


def score_intervals(
    sweeps: Table,
    config: ScoreConfig,
    families: tuple[str, ...] = (),
    reported: Reported | None = None,
) -> tuple[dict[str, Any], Table]:
    """(headline intervals, per-cell intervals).

    Headline: 95 % intervals of the headline scores, per family and overall (None where no
    interval can be given, with the reason under `no_interval`, keyed `overall.mb_core`,
    `linear_solve.mb_plus`, ...); `df`: the degrees of freedom of each interval given.

    Per cell (the Bode plot's error bars): each (family, frequency) cell's mean gain and mean phase
    error, columns family, frequency_cycles, gain_low, gain_high, phase_err_low_deg,
    phase_err_high_deg (NaN with fewer than 2 sweeps).

    Every interval is built about the number the scorer reports (`reported`), that very float,
    and holds it.
    """
    cells = Cells.of(sweeps)
    own = Reported.of_point(cells.point(config))
    reported = own if reported is None else reported
    expanded = cells.expansion(config)
    complete = all(f in cells.values for f in families)
    reasons: dict[str, str] = {}
    dfs: dict[str, float | None] = {}

    def bounds(where: str, lin: Linear, estimate: float, min_sweeps: int | None = None) -> list[float] | None:
        interval, why, df = _interval(lin, estimate, min_sweeps=min_sweeps)
        if why:
            reasons[where] = why
        else:
            dfs[where] = round(df, 2) if math.isfinite(df) else None
        return interval

    overall: dict[str, list[float] | None] = {}
    for name in HEADLINE:
        if complete:
            overall[name] = bounds(f"overall.{name}", expanded["overall"][name], reported.overall_score(name, own))
        else:
            overall[name] = None
            reasons[f"overall.{name}"] = "the overall score needs every family"
    per_family = {
        family: {
            name: bounds(f"{family}.{name}", scores[name], reported.family_score(family, name, own), MIN_FAMILY_SWEEPS)
            for name in HEADLINE
        }
        for family, scores in expanded["families"].items()
    }
    headline = {
        "method": METHOD,
        "level": LEVEL,
        # What the intervals count: the sweeps of each (family, frequency) cell, of these problems
        # (a population of one problem a family says so: docs/intervals.md).
        "unit": "sweep",
        "n_units": len(sweeps),
        "problems": len(set(sweeps.keys(["family", "question_id"]))),
        "overall": overall,
        "families": per_family,
        "df": dfs,
        "no_interval": reasons,
    }
    gain, phase = INPUTS.index("gain"), INPUTS.index("phase_err_deg")
    rows = []
    for family, by_frequency in cells.values.items():
        for f, table in by_frequency.items():
            g = _cell_bar(table[:, gain], reported.cell(family, f, "gain", own), False)
            p = _cell_bar(table[:, phase], reported.cell(family, f, "phase_err_deg", own), True)
            rows.append([family, f, *(g or [math.nan] * 2), *(p or [math.nan] * 2)])
    columns = ["family", "frequency_cycles", "gain_low", "gain_high", "phase_err_low_deg", "phase_err_high_deg"]
    return headline, Table.from_rows([dict(zip(columns, row, strict=True)) for row in rows], columns)


def intervals(sweeps: Table, config: ScoreConfig, families: tuple[str, ...] = ()) -> dict[str, Any]:
    """95 % intervals of the headline scores, per family and overall (see `score_intervals`)."""
    return score_intervals(sweeps, config, families)[0]


def shared_sweeps(a: Table, b: Table) -> tuple[Table, Table]:
    """Both submissions' sweeps restricted to the sweeps both were scored on, in the same order (a's)."""
    in_b = {key: i for i, key in enumerate(b.keys(SWEEP_COLUMNS))}
    pairs = [(i, in_b[key]) for i, key in enumerate(a.keys(SWEEP_COLUMNS)) if key in in_b]
    return a.take([i for i, _ in pairs]), b.take([j for _, j in pairs])


def by_problem(sweeps: Table) -> Table:
    """The sweeps with those of one problem at one frequency (family, question, frequency) taken
    together as one: the cell means of their inputs, the first sweep's key. An interval over
    problems counts each problem once in a cell, as a test over problems must (a problem asked at
    two amplitudes is one problem, not two). Sweeps alone in their group pass unchanged."""
    groups = sweeps.groups(["family", "question_id", "frequency_cycles"])
    if all(len(where) == 1 for _, where in groups):
        return sweeps
    numbers = sweeps.numbers(list(INPUTS))
    firsts = sweeps.take([int(where[0]) for _, where in groups])
    means = np.array([_cell_means(numbers[where][None, :, :])[0] for _, where in groups])
    for j, name in enumerate(INPUTS):
        firsts[name] = means[:, j]
    return firsts


def paired_difference(a: Table, b: Table, config: ScoreConfig, score: str) -> dict[str, Any]:
    """Score(a) - score(b) on their shared sweeps, with a 95 % interval and the two-sided p-value of
    a paired t test (both scores expanded in the same sweeps, the difference sweep by sweep)."""
    return paired_differences(a, b, config, (score,))[score]


def paired_differences(a: Table, b: Table, config: ScoreConfig, scores: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`paired_difference` of each of `scores`: the sweeps paired, grouped and expanded once for all
    of them (every headline score comes out of one expansion; a paired release asks two of each
    of its 25 variants)."""
    a, b = shared_sweeps(a, b)
    if a.empty:
        return {score: _paired_test(a, score, math.nan, None) for score in scores}
    cells_a, cells_b = Cells.of(a), Cells.of(b)
    points_a, points_b = cells_a.point(config)["overall"], cells_b.point(config)["overall"]
    lines_a, lines_b = cells_a.expansion(config)["overall"], cells_b.expansion(config)["overall"]
    return {
        score: _paired_test(
            a, score, float(points_a[score][0] - points_b[score][0]), lines_a[score].combined(lines_b[score], -1.0)
        )
        for score in scores
    }


def _paired_test(shared: Table, score: str, point: float, lin: Linear | None) -> dict[str, Any]:
    """One score's paired difference (`point`, its expansion `lin`; None: no sweep is shared)."""
    out: dict[str, Any] = {"score": score, "shared_sweeps": len(shared), "difference": None, "interval": None}
    out |= {"p_value": None, "df": None, "method": "paired t test"}
    if lin is None:
        return out
    lin.fold = 0.0  # a fold biases both scores alike
    out["difference"] = point
    # Two submissions' folds bias both alike, so 2 sweeps per cell are enough (type-I error below 5 %).
    interval, why, df = _interval(lin, point, (-1.0, 1.0), min_sweeps=2)
    out["interval"] = interval
    if why:
        out["no_interval"] = why
        return out
    variance, _ = lin.variance()
    out["df"] = round(df, 2) if math.isfinite(df) else None
    if math.isfinite(point):
        if variance == 0:
            out["p_value"] = 1.0 if point == 0 else 0.0
        else:
            out["p_value"] = min(1.0, 2 * (1 - t_cdf(abs(point) / math.sqrt(variance), df)))
    return out


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of `p_values` (the family-wise error held at any level)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


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
    """McNemar's test on what both were scored on (each: row key -> answer correct), counted in
    distinct prompts where the first knows its rows' prompts (`units`: row key -> prompt number):
    rows asking one prompt are one unit, exact when strictly more than half of its rows are."""
    shared = a.keys() & b.keys()
    units: Mapping[Any, int] | None = getattr(a, "units", None)
    if units is None:
        only_a = sum(1 for k in shared if a[k] and not b[k])
        only_b = sum(1 for k in shared if b[k] and not a[k])
        unit, n_units = "row", len(shared)
    else:
        groups: dict[int, list[Any]] = {}
        for k in shared:
            groups.setdefault(units[k], []).append(k)
        exact_a = [2 * sum(a[k] for k in keys) > len(keys) for keys in groups.values()]
        exact_b = [2 * sum(b[k] for k in keys) > len(keys) for keys in groups.values()]
        only_a = sum(x and not y for x, y in zip(exact_a, exact_b, strict=True))
        only_b = sum(y and not x for x, y in zip(exact_a, exact_b, strict=True))
        unit, n_units = "distinct prompt", len(groups)
    return {
        "shared_rows": len(shared),
        "unit": unit,
        "n_units": n_units,
        "only_first_correct": only_a,
        "only_second_correct": only_b,
        "mcnemar_p_value": mcnemar(only_a, only_b),
    }
