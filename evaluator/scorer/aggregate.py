"""From per-sweep metrics to per-frequency means, family scores (MB-Core, MB-Plus) and the overall score."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mathbode.core.errors import UsageError

from ..results import HEADLINE
from ..table import Table, compensated_means, nanmean
from .angles import angle_spread, unwrap_about_mean, wrap_degrees
from .calibration import FLOOR
from .metrics import MIN_POINTS, SWEEP_METRICS

#: The columns that name a sinusoid sweep in sweeps.csv (its SweepKey less the signal type, always sinusoid).
SWEEP_COLUMNS = ["family", "question_id", "amplitude_scale", "frequency_cycles", "phase_deg"]
SWEEP_COLUMN_TYPES = {"family": object, "question_id": np.int64, "amplitude_scale": float}
SWEEP_COLUMN_TYPES |= {"frequency_cycles": float, "phase_deg": float}
FAMILY_SCORE_FIELDS = (
    "mb_core",
    "mb_plus",
    "gain_abs_err_mid",
    "phase_abs_deg_mid",
    "r2_mean",
    "acf1_abs_mean",
    "compliance_mean",
    "mb_core_calibrated",
    "mb_plus_calibrated",
)


@dataclass(frozen=True)
class ScoreConfig:
    """Scales and weights of the scores; the defaults are the paper's."""

    #: Frequencies (cycles per 64 steps) the scores are taken from.
    mid_band: tuple[float, ...] = (4.0, 8.0)
    #: |gain - 1| that costs the whole gain part of MB-Core.
    gain_scale: float = 0.25
    #: |phase error| in degrees that costs the whole phase part of MB-Core.
    phase_scale_deg: float = 45.0
    gain_weight: float = 0.5
    phase_weight: float = 0.5

    @property
    def is_paper(self) -> bool:
        """Whether these are the paper's scales and weights (only then is the method `paper`)."""
        return self == PAPER_CONFIG

    def validate(self) -> "ScoreConfig":
        """Refuse scales and weights no score can be made with."""
        if not (self.gain_scale > 0 and self.phase_scale_deg > 0):
            raise UsageError("--gain-scale and --phase-scale must be greater than 0.")
        if self.gain_weight < 0 or self.phase_weight < 0 or self.gain_weight + self.phase_weight <= 0:
            raise UsageError("--gain-weight and --phase-weight must be 0 or more, and not both 0.")
        return self


PAPER_CONFIG = ScoreConfig()


def clip01(x: float) -> float:
    return math.nan if x != x else min(1.0, max(0.0, x))


#: The per-sweep columns that are angles (degrees): averaged on the circle (`angles`).
ANGLE_COLUMNS = ("phase_err_deg", "phase_err_cal_deg", "phase_truth_deg", "phase_model_deg")


#: Per-sweep columns with no mean across a cell: `flat` is counted instead (`num_flat`), and a
#: sweep's absolute phases (truth's, model's) start at 0, 120 or 240 degrees by design, so their
#: mean over a cell's sweeps means nothing (the phase error is what is averaged).
NOT_AVERAGED = ("flat", "phase_truth_deg", "phase_model_deg")


def frequency_summary(sweeps: Table) -> Table:
    """Family x frequency: the mean over sweeps of every metric (but NOT_AVERAGED), skipping NaN; angles on the circle
    (`angles.angle_mean`), with `phase_spread_deg`, the circular standard deviation of the sweeps'
    phase errors, `num_sweeps`, and `num_flat`, the sweeps whose answers do not move (no phase).
    Families keep the sweeps' order; frequencies ascend within each."""
    metrics = [m for m in SWEEP_METRICS if m in sweeps and m not in NOT_AVERAGED]
    keys = ["family", "frequency_cycles"]
    angles = [a for a in ANGLE_COLUMNS if a in sweeps]
    cells = sweeps.groups(keys)
    family_rank = {f: n for n, f in enumerate(dict.fromkeys(k[0] for k, _ in cells))}
    cells.sort(key=lambda cell: (family_rank[cell[0][0]], cell[0][1]))
    rows: dict[str, list[Any]] = {name: [] for name in [*keys, *metrics]}
    spread, size, flat = [], [], []
    numbers = sweeps.numbers(metrics)
    for (family, frequency), where in cells:
        rows["family"].append(family)
        rows["frequency_cycles"].append(frequency)
        cell = numbers[where]
        for j, m in enumerate(metrics):
            if m in angles:
                # Moved by 360 towards the cell's circular mean before the plain mean: the plain
                # mean the paper's code takes, bit for bit, wherever nothing was moved.
                cell[:, j] = unwrap_about_mean(cell[:, j])
        means = compensated_means(cell)
        for j, m in enumerate(metrics):
            rows[m].append(float(wrap_degrees(means[j : j + 1])[0]) if m in angles else float(means[j]))
        if "phase_err_deg" in sweeps:
            spread.append(float(angle_spread(sweeps["phase_err_deg"][where])))
        size.append(len(where))
        if "flat" in sweeps:
            flat.append(int(np.nansum(sweeps["flat"][where])))
    summary = Table(
        {name: np.array(values, dtype=object if name == "family" else float) for name, values in rows.items()}
    )
    if "phase_err_deg" in sweeps:
        summary["phase_spread_deg"] = np.array(spread, dtype=float)
    summary["num_sweeps"] = np.array(size, dtype=np.int64)
    if "flat" in sweeps:
        summary["num_flat"] = np.array(flat, dtype=np.int64)
    return summary


