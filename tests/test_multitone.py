"""Multi-tone drives: the release, and the measurement proven on known systems through the real
`mathbode run` + `mathbode score` against the stub server (docs/multitone.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.layout import layout

from .fixtures.stub_openai import StubOpenAI

FAMILY = "linear_solve"
PLAN = layout("multitone").multitone


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("mt") / "release"
    build_release([get_family(FAMILY)], out, drives="multitone")
    return out


@pytest.fixture(scope="module")
def rows(release):
    return pq.read_table(release / "data" / f"{FAMILY}.parquet").to_pylist()


@pytest.fixture(scope="module")
def server(rows):
    answers = {
        r["prompt"]: f"[answer_start] {math.trunc(r['ground_truth'] * 1e6) / 1e6:.6f} [answer_end]" for r in rows
    }
    deviations = {}
    for q in {r["question_id"] for r in rows}:
        truths = np.array([r["ground_truth"] for r in rows if r["question_id"] == q])
        centre, scale = float(truths.mean()), float(truths.std() * math.sqrt(2))
        deviations.update({r["prompt"]: (centre, scale) for r in rows if r["question_id"] == q})
    stub = StubOpenAI(answers, deviations=deviations).start()
    yield stub
    stub.stop()


def _reading(server, release, tmp_path, model, *args):
    out = tmp_path / f"{model}.jsonl"
    argv = ["--base-url", server.base_url, "--model", model, "-o", str(out), "--reference", str(release)]
    argv += ["--preset", "ALL", "--concurrency", "16", *args]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    report = tmp_path / f"{model}-report"
    result = CliRunner().invoke(score_cli, [str(out), "--reference", str(release), "--out", str(report)])
    assert result.exit_code == 0, result.output
    return json.loads((report / "scores.json").read_text())["multitone"]["families"][FAMILY]


def _excited(reading):
    return [line for line in reading["lines"] if line["kind"] == "excited"]


def test_a_multitone_release_has_the_planned_rows_and_validates(release, rows):
    report = validate_dataset(release)
    assert report.valid, report.format_text()
    # 3 questions x (4 realizations x 2 periods + 2 two-tone periods) x 64 steps.
    assert len(rows) == 3 * (4 * 2 + 2) * 64 == 1920
    manifest = json.loads((release / "MANIFEST.json").read_text())
    assert manifest["drives"]["multisine"]["excited_lines"] == [1, 3, 7, 9, 13, 15]
    assert manifest["drives"]["two_tone"]["products"]["2f1-f2"] == 2
    # The drive never reaches past the largest single tone's swing (2.5 epsilon): never clipped
    # where the sinusoids are not.
    fam = get_family(FAMILY)
    swing = max(abs(r["p_value"] - float(fam.p_center)) for r in rows)
    assert swing <= 2.5 * float(fam.eps) + 10**-fam.decimals


def test_every_two_tone_product_has_a_line_of_its_own():
    lines = [k for _, k in PLAN.products()]
    assert len(set(lines)) == 10 and not set(lines) & {0, *PLAN.two_tone_lines}


def test_exact_answers_read_gain_one_and_add_nothing_beyond_truncation(server, release, tmp_path):
    r = _reading(server, release, tmp_path, "truth")
    for line in _excited(r):
        # Six-decimal truncation of answers of size ~8 moves a ratio by < 1e-6 / 0.2.
        assert line["gain"] == pytest.approx(1, abs=1e-5) and abs(line["phase_deg"]) < 1e-3
    added = [line["added_db"] for line in r["lines"] if line["added_db"] is not None]
    assert max(added) <= r["truncation_bound_db"]
    assert r["verdict"] == "linear within the floor"


def test_a_delay_reads_its_phase_and_adds_nothing(server, release, tmp_path):
    r = _reading(server, release, tmp_path, "delay-2", "--protocol", "sequential", "--run-in", "64")
    for line in _excited(r):
        want = -360 * 2 * line["cycles"] / 64
        assert line["gain"] == pytest.approx(1, abs=1e-4)
        assert (line["phase_deg"] - want + 180) % 360 - 180 == pytest.approx(0, abs=0.01)
    assert r["memory"]["delay_steps"] == pytest.approx(2, abs=0.1)
    assert r["verdict"] == "memory"


def test_a_low_pass_reads_its_frequency_response(server, release, tmp_path):
    r = _reading(server, release, tmp_path, "anchor-0.5", "--protocol", "sequential", "--run-in", "64")
    for line in _excited(r):
        w = 2 * math.pi * line["cycles"] / 64
        h = 0.5 / (1 - 0.5 * complex(math.cos(w), -math.sin(w)))
        # Answers rounded to six decimals at each step of the recursion: 1e-4 in gain, 0.05 degree.
        assert line["gain"] == pytest.approx(abs(h), abs=1e-4)
        assert line["phase_deg"] == pytest.approx(math.degrees(np.angle(h)), abs=0.05)
    assert r["memory"]["lowpass_alpha"] == pytest.approx(0.5, abs=0.01)
    assert "static nonlinearity" not in r["verdict"]


@pytest.mark.parametrize(("model", "kind"), [("poly-0.05-0", "even"), ("poly-0-0.05", "odd")])
def test_a_static_nonlinearity_adds_on_its_own_kind_of_line(server, release, tmp_path, model, kind):
    r = _reading(server, release, tmp_path, model)
    other = "odd" if kind == "even" else "even"
    # Mainly its own kind: the truth is itself curved, so its square holds some odd content too
    # (measured on linear_solve: square 17 dB apart, cube 9.8 dB).
    assert r[f"{kind}_added_db"] > r[f"{other}_added_db"] + 6
    assert r["verdict"] == f"static nonlinearity ({kind})"
    # Near 0: realization-to-realization spread of the distortion moves it, within the memory threshold.
    assert all(abs(line["phase_deg"]) < 3 for line in _excited(r))


def test_doubling_the_coefficient_adds_six_db_to_the_raw_error(server, release, tmp_path):
    one = _reading(server, release, tmp_path, "poly-0-0.05")
    two = _reading(server, release, tmp_path, "poly-0-0.1")
    for a, b in zip(one["lines"], two["lines"], strict=True):
        if a["error_level_db"] is not None and a["error_level_db"] > -80:  # above the truncation floor
            assert b["error_level_db"] - a["error_level_db"] == pytest.approx(6.02, abs=0.05)


def test_per_prompt_errors_show_no_even_odd_pattern(server, release, tmp_path):
    r = _reading(server, release, tmp_path, "jitter-0.01")
    assert abs(r["even_added_db"] - r["odd_added_db"]) < 6
    assert r["verdict"] == "per-prompt inconsistency (no even/odd pattern)"
