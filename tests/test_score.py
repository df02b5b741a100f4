"""End to end: the baseline calibrates the instrument; synthetic models show the expected gain and phase."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines, canonical_reference
from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.score import main as score_cli
from mathbode.core.atomic import write_jsonl
from mathbode.core.errors import ReferenceMismatchError
from mathbode.evaluator.presentation.report import write_report
from mathbode.schema import layout, validate_submission
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES
from mathbode.schema.release_reference import release_reference
from mathbode.schema.selection import key_fields, select_rows

from .conftest import COMMITTED_DIST, score_lines

LAY = layout()


def _sinusoid_sweeps(rows):
    sweeps: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["signal_type"] == "sinusoid":
            sweeps.setdefault(
                (r["family"], r["question_id"], r["amplitude_scale"], r["frequency_cycles"], r["phase_deg"]), []
            ).append(r)
    return sweeps


@pytest.fixture(scope="module")
def baseline_result(reference, all_rows, tmp_path_factory):
    return score_lines(baseline_lines(all_rows), reference, tmp_path_factory.mktemp("b"), "baseline")


def test_baseline_calibrates_the_instrument(baseline_result):
    r = baseline_result
    assert r.preset == "ALL" and r.model == "symbolic-baseline"
    assert r.overall["num_families"] == 5 and r.overall["mb_core"] >= 0.999
    for fam, s in r.families.items():
        assert s["mb_core"] >= 0.999, fam
        assert s["compliance_mean"] == 1.0
    assert np.abs(r.summary["gain"] - 1).max() < 1e-3
    assert np.abs(r.summary["phase_err_deg"]).max() < 0.01
    assert len(r.sweeps) == 5 * 3 * 45


def test_one_step_delay_shows_the_phase_lag_of_one_step(reference, all_rows, tmp_path):
    lines = []
    for sweep in _sinusoid_sweeps(all_rows).values():
        sweep.sort(key=lambda r: r["time_step"])
        for prev, row in zip([None] + sweep[:-1], sweep, strict=True):
            lines.append({**key_fields(row), "prediction": None if prev is None else prev["ground_truth"]})
    r = score_lines(lines, reference, tmp_path, "delay")
    expected = -360 * r.summary["frequency_cycles"] / 64
    assert np.abs(r.summary["phase_err_deg"] - expected).max() < 0.5
    assert np.abs(r.summary["gain"] - 1).max() < 0.02
    assert (r.summary["compliance"] == 63 / 64).all()


def test_shrinking_toward_the_mean_shows_gain_0_7(reference, all_rows, tmp_path):
    lines = []
    for sweep in _sinusoid_sweeps(all_rows).values():
        mean = float(np.mean([r["ground_truth"] for r in sweep]))
        lines += [{**key_fields(r), "prediction": mean + 0.7 * (r["ground_truth"] - mean)} for r in sweep]
    r = score_lines(lines, reference, tmp_path, "shrink")
    assert np.abs(r.summary["gain"] - 0.7).max() < 1e-3
    assert np.abs(r.summary["phase_err_deg"]).max() < 0.01
    # |G-1| = 0.3 in the mid-band exceeds the 0.25 scale: the gain half of MB-Core is lost.
    assert r.overall["mb_core"] == pytest.approx(0.5, abs=1e-3)


def test_a_smoke_submission_is_detected_and_scored_on_its_sweeps(reference, tmp_path):
    r = score_lines(baseline_lines(select_rows(reference.table, "SMOKE")), reference, tmp_path, "smoke")
    assert r.preset == "SMOKE"
    assert len(r.sweeps) == 5 * 4
    assert sorted(set(r.summary["frequency_cycles"])) == [4.0, 8.0]


def test_missing_rows_in_a_preset_count_as_non_compliant(reference, tmp_path):
    rows = select_rows(reference.table, "SMOKE")  # 256 rows a family, canonical order
    r = score_lines(baseline_lines(rows[:640]), reference, tmp_path, "half", preset="SMOKE")
    assert r.preset == "SMOKE"
    # Two families whole; of exponential_interest, the amplitude-0.5 sweeps only: half of each frequency.
    compliance = {fam: s["compliance_mean"] for fam, s in r.families.items()}
    assert compliance == {"linear_solve": 1.0, "ratio_saturation": 1.0, "exponential_interest": 0.5}
    assert r.overall["num_families"] == 3
    assert np.isnan(r.overall["mb_core"]) and np.isnan(r.overall["mb_plus"])
    assert r.overall["note"] == (
        "answers 3 of 5 families (none for linear_system, similar_triangles); the overall score needs every family"
    )


def test_a_one_family_smoke_file_is_not_an_overall_smoke_score(reference, tmp_path):
    rows = [r for r in select_rows(reference.table, "SMOKE") if r["family"] == "linear_solve"]
    r = score_lines(baseline_lines(rows), reference, tmp_path, "one")
    assert r.families["linear_solve"]["mb_core"] > 0.9999
    assert r.preset == "custom" and np.isnan(r.overall["mb_core"])
    assert r.extra["coverage"] == {"preset": "SMOKE", "sweeps": 4, "of": 20}


def test_report_files_exist_and_agree(baseline_result, tmp_path):
    out = write_report([baseline_result], tmp_path / "rep")
    assert sorted(p.name for p in out.iterdir()) == [
        ".mathbode-written.json",
        "bode.png",
        "chirp.csv",
        "chirp.png",
        "compliance.png",
        "fit_quality.png",
        "frequency_summary.csv",
        "midband_summary.png",
        "report.md",
        "results.json",
        "scores.json",
        "step.csv",
        "step.png",
        "sweeps.csv",
    ]
    scores = json.loads((out / "scores.json").read_text())
    assert scores["method"] == "paper" and scores["preset"] == "ALL"
    assert set(scores["overall"]) == {"mb_core", "mb_plus", "mb_core_calibrated", "mb_plus_calibrated", "num_families"}
    assert list(scores["families"]) == list(LAY.families)
    for fam in scores["families"].values():
        assert set(fam) == {
            "mb_core",
            "mb_plus",
            "gain_abs_err_mid",
            "phase_abs_deg_mid",
            "r2_mean",
            "acf1_abs_mean",
            "compliance_mean",
            "mb_core_calibrated",
            "mb_plus_calibrated",
            "gain_abs_err_mid_cal",
            "phase_abs_deg_mid_cal",
            "r2_cal_mean",
            "acf1_cal_abs_mean",
        }
    assert scores["accuracy"]["rows"] == 675 * 64 and scores["accuracy"]["rate"] == 1.0
    sweeps = pd.read_csv(out / "sweeps.csv")
    summary = pd.read_csv(out / "frequency_summary.csv")
    assert len(sweeps) == 675 and len(summary) == 25
    again = sweeps.groupby(["family", "frequency_cycles"])["gain"].mean()
    for _, row in summary.iterrows():
        assert row["gain"] == pytest.approx(again[(row["family"], row["frequency_cycles"])])
    mid = summary[summary["frequency_cycles"].isin([4.0, 8.0])]
    for fam, s in scores["families"].items():
        m = mid[mid["family"] == fam]
        assert s["gain_abs_err_mid"] == pytest.approx((m["gain"] - 1).abs().mean())
    md = (out / "report.md").read_text()
    assert f"**MB-Core {scores['overall']['mb_core']:.4f}**" in md
    assert (out / "bode.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reference_folder_gives_the_same_scores(baseline_result, all_rows, tmp_path):
    ref = release_reference(COMMITTED_DIST, list(LAY.families))
    r = score_lines(baseline_lines(all_rows), ref, tmp_path, "baseline")
    assert r.families == baseline_result.families


def test_builder_rows_that_do_not_match_the_release_are_refused(monkeypatch):
    monkeypatch.setitem(RELEASE_CONTENT_HASHES, "linear_solve", "sha256:0")
    with pytest.raises(ReferenceMismatchError, match="do not match the release's content hash"):
        canonical_reference(["linear_solve"])


# -- commands -----------------------------------------------------------------------------------
def test_prompts_command_writes_the_preset_rows(tmp_path, reference):
    out = tmp_path / "req.jsonl"
    result = CliRunner().invoke(prompts_cli, ["--preset", "smoke", "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 1_280
    assert list(lines[0]) == [*LAY.key, "prompt"]
    prompts = {tuple(r[k] for k in LAY.key): r["prompt"] for r in reference.table.to_pylist()}
    assert all(prompts[tuple(x[k] for k in LAY.key)] == x["prompt"] for x in lines)
    result = CliRunner().invoke(prompts_cli, ["--preset", "ALL", "--families", "linear_system", "-o", str(out)])
    assert result.exit_code == 0 and len(out.read_text().splitlines()) == 9_408


def test_baseline_command_writes_a_valid_submission(tmp_path):
    out = tmp_path / "base.jsonl"
    result = CliRunner().invoke(baseline_cli, ["-o", str(out)])
    assert result.exit_code == 0, result.output
    report = validate_submission(out)
    assert report.valid and report.summary["coverage"]["presets_complete"] == ["SMOKE", "MVP", "MVP_PLUS", "FULL"]
    assert report.summary["predictions"] == 9_600
    first = json.loads(out.read_text().splitlines()[0])
    # linear_solve q0 at t=0: a = 3.000, x = 24/3 = 8 exactly.
    assert first["response"] == "[answer_start] 8.000000 [answer_end]"


def test_score_command_refuses_an_invalid_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"family": "linear_solve"}\n')
    result = CliRunner().invoke(score_cli, [str(bad), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 1
    assert f"Error: {bad} cannot be scored: it fails validation." in result.output
    assert "field 'question_id': expected the field to be present" in result.output
    assert not (tmp_path / "rep").exists()


def test_score_command_with_two_files_writes_a_leaderboard(tmp_path, reference):
    rows = select_rows(reference.table, "SMOKE")
    write_jsonl(tmp_path / "exact.jsonl", baseline_lines(rows))
    write_jsonl(tmp_path / "zero.jsonl", ({**key_fields(r), "prediction": 0.0} for r in rows))
    out = tmp_path / "rep"
    result = CliRunner().invoke(
        score_cli, [str(tmp_path / "zero.jsonl"), str(tmp_path / "exact.jsonl"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    board = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert [b["label"] for b in board] == ["exact", "zero"]
    # A constant answer has no phase: the paper's MB-Core is n/a (empty in the CSV); calibrated, 0.
    assert float(board[0]["mb_core"]) >= 0.999 and board[1]["mb_core"] == ""
    assert float(board[1]["mb_core_calibrated"]) == 0.0
    assert (out / "exact" / "scores.json").is_file() and (out / "zero" / "scores.json").is_file()
    assert (out / "bode.png").is_file() and "## Leaderboard" in (out / "report.md").read_text()
    assert result.output.splitlines()[1].startswith("exact")


def test_score_command_json_output(tmp_path, reference):
    write_jsonl(tmp_path / "s.jsonl", baseline_lines(select_rows(reference.table, "SMOKE")))
    result = CliRunner().invoke(
        score_cli, [str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "r"), "--json", "--no-plots"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc[0]["preset"] == "SMOKE" and doc[0]["overall"]["num_families"] == 5
    assert not (tmp_path / "r" / "bode.png").exists()


def test_score_refuses_to_overwrite_a_foreign_folder(tmp_path, reference):
    write_jsonl(tmp_path / "s.jsonl", baseline_lines(select_rows(reference.table, "SMOKE")))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("x")
    result = CliRunner().invoke(score_cli, [str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "mine")])
    assert result.exit_code == 2
    assert "mathbode did not write it (no readable .mathbode-written.json" in result.output


def test_the_background_plot_worker_is_a_fresh_interpreter(baseline_result, tmp_path):
    from mathbode.evaluator.presentation.background import BackgroundPlotter

    with BackgroundPlotter() as plotter:
        assert plotter._worker is not None
        assert plotter._worker.args[1:] == ["-m", "mathbode.evaluator.presentation.plot_worker"]
        out = write_report([baseline_result], tmp_path / "rep", plotter=plotter)
    assert (out / "bode.png").read_bytes()[:4] == b"\x89PNG"


def test_a_failed_plot_worker_falls_back_to_drawing_here(baseline_result, tmp_path, monkeypatch):
    from mathbode.evaluator.presentation import background

    monkeypatch.setattr(background.sys, "executable", "/nonexistent/python")
    with background.BackgroundPlotter() as plotter:
        assert plotter._worker is None
        out = write_report([baseline_result], tmp_path / "rep", plotter=plotter)
    assert (out / "bode.png").read_bytes()[:4] == b"\x89PNG"


def test_report_tables_never_print_negative_zero(baseline_result, tmp_path):
    md = (write_report([baseline_result], tmp_path / "rep", plots=False) / "report.md").read_text()
    assert "-0.00 " not in md and "| -0.0000 |" not in md


def test_each_familys_gain_axis_shows_its_points_at_its_own_scale(baseline_result):
    import copy

    from mathbode.evaluator.presentation.plots import bode_figure

    r = copy.deepcopy(baseline_result)
    r.summary["gain"][r.summary["family"] == "linear_solve"] = 12.0
    r.summary["gain"][r.summary["family"] == "similar_triangles"] = 0.2
    axes = bode_figure([r]).axes
    families = list(r.families)
    first, last = axes[families.index("linear_solve")], axes[families.index("similar_triangles")]
    assert first.get_ylim()[1] > 12.0 and last.get_ylim()[0] < 0.2
    # Each at its own scale: the 0.2 of one family does not squash the other's panel.
    assert first.get_ylim()[0] > 0.2 and last.get_ylim()[1] < 12.0


def test_label_names_each_submission_where_model_names_collide(tmp_path):
    """Two files of one model were named by their file stems; `--label` names them, one per file."""
    files = []
    for preset in ("SMOKE", "MVP"):
        path = tmp_path / f"{preset.lower()}-run.jsonl"
        done = CliRunner().invoke(baseline_cli, ["--preset", preset, "--families", "linear_solve", "-o", str(path)])
        assert done.exit_code == 0, done.output
        files.append(str(path))
    base = [*files, "--no-plots", "--json", "--bootstrap", "0"]
    default = CliRunner().invoke(score_cli, [*base, "--out", str(tmp_path / "r0")])
    assert [d["label"] for d in json.loads(default.stdout)] == ["smoke-run", "mvp-run"]
    labels = ["--label", "quick", "--label", "mvp"]
    labelled = CliRunner().invoke(score_cli, [*base, "--out", str(tmp_path / "r1"), *labels])
    assert labelled.exit_code == 0, labelled.output
    assert [(d["label"], d["model"]) for d in json.loads(labelled.stdout)] == [
        ("quick", "symbolic-baseline"),
        ("mvp", "symbolic-baseline"),
    ]
    assert "| quick |" in (tmp_path / "r1" / "report.md").read_text()
    for labels, message in (
        (["only-one"], "--label given 1 time(s) for 2 file(s): give one --label per file"),
        (["same", "same"], "--label 'same' is given to two files; each submission needs a name of its own."),
        (["ok", " "], f"--label for {files[1]} is empty: give the name to show for it."),
    ):
        argv = [*base, "--out", str(tmp_path / "r2"), *[x for label in labels for x in ("--label", label)]]
        refused = CliRunner().invoke(score_cli, argv)
        assert refused.exit_code == 2 and message in refused.output, refused.output
        assert not (tmp_path / "r2").exists()