def family_scores(summary: Table, config: ScoreConfig | None = None) -> dict[str, dict[str, Any]]:
    """Per family: mid-band errors, MB-Core, and MB-Plus with fit quality, residual ACF and compliance."""
    config = config or ScoreConfig()
    scores: dict[str, dict[str, Any]] = {}
    for (family,), where in summary.groups(["family"]):
        rows = summary.take(where)
        mid = rows[np.isin(rows["frequency_cycles"], config.mid_band)]
        compliance = nanmean(rows["compliance"])
        paper = _mb_scores(mid, compliance, config, ("gain", "phase_err_deg", "r2", "res_acf1"))
        note = _why_na(rows, mid, config) if math.isnan(paper[0]) else None
        scores[str(family)] = {**dict(zip(_PAPER_FIELDS, paper, strict=True)), "compliance_mean": compliance}
        if "gain_cal" in mid:
            calibrated = _mb_scores(mid, compliance, config, ("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal"))
            scores[str(family)].update(zip(_CALIBRATED_FIELDS, calibrated, strict=True))
        if note:
            scores[str(family)]["note"] = note
    return scores


_PAPER_FIELDS = ("mb_core", "mb_plus", "gain_abs_err_mid", "phase_abs_deg_mid", "r2_mean", "acf1_abs_mean")
_CALIBRATED_FIELDS = (
    *("mb_core_calibrated", "mb_plus_calibrated", "gain_abs_err_mid_cal", "phase_abs_deg_mid_cal"),
    *("r2_cal_mean", "acf1_cal_abs_mean"),
)


def _mb_scores(
    mid: Table, compliance: float, config: ScoreConfig, columns: tuple[str, str, str, str]
) -> tuple[float, float, float, float, float, float]:
    """(MB-Core, MB-Plus, |gain-1|, |phase|, R2, |ACF1|) from the mid-band frequency means of the
    given gain, phase, fit-quality and residual-ACF columns (the paper's, or the calibrated ones)."""
    gain, phase, r2, acf = columns
    # Means over frequency rows skip NaN (empty -> NaN).
    gain_err = nanmean(np.abs(mid[gain] - 1))
    phase_err = nanmean(np.abs(mid[phase]))
    eg = clip01(gain_err / config.gain_scale)
    ephi = clip01(phase_err / config.phase_scale_deg)
    core = clip01(1 - (config.gain_weight * eg + config.phase_weight * ephi))
    r2_mean = nanmean(mid[r2])
    acf_abs = nanmean(np.abs(mid[acf]))
    plus = core * clip01(r2_mean) ** 0.5 * clip01(1 - acf_abs) ** 0.5 * clip01(compliance) ** 0.5
    return core, plus, gain_err, phase_err, r2_mean, acf_abs


def _why_na(rows: Table, mid: Table, config: ScoreConfig) -> str:
    """Why a family's MB-Core could not be computed, in a user's words."""
    if not (rows["compliance"] > 0).any():
        return "no compliant answers"
    band = " and ".join(f"{f:g}" for f in config.mid_band)
    have = sorted({float(f) for f in mid["frequency_cycles"]})
    if len(have) < len(config.mid_band):
        answered = ", ".join(f"{f:g}" for f in sorted({float(f) for f in rows["frequency_cycles"]}))
        return f"MB-Core needs frequencies {band} (answered: {answered})"
    if "num_flat" in mid and mid["num_flat"].sum() > 0 and np.isnan(mid["phase_err_deg"]).all():
        return (
            f"the answers do not move at frequencies {band} (every fitted swing is within the format's floor, "
            f"{FLOOR:g}), so they have no phase; the calibrated MB-Core counts such a sweep as 180 degrees off"
        )
    return f"every sweep at frequencies {band} has fewer than {MIN_POINTS} compliant answers of 64"


def overall(scores: dict[str, dict[str, Any]], families: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Plain mean over the families; n/a (with a `note` saying why) when any of `families` has no score.

    A submission that answers one family must not rank as if it answered all five.
    """

    def mean(field: str) -> float:
        values = [s[field] for s in scores.values()]
        return float(np.mean(values)) if values else math.nan

    fields = [f for f in HEADLINE if all(f in s for s in scores.values())]
    out: dict[str, Any] = {**{f: mean(f) for f in fields}, "num_families": len(scores)}
    missing = [f for f in families or () if f not in scores]
    if missing:
        # The mean over the families answered is kept apart and named, never as the overall: an
        # inspect or lm-eval task over these families reports this number.
        out["subset"] = {"families": list(scores), **{f: out[f] for f in fields}}
        for f in fields:
            out[f] = math.nan
        out["note"] = (
            f"answers {len(scores)} of {len(families or ())} families (none for {', '.join(missing)}); "
            "the overall score needs every family"
        )
    return out
