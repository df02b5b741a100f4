"""Multi-tone drives: the release, and the measurement proven on known systems through the real
`mathbode run` + `mathbode score` against the stub server (docs/multitone.md)."""

from __future__ import annotations

import copy
import json
import math
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.evaluator.scorer.multitone import (
    INCONSISTENCY,
    STATELESS_MEMORY,
    STATELESS_VERDICT,
    MultitoneSweep,
    measure_family,
)
from mathbode.runner.systems import deviations
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.layout import layout

from .fixtures.stub_openai import StubOpenAI

FAMILY = "linear_solve"
PLAN = layout("multitone").multitone


def _build(tmp_path_factory, family):
    out = tmp_path_factory.mktemp("mt") / "release"
    build_release([get_family(family)], out, drives="multitone")
    return out, pq.read_table(out / "data" / f"{family}.parquet").to_pylist()


def _deviations(rows):
    """prompt -> (centre, scale) of its question's exact answers: what the stub's static maps deviate from."""
    return deviations(rows)


def _serve(rows):
    answers = {
        r["prompt"]: f"[answer_start] {math.trunc(r['ground_truth'] * 1e6) / 1e6:.6f} [answer_end]" for r in rows
    }
    return StubOpenAI(answers, deviations=_deviations(rows)).start()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _build(tmp_path_factory, FAMILY)


@pytest.fixture(scope="module")
def release(built):
    return built[0]


@pytest.fixture(scope="module")
def rows(built):
    return built[1]


@pytest.fixture(scope="module")
def server(rows):
    stub = _serve(rows)
    yield stub
    stub.stop()


#: Readings already made in this worker, by (server, release, model, run options, family): a stub
#: model answers the same prompts alike every time, so a test that compares several systems
#: reads again what the single-system tests read (the summary's five runs are four of theirs).
_READINGS: dict[tuple, tuple[StubOpenAI, dict]] = {}


def _reading(server, release, tmp_path, model, *args, family=FAMILY):
    """The multi-tone reading of `model` (run against the stub, then scored): a fresh copy."""
    # By the server's identity (a later stub may take a stopped one's port): the entry keeps the
    # server object alive, so its id is never another's.
    key = (id(server), str(release), model, args, family)
    if key not in _READINGS:
        _READINGS[key] = (server, _run_and_read(server, release, tmp_path, model, *args, family=family))
    return copy.deepcopy(_READINGS[key][1])


def _run_and_read(server, release, tmp_path, model, *args, family=FAMILY):
    out = tmp_path / f"{model}.jsonl"
    argv = ["--base-url", server.base_url, "--model", model, "-o", str(out), "--reference", str(release)]
    argv += ["--preset", "ALL", "--concurrency", "16", *args]
    result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    report = tmp_path / f"{model}-report"
    result = CliRunner().invoke(score_cli, [str(out), "--reference", str(release), "--out", str(report)])
    assert result.exit_code == 0, result.output
    return json.loads((report / "scores.json").read_text())["multitone"]["families"][family]


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
    assert r["verdict"] == f"linear within the floor; {STATELESS_VERDICT}"
    # The two-tone's tones against the exact answers' own: 0.0 dB, not +0.4 (an rms over the
    # experiments was divided by a mean of magnitudes, and the questions' sizes differ).
    tones = r["two_tone"][:2]
    assert [(p["product"], p["truth_level_db"], p["level_db"]) for p in tones] == [("f1", 0.0, 0.0), ("f2", 0.0, 0.0)]


