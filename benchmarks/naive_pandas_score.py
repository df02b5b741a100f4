"""The comparison of issue #11: a straightforward pandas implementation of `mathbode-score`'s job.

    python benchmarks/naive_pandas_score.py SUBMISSION.jsonl DIST OUT

What a competent analyst would write in an afternoon, the way the paper authors' evaluation
code does it: read the JSON Lines with pandas, merge with the release's rows on the key,
parse each response (the strict parser, applied row by row), `groupby` the sweeps and call
`numpy.linalg.lstsq` per sweep (and per chirp window), aggregate with pandas, write the same
CSVs and the headline scores. No validation, no figures, no intervals. `bench_score.py`
checks that its CSVs equal the tool's (so both did the same job) before it compares times.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from mathbode.schema.parsing import parse_response, truncate

KEY = ["family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step"]
SWEEP = ["family", "question_id", "amplitude_scale", "frequency_cycles", "phase_deg"]
TRANSIENT = ["family", "question_id", "signal_type", "amplitude_scale"]
T, FLOOR, MID = 64, 2e-6, (4.0, 8.0)
CHIRP_START, CHIRP_END, SWITCH, WINDOW = 1.0, 16.0, 32, 16


def fit(t, y, omega, intercept=True):
    cols = ([np.ones_like(t)] if intercept else []) + [np.sin(omega * t), np.cos(omega * t)]
    design = np.column_stack(cols)
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return design, coef


def sweep_metrics(group: pd.DataFrame) -> pd.Series:
    group = group.sort_values("time_step")
    t_all = group["time_step"].to_numpy(float)
    truth, model = group["ground_truth"].to_numpy(float), group["answer"].to_numpy(float)
    omega = 2 * math.pi * group["cycles"].iloc[0] / T
    out = dict.fromkeys(COLUMNS, math.nan)
    ok = np.isfinite(model)
    n = int(ok.sum())
    out.update(compliance=n / T, n_finite=float(n))
    d, c = fit(t_all, truth, omega)
    amp_t, ph_t = math.hypot(c[1], c[2]), math.atan2(c[2], c[1])
    out.update(amp_truth=amp_t, phase_truth_deg=math.degrees(ph_t))
    if n < 16:
        return pd.Series(out)
    t, y = t_all[ok], model[ok]
    dm, cm = fit(t, y, omega)
    amp_m, ph_m = math.hypot(cm[1], cm[2]), math.atan2(cm[2], cm[1])
    res = y - dm @ cm
    still = amp_m <= FLOOR  # answers that do not move have no phase
    out.update(amp_model=amp_m, flat=float(still))
    if not still:
        out["phase_model_deg"] = math.degrees(ph_m)
    out["r2"] = 1 - (res @ res) / (((y - y.mean()) @ (y - y.mean())) or 1.0)
    flat = amp_t <= 1e-12 * max(1.0, abs(c[0]))
    wrapped = (ph_m - ph_t + math.pi) % (2 * math.pi) - math.pi
    if not flat:
        out["gain"] = amp_m / amp_t
        if not still:
            out["phase_err_deg"] = math.degrees(wrapped)
    # A constant and every harmonic that does not alias (k f folded into (0, T/2), distinct), together.
    ks, seen = [], []
    for k in (1, 2, 3):
        a = (k * group["cycles"].iloc[0]) % T
        a = min(a, T - a)
        if 0 < a < T / 2 and a not in seen:
            ks.append(k)
            seen.append(a)
    cols = [np.ones_like(t)] + [g(k * omega * t) for k in ks for g in (np.sin, np.cos)]
    ch = np.linalg.lstsq(np.column_stack(cols), y, rcond=None)[0]
    h = {k: math.hypot(ch[1 + 2 * i], ch[2 + 2 * i]) for i, k in enumerate(ks)}
    h1, h2, h3 = (h.get(k, math.nan) for k in (1, 2, 3))
    out.update(h1=h1, h2=h2, h3=h3, h2_over_h1=h2 / h1 if h1 > 0 else math.nan)
    r = (y - y.mean()) - amp_m * np.sin(omega * t + ph_m)
    if not flat:
        out["res_rms_norm"] = math.sqrt(np.mean(r**2)) / amp_t
    a, b = r[:-1] - r[:-1].mean(), r[1:] - r[1:].mean()
    den = math.sqrt((a @ a) * (b @ b))
    out["res_acf1"] = (a @ b) / den if r.size >= 3 and den > 0 else math.nan
    if flat:
        return pd.Series(out)
    # Calibrated: the model's residual less the part the truth's own shape explains.
    if amp_m <= FLOOR:
        out.update(gain_cal=0.0, phase_err_cal_deg=180.0)
    else:
        out["gain_cal"] = 1.0 if abs(amp_m - amp_t) <= FLOOR else amp_m / amp_t
        out["phase_err_cal_deg"] = 0.0 if amp_t * abs(wrapped) <= FLOOR else math.degrees(wrapped)
    e = res - (amp_m / amp_t) * (truth[ok] - d[ok] @ c)
    spread = (y - y.mean()) @ (y - y.mean())
    if math.sqrt(np.mean(e**2)) <= FLOOR:
        out.update(r2_cal=1.0, acf1_cal=0.0)
    elif spread <= 0:
        out.update(r2_cal=0.0, acf1_cal=1.0)
    else:
        out.update(r2_cal=1 - (e @ e) / spread, acf1_cal=(e[:-1] @ e[1:]) / spread)
    return pd.Series(out)


COLUMNS = [
    *("gain", "phase_err_deg", "r2", "h1", "h2", "h3", "h2_over_h1", "res_rms_norm", "res_acf1", "compliance"),
    *("amp_truth", "amp_model", "phase_truth_deg", "phase_model_deg", "n_finite", "flat"),
    *("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal"),
]


def chirp_windows(group: pd.DataFrame) -> pd.DataFrame:
    group = group.sort_values("time_step")
    truth, model = group["ground_truth"].to_numpy(float), group["answer"].to_numpy(float)
    k = CHIRP_END / CHIRP_START
    t = np.arange(T, dtype=float)
    theta = 2 * math.pi * CHIRP_START * (T - 1) / (T * math.log(k)) * (k ** (t / (T - 1)) - 1)
    rows = []
    for first in range(T - WINDOW + 1):
        w = slice(first, first + WINDOW)
        fits = []
        for y in (truth[w], model[w]):
            ok = np.isfinite(y)
            if ok.sum() < 12:
                fits.append((math.nan, math.nan))
                continue
            design = np.column_stack([np.ones(ok.sum()), np.sin(theta[w][ok]), np.cos(theta[w][ok])])
            c = np.linalg.lstsq(design, y[ok], rcond=None)[0]
            fits.append((math.hypot(c[1], c[2]), math.atan2(c[2], c[1])))
        (amp_t, ph_t), (amp_m, ph_m) = fits
        centre = first + (WINDOW - 1) / 2
        rows.append(
            {
                "centre_step": centre,
                "frequency_cycles": CHIRP_START * k ** (centre / (T - 1)),
                "gain": amp_m / amp_t if amp_t > 0 else math.nan,
                "phase_err_deg": math.degrees((ph_m - ph_t + math.pi) % (2 * math.pi) - math.pi)
                if amp_t > 0
                else math.nan,
                "compliance": float(np.isfinite(model[w]).mean()),
            }
        )
    return pd.DataFrame(rows)


def step_metrics(group: pd.DataFrame) -> pd.Series:
    group = group.sort_values("time_step")
    truth, model = group["ground_truth"].to_numpy(float), group["answer"].to_numpy(float)
    names = ("pre_error", "steady_state_error", "overshoot", "rise_time", "settling_time", "delay")
    out = dict.fromkeys(names, math.nan)
    out["compliance"] = float(np.isfinite(model).mean())
    pre = model[SWITCH - 16 : SWITCH]
    truth_pre = truth[:SWITCH].mean()
    jump = truth[SWITCH:].mean() - truth_pre
    if np.isfinite(pre).any() and jump != 0:
        y_pre = np.nanmean(pre)
        r = (model[SWITCH:] - y_pre) / jump
        out["pre_error"] = (y_pre - truth_pre) / jump
        if np.isfinite(r[-16:]).any():
            out["steady_state_error"] = np.nanmean(r[-16:]) - 1
        if np.isfinite(r).any():
            out["overshoot"] = max(0.0, np.nanmax(r) - 1)
        for name, level in (("rise_time", 0.9), ("delay", 0.5)):
            hit = np.flatnonzero(np.nan_to_num(r, nan=-np.inf) >= level)
            if hit.size:
                out[name] = float(hit[0])
        outside = np.flatnonzero(~(np.abs(r - 1) <= 0.05))
        if outside.size == 0:
            out["settling_time"] = 0.0
        elif outside[-1] < len(r) - 1:
            out["settling_time"] = float(outside[-1] + 1)
    return pd.Series(out)


def answer(row: pd.Series) -> float:
    if isinstance(row.get("response"), str):
        return parse_response(row["response"])
    value = row.get("prediction")
    return math.nan if value is None or pd.isna(value) else truncate(float(value))


def main(submission: str, dist: str, out: str) -> None:
    manifest = json.loads((Path(dist) / "MANIFEST.json").read_text())
    files = [Path(dist) / f for fam in manifest["families"].values() for f in fam["files"]]
    reference = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    reference["family_order"] = reference["family"].map({f: i for i, f in enumerate(manifest["families"])})
    answers = pd.read_json(submission, lines=True, dtype=False, precise_float=True)
    for column in ("frequency_cycles", "phase_deg"):  # chirp and step keys carry null
        answers[column] = answers[column].astype(float)
        reference[column] = reference[column].astype(float)
    answers["answer"] = answers.apply(answer, axis=1)
    merged = reference.merge(answers[[*KEY, "answer"]], on=KEY, how="inner")

    sines = merged[merged["signal_type"] == "sinusoid"].assign(cycles=lambda d: d["frequency_cycles"])
    sweeps = sines.groupby(["family_order", *SWEEP], sort=True).apply(sweep_metrics).reset_index()
    sweeps = sweeps.drop(columns="family_order")
    cells = sweeps.groupby(["family", "frequency_cycles"], sort=False)
    circled = sweeps.copy()  # angles moved by 360 towards their cell's circular mean, when it has one
    for angle in ("phase_err_deg", "phase_err_cal_deg", "phase_truth_deg", "phase_model_deg"):
        rad = np.radians(sweeps[angle])
        s_mean = np.sin(rad).groupby([sweeps["family"], sweeps["frequency_cycles"]]).transform("mean")
        c_mean = np.cos(rad).groupby([sweeps["family"], sweeps["frequency_cycles"]]).transform("mean")
        centre = np.degrees(np.arctan2(s_mean, c_mean))
        off = sweeps[angle] - centre
        moved = np.where(off > 180, sweeps[angle] - 360, np.where(off <= -180, sweeps[angle] + 360, sweeps[angle]))
        circled[angle] = np.where(np.hypot(s_mean, c_mean) >= 1e-6, moved, sweeps[angle])
    averaged = [c for c in COLUMNS if c not in ("flat", "phase_truth_deg", "phase_model_deg")]
    summary = circled.groupby(["family", "frequency_cycles"], sort=False)[averaged].mean()
    for angle in ("phase_err_deg", "phase_err_cal_deg"):
        outside = (summary[angle] < -180) | (summary[angle] >= 180)
        summary[angle] = summary[angle].where(~outside, (summary[angle] + 180) % 360 - 180)
    resultant = cells["phase_err_deg"].agg(
        lambda v: math.hypot(np.nanmean(np.sin(np.radians(v))), np.nanmean(np.cos(np.radians(v))))
    )
    summary["phase_spread_deg"] = np.degrees(np.sqrt(-2 * np.log(np.minimum(resultant, 1.0))))
    summary["num_sweeps"] = cells.size()
    summary["num_flat"] = cells["flat"].sum().astype(int)
    summary = summary.reset_index()

    families = {}
    for family, rows in summary.groupby("family", sort=False):
        mid = rows[rows["frequency_cycles"].isin(MID)]
        compliance = rows["compliance"].mean()
        scores = {}
        for suffix, (g, p, r2, acf) in {
            "": ("gain", "phase_err_deg", "r2", "res_acf1"),
            "_calibrated": ("gain_cal", "phase_err_cal_deg", "r2_cal", "acf1_cal"),
        }.items():
            eg = np.clip((mid[g] - 1).abs().mean() / 0.25, 0, 1)
            ep = np.clip(mid[p].abs().mean() / 45.0, 0, 1)
            core = np.clip(1 - (0.5 * eg + 0.5 * ep), 0, 1)
            plus = core * math.sqrt(np.clip(mid[r2].mean(), 0, 1)) * math.sqrt(np.clip(1 - mid[acf].abs().mean(), 0, 1))
            scores[f"mb_core{suffix}"] = float(core)
            scores[f"mb_plus{suffix}"] = float(plus * math.sqrt(np.clip(compliance, 0, 1)))
        families[family] = scores
    overall = pd.DataFrame(families).T.mean().to_dict()

    transients = merged[merged["signal_type"] != "sinusoid"].sort_values(["family_order", *TRANSIENT, "time_step"])
    chirps = transients[transients["signal_type"] == "chirp"]
    chirp = chirps.groupby(["family_order", *TRANSIENT], sort=True).apply(chirp_windows).reset_index()
    chirp = chirp.drop(columns=["family_order", chirp.columns[5]])
    steps = transients[transients["signal_type"] == "step"]
    step = steps.groupby(["family_order", *TRANSIENT], sort=True).apply(step_metrics).reset_index()
    step = step.drop(columns="family_order")

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    sweeps.to_csv(folder / "sweeps.csv", index=False)
    summary.to_csv(folder / "frequency_summary.csv", index=False)
    chirp.to_csv(folder / "chirp.csv", index=False)
    step.to_csv(folder / "step.csv", index=False)
    (folder / "scores.json").write_text(json.dumps({"overall": overall, "families": families}, indent=2))


if __name__ == "__main__":
    main(*sys.argv[1:4])
