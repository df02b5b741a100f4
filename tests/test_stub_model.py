"""The stand-in model a new user starts from the README (`python -m mathbode.runner.stub_model
--port 8000`): the truth scores 1, the noisy truth is compliant and not exact, a delay of one step
reads as one (issue 40, section 6)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.runner.stub_model import StubModel, answer_text, main

ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}


@pytest.fixture(scope="module")
def server():
    """The module run as the README runs it, on a free port (`--port 0`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mathbode.runner.stub_model", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("Serving truth, noisy, delay-K at http://127.0.0.1:"), line + process.stderr.read()
        yield line.split(" at ")[1].split()[0]
    finally:
        process.terminate()
        process.wait(10)


def run_and_score(base_url: str, model: str, tmp_path, *extra: str) -> dict:
    out = tmp_path / f"{model}.jsonl"
    argv = ["--model", model, "--base-url", base_url, "--preset", "SMOKE", "--families", "linear_solve"]
    done = CliRunner().invoke(run_cli, [*argv, "-o", str(out), *extra], env=ENV)
    assert done.exit_code == 0, done.output
    scored = CliRunner().invoke(score_cli, [str(out), "--json", "--no-plots", "--out", str(tmp_path / f"r-{model}")])
    assert scored.exit_code == 0, scored.output
    (document,) = json.loads(scored.stdout)
    return document


def test_the_truth_scores_1_and_the_noisy_truth_is_compliant_but_not_exact(server, tmp_path):
    truth = run_and_score(server, "truth", tmp_path)
    family = truth["families"]["linear_solve"]
    assert family["mb_core_calibrated"] == 1.0 and family["mb_plus_calibrated"] == 1.0
    assert truth["accuracy"]["rate"] == 1.0
    noisy = run_and_score(server, "noisy", tmp_path)
    assert noisy["families"]["linear_solve"]["compliance_mean"] == 1.0
    assert noisy["accuracy"]["rate"] < 0.05  # 1 % noise on answers of six decimals: almost never exact
    assert noisy["families"]["linear_solve"]["mb_core_calibrated"] < 0.99


def test_a_delay_of_one_step_lags_22_5_and_45_degrees_at_4_and_8_cycles(server, tmp_path):
    """A pure delay of 1 step of 64 lags 360 f / 64 degrees: 22.5 at 4 cycles, 45 at 8 (mean 33.75)."""
    delayed = run_and_score(server, "delay-1", tmp_path, "--protocol", "sequential")
    family = delayed["families"]["linear_solve"]
    assert family["phase_abs_deg_mid"] == pytest.approx(33.75, abs=1e-6)
    assert family["gain_abs_err_mid"] == pytest.approx(0.0, abs=1e-5)  # six-decimal truncation only


def test_an_unknown_model_is_a_404_naming_the_models(server):
    body = json.dumps({"model": "gpt-9", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{server}/chat/completions", body, {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 404
    message = json.loads(err.value.read())["error"]["message"]
    assert message == "The model `gpt-9` does not exist; this stub serves truth, noisy, delay-K."


def test_answers_off_the_release_are_not_answers_and_noise_is_seeded():
    model = StubModel({"What is p?": 2.0}, noise=0.01, seed=3)
    assert model.answer("truth", [{"role": "user", "content": "What is p?"}]) == answer_text(2.0)
    assert answer_text(2.0) == "[answer_start] 2.000000 [answer_end]"
    assert model.answer("truth", [{"role": "user", "content": "Another?"}]) == "I do not know this question."
    first = [model.answer("noisy", [{"role": "user", "content": "What is p?"}]) for _ in range(3)]
    again = StubModel({"What is p?": 2.0}, noise=0.01, seed=3)
    assert first == [again.answer("noisy", [{"role": "user", "content": "What is p?"}]) for _ in range(3)]
    assert len(set(first)) == 3


def test_a_bad_port_or_a_missing_release_is_refused_with_a_message(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--port", "70000"])
    assert exit_.value.code == 2 and "--port 70000: a port is 0 to 65535" in capsys.readouterr().err
    assert main(["--reference", str(tmp_path / "nowhere")]) == 2
    assert "Error: --reference" in capsys.readouterr().err