def test_a_delay_reads_its_phase_and_adds_nothing(server, release, tmp_path):
    r = _reading(server, release, tmp_path, "delay-2", "--protocol", "sequential", "--run-in", "64")
    for line in _excited(r):
        want = -360 * 2 * line["cycles"] / 64
        assert line["gain"] == pytest.approx(1, abs=1e-4)
        assert (line["phase_deg"] - want + 180) % 360 - 180 == pytest.approx(0, abs=0.01)
    assert r["memory"]["delay_steps"] == pytest.approx(2, abs=0.1)
    # The model that fits is named, with both residuals: a pure delay is not read as a low-pass.
    assert r["verdict"] == "memory (delay)"
    assert r["memory"]["model"] == "delay" and r["memory"]["delay_residual"] < 1e-3 < r["memory"]["lowpass_residual"]


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
    assert r["verdict"] == f"static nonlinearity ({kind}); {STATELESS_VERDICT}"
    # A cubic map of the answer explains it whole (measured 0.99 and more).
    assert r["static_share"] >= 0.9
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
    # No static map explains errors particular to each prompt: a cubic fit of 64 steps takes about
    # 4/52 of their power at the detection lines (4 nonlinear regressors, 52 real dimensions).
    assert r["static_share"] <= 0.2
    assert r["verdict"] == f"{INCONSISTENCY}; {STATELESS_VERDICT}"
    # Stateless: the phase is not read as memory, and the reading says why.
    assert r["memory"] == {"read": False, "found": None, "why": STATELESS_MEMORY}


def test_a_smooth_map_with_even_and_odd_parts_alike_is_a_static_nonlinearity(server, release, tmp_path):
    # A square and a cube together: even and odd added levels within 6 dB, as per-prompt errors'
    # are; what tells them apart is that a static map of the answer explains this distortion whole.
    r = _reading(server, release, tmp_path, "poly-0.05-0.1")
    assert abs(r["even_added_db"] - r["odd_added_db"]) < 6
    assert r["static_share"] >= 0.9
    assert r["verdict"] == f"static nonlinearity (even and odd); {STATELESS_VERDICT}"


def test_a_deterministic_model_reads_noise_none_not_n_a(release, rows, tmp_path):
    # The same answers in both periods of every realization: the noise is exactly zero (no dB).
    file = _cubic_predictions(rows, tmp_path / "exact.jsonl", b=0)
    out = tmp_path / "report"
    result = CliRunner().invoke(score_cli, [str(file), "--reference", str(release), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    m = json.loads((out / "scores.json").read_text())["multitone"]["families"][FAMILY]
    assert m["periods_identical"] is True
    assert [iv["noise_db"] for iv in m["bla_intervals"]] == [None] * 6
    bla = [line for line in (out / "report.md").read_text().splitlines() if line.startswith(f"| {FAMILY} | ")]
    noise = [line.split(" | ")[4] for line in bla if line.split(" | ")[1].isdigit()]
    assert noise == ["none"] * 6
    # The periods ask the same prompts again: a stateless run's repeatability reads them.
    counts = Counter(r["prompt"] for r in rows)
    repeat = json.loads((out / "scores.json").read_text())["repeatability"]
    assert repeat["measured"] is True
    assert repeat["overall"]["repeated_prompts"] == sum(n > 1 for n in counts.values()) > 0
    assert repeat["overall"]["identical_share"] == 1.0


def test_noise_across_periods_is_read_and_not_called_none():
    rng = np.random.default_rng(7)
    sweeps = [
        MultitoneSweep("multisine", q, period, r, 8 + x, 8 + x + rng.normal(0, 0.01, PLAN.time_steps))
        for q in range(3)
        for r in range(PLAN.realizations)
        for x in [_multisine(r)]
        for period in range(PLAN.periods)
    ]
    m = measure_family(sweeps, PLAN, "stateless")
    assert m["periods_identical"] is False
    # White errors of sigma 0.01 per step: 2 sigma / sqrt(64) per line, halved in power by the
    # mean of 2 periods, against the multisine's line amplitude 1/sqrt(6): -47.3 dB. The power mean
    # over the 6 lines has 144 real degrees of freedom (6 lines x 12 experiments x one complex period
    # difference): within 1.5 dB of it (0.71x to 1.41x in power) but with odds under 1 %; the seed is
    # fixed, so the same numbers every run (measured: -47.3 dB).
    expected = 20 * math.log10(2 * 0.01 / 8 / math.sqrt(2) * math.sqrt(6))
    power = np.mean([10 ** (iv["noise_db"] / 10) for iv in m["bla_intervals"]])
    assert 10 * math.log10(power) == pytest.approx(expected, abs=1.5)


def _two_tone_truth(rows):
    """Per question: its stub scale and the exact answers' two tones' amplitudes (period 0)."""
    f1, f2 = PLAN.two_tone_lines
    out = []
    for q in sorted({r["question_id"] for r in rows}):
        sweep = sorted(
            (
                r
                for r in rows
                if r["question_id"] == q and r["signal_type"] == "two_tone" and r["frequency_cycles"] == 0
            ),
            key=lambda r: r["time_step"],
        )
        X = 2 * np.fft.rfft([r["ground_truth"] for r in sweep]) / len(sweep)
        _, scale = _deviations([r for r in rows if r["question_id"] == q])[sweep[0]["prompt"]]
        out.append((scale, (abs(X[f1]), abs(X[f2]))))
    return out


def test_the_cubic_two_tone_products_equal_their_analytic_values(tmp_path_factory, tmp_path):
    # similar_triangles: its exact answers are linear in p (s' = s k), so they are a two-tone x =
    # A (cos w1 t + cos w2 t) about their centre, up to the rounding of k to 3 decimals.
    release, rows = _build(tmp_path_factory, "similar_triangles")
    stub = _serve(rows)
    try:
        r = _reading(stub, release, tmp_path, "poly-0-0.2", family="similar_triangles")
    finally:
        stub.stop()
    # The stub's poly-0-B is y = x + c x^3 in the deviation x, with c = B / scale^2 per question.
    truth = _two_tone_truth(rows)
    questions = [(0.2 / scale**2, (a1 + a2) / 2) for scale, (a1, a2) in truth]
    # The products' reference: the exact answers' rms over the questions and both tones.
    ref = math.sqrt(np.mean([a**2 for _, tones in truth for a in tones]))
    product = 20 * math.log10(math.sqrt(np.mean([(0.75 * c * A**3) ** 2 for c, A in questions])) / ref)
    tone = 20 * math.log10(np.mean([1 + 2.25 * c * A**2 for c, A in questions]))
    by_name = {p["product"]: p for p in r["two_tone"]}
    assert [p["product"] for p in r["two_tone"][:2]] == ["f1", "f2"]
    # Tolerance 0.1 dB (1.2 %): the exact answers hold up to 1.4e-3 A at other lines (k rounded to 3
    # decimals), which the cube's cross terms 3 c x^2 q carry into each product (about 1 %); six-decimal
    # truncation of the answers is 1e-5 of a product here.
    for name in ("2f1-f2", "2f2-f1"):
        p = by_name[name]
        assert p["error_level_db"] == pytest.approx(product, abs=0.1), name
        # The answers hold the exact answers' own content at that line too (k's rounding): at most its level.
        own = 10 ** ((p["truth_level_db"] - product) / 20)
        assert abs(p["level_db"] - product) <= -20 * math.log10(1 - own) + 0.1, name
    # Each tone A + (9/4) c A^3 against the exact answers' A: cross terms are 1e-5 of a tone here.
    for name in ("f1", "f2"):
        lift = by_name[name]["level_db"] - by_name[name]["truth_level_db"]
        assert lift == pytest.approx(tone, abs=0.01), name


def _lowpass(alpha, cycles):
    w = 2 * math.pi * cycles / 64
    return alpha / (1 - (1 - alpha) * complex(math.cos(w), -math.sin(w)))


def _expected_bla(rows, system, alpha, b):
    """The BLA of a Wiener or Hammerstein system computed here from the exact answers: each multisine
    period in steady state (the run-in makes it so), the low-pass applied on the DFT lines, the static
    map y = x + s b u^3 (u = (x - centre) / s, the stub's poly-0-b) in time; mean over experiments of Y/X."""
    deviations = _deviations(rows)
    ratios = []
    for q in sorted({r["question_id"] for r in rows}):
        for realization in range(PLAN.realizations):
            sweep = sorted(
                (
                    r
                    for r in rows
                    if (r["question_id"], r["signal_type"], r["phase_deg"], r["frequency_cycles"])
                    == (q, "multisine", realization, 0)
                ),
                key=lambda r: r["time_step"],
            )
            centre, scale = deviations[sweep[0]["prompt"]]
            x = np.array([r["ground_truth"] for r in sweep])
            H = np.array([_lowpass(alpha, k) for k in range(len(x) // 2 + 1)])
            if system == "wiener":
                w = np.fft.irfft(H * np.fft.rfft(x), len(x))
                y = w + scale * b * ((w - centre) / scale) ** 3
            else:
                v = x + scale * b * ((x - centre) / scale) ** 3
                y = np.fft.irfft(H * np.fft.rfft(v), len(v))
            ratios.append(np.fft.rfft(y) / np.fft.rfft(x))
    return np.mean(ratios, axis=0)


@pytest.mark.parametrize("system", ["wiener", "hammerstein"])
def test_memory_and_distortion_are_both_found_and_told_apart(server, release, rows, tmp_path, system):
    # A low-pass (alpha 0.5) before (Wiener) or after (Hammerstein) the cube of the deviation.
    # The stub filters the exact answers of the turns it is sent: --history all makes that the whole
    # run-in and sweep (the default window of 8 exchanges would leave a 0.5^8 start-up error).
    args = ["--protocol", "sequential", "--run-in", "64", "--history", "all"]
    r = _reading(server, release, tmp_path, f"{system}-0.5-0-0.1", *args)
    assert r["verdict"] == "memory (low-pass) and static nonlinearity (odd)"
    # The memory: the low-pass's own phase at every line, its alpha identified; the cube scales the
    # BLA by a real (Bussgang) gain, read apart from the memory.
    expected = _expected_bla(rows, system, 0.5, 0.1)
    for line in _excited(r):
        want = expected[line["cycles"]]
        # Six-decimal answers of size ~8 against a line amplitude ~0.25: 1e-5 in gain; 0.01 degree.
        assert line["gain"] == pytest.approx(abs(want), abs=1e-4)
        assert line["phase_deg"] == pytest.approx(math.degrees(np.angle(want)), abs=0.01)
    # Read as memory, the BLA is the low-pass scaled by the cube's real gain: alpha within 0.02 (read
    # 0.504 and 0.505: the cube's random-phase products at the excited lines move the BLA's phase by
    # up to 3 degrees at 4 realizations x 3 questions, as the static map's own BLA shows).
    assert r["memory"]["lowpass_alpha"] == pytest.approx(0.5, abs=0.02)
    assert r["memory"]["lowpass_gain"] > 1.02
    # The distortion: on the odd detection lines, not the even ones.
    assert r["odd_added_db"] > r["even_added_db"] + 6


def _multisine(realization):
    """The plan's unit multisine, computed here in floats (the builder's is exact)."""
    t = np.arange(PLAN.time_steps)
    amplitude = 1 / math.sqrt(len(PLAN.excited_lines))
    return sum(
        amplitude * np.cos(2 * np.pi * (k * t / PLAN.time_steps + float(PLAN.phase_turns(realization, k))))
        for k in PLAN.excited_lines
    )


def test_a_stateless_reading_claims_no_memory_and_says_why():
    # The same answers (the truth delayed 2 steps) read as memory in the sequential protocol and not
    # claimed in the stateless one, where a deterministic model cannot lag.
    sweeps = [
        MultitoneSweep("multisine", q, period, r, 8 + x, 8 + np.roll(x, 2))
        for q in range(3)
        for r in range(PLAN.realizations)
        for period in range(PLAN.periods)
        for x in [(1 + 0.1 * q) * _multisine(r)]
    ]
    sequential = measure_family(sweeps, PLAN, "sequential")
    assert sequential["verdict"] == "memory (delay)" and sequential["memory"]["delay_steps"] == pytest.approx(
        2, abs=0.01
    )
    stateless = measure_family(sweeps, PLAN, "stateless")
    assert stateless["verdict"] == f"linear within the floor; {STATELESS_VERDICT}"
    assert stateless["memory"] == {"read": False, "found": None, "why": STATELESS_MEMORY}
    assert "memoryless map" in STATELESS_MEMORY and "--protocol sequential" in STATELESS_MEMORY
    # The BLA itself is reported as measured: the phase is there, only its reading as memory is not.
    assert [line["phase_deg"] for line in stateless["lines"]] == [line["phase_deg"] for line in sequential["lines"]]


KEY = ("family", "question_id", "signal_type", "amplitude_scale", "frequency_cycles", "phase_deg", "time_step")


def _cubic_predictions(rows, path, b=0.1):
    """A submission of y = x + s b u^3 (the stub's poly-0-b) written directly, no server."""
    deviations = _deviations(rows)
    with path.open("w") as f:
        for r in rows:
            centre, scale = deviations[r["prompt"]]
            y = r["ground_truth"] + scale * b * ((r["ground_truth"] - centre) / scale) ** 3
            f.write(json.dumps({**{k: r[k] for k in KEY}, "prediction": round(y, 6), "model": "cubic"}) + "\n")
    return path


def test_the_report_shows_the_multitone_reading_and_renders_again_byte_for_byte(release, rows, tmp_path):
    from mathbode.cli.report import main as report_cli

    out = tmp_path / "report"
    file = _cubic_predictions(rows, tmp_path / "cubic.jsonl")
    result = CliRunner().invoke(score_cli, [str(file), "--reference", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # The figures system identification draws: the BLA with its levels, and the two-tone spectrum.
    assert {"multitone_bla.png", "two_tone.png", "results.json", "scores.json", "report.md"} <= set(before)
    document = json.loads(before["results.json"])
    scores = json.loads(before["scores.json"])
    assert document["scores"]["multitone"] == scores["multitone"]
    reading = scores["multitone"]["families"][FAMILY]
    text = before["report.md"].decode()
    assert "Preset: ALL." in text and "### Multi-tone measurement" in text
    assert f"| {FAMILY} | {reading['verdict']} |" in text
    assert "| linear_solve | 2f1-f2 | 2 |" in text and "What the multi-tone reading can show (stateless" in text
    result = CliRunner().invoke(report_cli, [str(out)])
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_results_document_with_a_malformed_multitone_line_is_refused(release, rows, tmp_path):
    from mathbode.evaluator.results import ResultsVersionError, checked

    out = tmp_path / "report"
    file = _cubic_predictions(rows, tmp_path / "cubic.jsonl")
    result = CliRunner().invoke(score_cli, [str(file), "--reference", str(release), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "results.json").read_text())
    document["scores"]["multitone"]["families"][FAMILY]["lines"][0]["kind"] = "excitd"
    with pytest.raises(ResultsVersionError, match=f"at scores/multitone/families/{FAMILY}/lines/0/kind: 'excitd'"):
        checked(document, "results.json")


@pytest.mark.parametrize("system", ["per-prompt", "delay"])
def test_the_bla_intervals_cover_95_percent(system):
    # The scheme of benchmarks/bench_multitone.py, smaller: a known linear system plus errors on the
    # release's multisine grid (3 questions of swing 1, 1.1, 1.2 x 4 realizations x 2 periods), read by
    # the scorer. Per-prompt errors repeat in both periods (a deterministic model); the delay's errors
    # are new in each. 120 simulations x 6 lines = 720 gain and 720 phase intervals, independent: the
    # band is 0.95 -+ 3 binomial standard errors (0.0081), passed by a correct method with any seed but
    # one in about 400. Seeds are fixed, so the counts are the same on every run.
    rng = np.random.default_rng(42 if system == "per-prompt" else 43)
    T, lines = PLAN.time_steps, np.array(PLAN.excited_lines)
    w = 2 * np.pi * np.arange(T // 2 + 1) / T
    H = np.ones(len(w), complex) if system == "per-prompt" else 0.9 * np.exp(-2j * w)
    gain_hits = phase_hits = n = 0
    for _ in range(120):
        sweeps = []
        for q in range(3):
            A = 1 + 0.1 * q
            for r in range(PLAN.realizations):
                x = A * _multisine(r)
                clean = 8 + np.fft.irfft(H * np.fft.rfft(x), T)
                prompt_errors = rng.normal(0, 0.05 * A, T) if system == "per-prompt" else 0
                for period in range(PLAN.periods):
                    row_errors = rng.normal(0, 0.05 * A, T) if system == "delay" else 0
                    sweeps.append(MultitoneSweep("multisine", q, period, r, 8 + x, clean + prompt_errors + row_errors))
        m = measure_family(sweeps, PLAN, "sequential")
        for iv, g in zip(m["bla_intervals"], H[lines], strict=True):
            gain_hits += iv["gain_low"] <= abs(g) <= iv["gain_high"]
            phase_hits += iv["phase_low_deg"] <= math.degrees(np.angle(g)) <= iv["phase_high_deg"]
            n += 1
    band = 3 * math.sqrt(0.95 * 0.05 / n)
    assert n == 720
    assert abs(gain_hits / n - 0.95) <= band, gain_hits / n
    assert abs(phase_hits / n - 0.95) <= band, phase_hits / n


def test_the_summary_orders_known_systems_from_linear_to_most_distorted(server, release, tmp_path):
    """`distortion_db` reads the exact answers at the floor, passes a delay as linear (its added
    distortion at the floor too), and grows with a static nonlinearity's coefficient: 6.02 dB a
    doubling, since what the map adds is linear in its coefficient."""
    seq = ("--protocol", "sequential", "--run-in", "64")
    read = {
        "exact": _reading(server, release, tmp_path, "truth"),
        "delay": _reading(server, release, tmp_path, "delay-2", *seq),
        "cube 0.05": _reading(server, release, tmp_path, "poly-0-0.05"),
        "cube 0.1": _reading(server, release, tmp_path, "poly-0-0.1"),
        "square and cube 0.1": _reading(server, release, tmp_path, "poly-0.1-0.1"),
    }
    level = {name: r["distortion_db"] for name, r in read.items()}
    floor = read["exact"]["floor_db"]
    # Linear systems: within the truncation's own reach of the floor (its bound, stated per family).
    for name in ("exact", "delay"):
        assert level[name] <= read[name]["truncation_bound_db"], (name, level)
    assert level["cube 0.05"] > max(level["exact"], level["delay"]) + 20 and level["cube 0.05"] > floor + 20
    assert level["cube 0.1"] - level["cube 0.05"] == pytest.approx(6.02, abs=0.1)
    assert level["square and cube 0.1"] > level["cube 0.1"]
    assert sorted(level, key=level.get)[2:] == ["cube 0.05", "cube 0.1", "square and cube 0.1"]


def test_levels_far_below_the_floor_and_stochastic_none_are_said_in_words(server, release, tmp_path):
    """report.md printed the exact answers' two-tone "added" as -458.3 dB, their distortion as n/a
    (zero power) and an unexplained n/a in the stochastic column."""
    from types import SimpleNamespace

    from mathbode.evaluator.presentation.report import BELOW_FLOOR, level_text, multitone_lines

    m = _reading(server, release, tmp_path, "truth")
    floor = m["floor_db"]
    assert level_text(floor - 20.05, floor) == BELOW_FLOOR == "below the floor"
    assert level_text(floor - 19.95, floor, " dB") == f"{floor - 19.95:.1f} dB"
    assert level_text(None, floor, " dB") == "below the floor"  # zero power: no dB
    m["odd_added_db"] = None
    m["two_tone"][2]["added_db"] = -458.3
    m["bla_intervals"][0]["stochastic_db"] = None  # no spread beyond the noise
    lines = multitone_lines(SimpleNamespace(extra={"multitone": {"families": {FAMILY: m}}}))
    family_row = next(line for line in lines if line.startswith(f"| {FAMILY} | linear within"))
    assert family_row.split(" | ")[4] == "below the floor"  # odd added
    first_line = next(line for line in lines if line.startswith(f"| {FAMILY} | 1 |"))
    assert first_line.endswith("| none | not detected |")
    product = m["two_tone"][2]["product"]
    assert next(line for line in lines if line.startswith(f"| {FAMILY} | {product} |")).endswith("| below the floor |")
    assert not [line for line in lines if "n/a" in line or "-458" in line]
