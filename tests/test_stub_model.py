"""The stand-in model a new user starts from the README (`python -m mathbode.runner.stub_model
--port 8000`): the truth scores 1, the noisy truth is compliant and not exact, a delay of one step
reads as one (issue 40, section 6)."""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from decimal import ROUND_DOWN, Decimal

import numpy as np
import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.runner.stub_model import StubModel, answer_text, main, running, systems_of
from mathbode.runner.systems import KnownSystems

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
        if not line.startswith(
            "Serving truth, noisy, delay-K, anchor-A, gain-G, poly-E-O, wiener-A-E-O, hammerstein-A-E-O, jitter-E, "
            "fixed-E, numbers, gsgain-G at http://127.0.0.1:"
        ):
            # Stopped first: reading a running server's stderr would wait for it forever.
            process.kill()
            pytest.fail(f"the stand-in did not start as documented: {line!r} {process.communicate(timeout=10)[1]!r}")
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
    assert message == (
        "The model `gpt-9` does not exist; this stand-in serves truth, noisy, delay-K, anchor-A, gain-G, poly-E-O, "
        "wiener-A-E-O, hammerstein-A-E-O, jitter-E, fixed-E, numbers, gsgain-G, their capital letters filled in "
        "with numbers (delay-2, anchor-0.5)."
    )


def test_answers_off_the_release_are_not_answers_and_noise_is_seeded():
    model = StubModel(KnownSystems({"What is p?": 2.0}, noise=0.01, seed=3))
    assert model.answer("truth", [{"role": "user", "content": "What is p?"}]) == answer_text(2.0)
    assert answer_text(2.0) == "[answer_start] 2.000000 [answer_end]"
    assert model.answer("truth", [{"role": "user", "content": "Another?"}]) == "I do not know this question."
    first = [model.answer("noisy", [{"role": "user", "content": "What is p?"}]) for _ in range(3)]
    again = StubModel(KnownSystems({"What is p?": 2.0}, noise=0.01, seed=3))
    assert first == [again.answer("noisy", [{"role": "user", "content": "What is p?"}]) for _ in range(3)]
    assert len(set(first)) == 3


def test_a_bad_port_or_a_missing_release_is_refused_with_a_message(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--port", "70000"])
    assert exit_.value.code == 2 and "--port 70000: a port is 0 to 65535" in capsys.readouterr().err
    assert main(["--reference", str(tmp_path / "nowhere")]) == 2
    assert "Error: --reference" in capsys.readouterr().err


# -- Every documented system, by the name the docs use (issue 50, section 1) ------------------------

EXAMPLES = [
    "truth",
    "noisy",
    "delay-2",
    "anchor-0.5",
    "gain-0.8",
    "poly-0.05-0.1",
    "wiener-0.5-0-0.1",
    "hammerstein-0.5-0-0.1",
    "jitter-0.01",
    "fixed-0.05",
    "numbers",
    "gsgain-1.3",
]
PATTERNS = [
    "truth",
    "noisy",
    "delay-K",
    "anchor-A",
    "gain-G",
    "poly-E-O",
    "wiener-A-E-O",
    "hammerstein-A-E-O",
    "jitter-E",
    "fixed-E",
    "numbers",
    "gsgain-G",
]


def _post(server: str, model: str, messages: list[dict]) -> dict:
    body = json.dumps({"model": model, "messages": messages}).encode()
    request = urllib.request.Request(f"{server}/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _refused(server: str, model: str) -> tuple[int, str]:
    with pytest.raises(urllib.error.HTTPError) as err:
        _post(server, model, [{"role": "user", "content": "hi"}])
    return err.value.code, json.loads(err.value.read())["error"]["message"]


def _exact(value: float) -> str:
    """Truncated toward zero to six decimals, from the number's shortest text (as the baseline writes it)."""
    return f"[answer_start] {Decimal(repr(value)).quantize(Decimal('0.000001'), rounding=ROUND_DOWN)} [answer_end]"


def _rounded(value: float) -> str:
    return f"[answer_start] {value:.6f} [answer_end]"


def _z(prompt: str) -> float:
    return float(np.random.default_rng(int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big")).normal())


@pytest.fixture(scope="module")
def question():
    """Two prompts of linear_solve's question 0 with their exact answers, and the question's centre and scale."""
    from mathbode.schema.packaged import packaged_reference

    rows = [r for r in packaged_reference(["linear_solve"]).table.to_pylist() if r["question_id"] == 0]
    truths = np.array([r["ground_truth"] for r in rows])
    first = next(r for r in rows if r["ground_truth"] > truths.mean() + truths.std())
    second = next(r for r in rows if r["ground_truth"] < truths.mean() - truths.std())
    return first, second, float(truths.mean()), float(truths.std() * math.sqrt(2))


def test_every_documented_system_answers_its_known_value(server, question):
    first, second, c, s = question
    a, b = first["prompt"], second["prompt"]
    ta, tb = first["ground_truth"], second["ground_truth"]
    earlier = "[answer_start] 5.000000 [answer_end]"  # what the model answered to `a`, sent back
    conversation = [{"role": "user", "content": a}, {"role": "assistant", "content": earlier}]
    conversation.append({"role": "user", "content": b})

    def bend(t, even, odd):
        u = (t - c) / s
        return t + s * (even * u**2 + odd * u**3)

    numbers = random.Random(" ".join(re.findall(r"\d+(?:\.\d+)?", b)))
    is_exact, noise = numbers.random() < 0.5, numbers.gauss(0, 1)
    expected = {
        "truth": _exact(tb),
        "delay-1": _exact(ta),  # the question one user turn back
        "delay-2": _exact(ta),  # fewer turns than K: the oldest it is sent
        "delay-0": _exact(tb),
        "anchor-0.5": _rounded(5.0 + 0.5 * (tb - 5.0)),  # from its own earlier answer, not the truth
        "gain-0.8": _rounded(c + 0.8 * (tb - c)),
        "poly-0.05-0.1": _rounded(bend(tb, 0.05, 0.1)),
        "poly-0.05-0": _rounded(bend(tb, 0.05, 0)),
        "wiener-0.5-0-0.1": _rounded(bend(ta + 0.5 * (tb - ta), 0, 0.1)),
        "hammerstein-0.5-0-0.1": _rounded(bend(ta, 0, 0.1) + 0.5 * (bend(tb, 0, 0.1) - bend(ta, 0, 0.1))),
        "jitter-0.01": _rounded(tb + 0.01 * s * _z(b)),
        "fixed-0.05": _rounded(tb * (1 + 0.05 * _z(b))),
        "numbers": _exact(tb) if is_exact else _rounded(tb * (1 + 0.001 * noise)),
        "gsgain-1.3": _exact(tb)
        if is_exact
        else _rounded(tb * (1 + 0.001 * noise)),  # no GS name in a canonical prompt
    }
    got = {model: _post(server, model, conversation)["choices"][0]["message"]["content"] for model in expected}
    assert got == expected
    # Stateless, a system with memory answers its own question: the truth (delay) or its own map of it.
    alone = [{"role": "user", "content": b}]
    assert _post(server, "delay-2", alone)["choices"][0]["message"]["content"] == _exact(tb)
    assert _post(server, "anchor-0.5", alone)["choices"][0]["message"]["content"] == _rounded(tb)
    # The same prompt always gets the same fixed error; `noisy` draws afresh.
    assert _post(server, "fixed-0.05", alone) == _post(server, "fixed-0.05", alone)
    noisy = {_post(server, "noisy", alone)["choices"][0]["message"]["content"] for _ in range(3)}
    assert len(noisy) == 3


def test_the_model_list_names_each_pattern_with_a_model_that_answers(server, question):
    with urllib.request.urlopen(f"{server}/models", timeout=10) as response:
        listed = json.loads(response.read())["data"]
    assert [m["id"] for m in listed] == EXAMPLES
    assert [m["pattern"] for m in listed] == PATTERNS
    assert all(m["object"] == "model" and m["description"] for m in listed)
    prompt = [{"role": "user", "content": question[0]["prompt"]}]
    for m in listed:  # every listed model answers, in the answer format
        text = _post(server, m["id"], prompt)["choices"][0]["message"]["content"]
        assert re.fullmatch(r"\[answer_start\] -?\d+\.\d{6} \[answer_end\]", text), (m["id"], text)


def test_a_pattern_asked_as_it_is_or_out_of_range_is_a_404_listing_the_patterns(server):
    listed = ", ".join(PATTERNS)
    assert _refused(server, "delay-K") == (
        404,
        f"The model `delay-K` is a pattern: fill in its numbers, e.g. `delay-2` (K a whole number of steps, 0 to "
        f"64). Patterns: {listed}.",
    )
    assert _refused(server, "anchor-A")[1].startswith("The model `anchor-A` is a pattern: fill in its numbers, e.g. ")
    tail = f"this stand-in serves {listed}, their capital letters filled in with numbers (delay-2, anchor-0.5)."
    assert _refused(server, "anchor-1.5") == (404, f"The model `anchor-1.5` is out of range (0 < A <= 1); {tail}")
    assert _refused(server, "delay-65") == (
        404,
        f"The model `delay-65` is out of range (K a whole number of steps, 0 to 64); {tail}",
    )
    assert _refused(server, "poly-0.1") == (
        404,
        f"The model `poly-0.1` does not fit its pattern `poly-E-O` (2 numbers); {tail}",
    )


def test_a_run_that_names_a_pattern_stops_with_the_servers_words(server, tmp_path):
    out = tmp_path / "p.jsonl"
    argv = ["--model", "delay-K", "--base-url", server, "--preset", "SMOKE", "--families", "linear_solve"]
    done = CliRunner().invoke(run_cli, [*argv, "-o", str(out)], env=ENV)
    assert done.exit_code == 1
    assert done.output.splitlines()[-1] == (
        f"Error: {server} does not know model 'delay-K' (404). List the server's models at {server}/models. The "
        "server says: The model `delay-K` is a pattern: fill in its numbers, e.g. `delay-2` (K a whole number of "
        f"steps, 0 to 64). Patterns: {', '.join(PATTERNS)}."
    )


def test_help_names_every_pattern(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for pattern in PATTERNS:
        assert re.search(rf"^  {re.escape(pattern)} +\S", text, re.MULTILINE), pattern


# -- Token usage: what the server reported, kept in the run record -------------------------------


@pytest.fixture(scope="module")
def stand_in():
    """The stand-in in this process (so its reported totals can be read), on the canonical rows."""
    model = StubModel(systems_of(None))
    with running(model) as url:
        yield model, url


def _run(url: str, out, *extra: str, model: str = "truth", code: int = 0):
    argv = ["--model", model, "--base-url", url, "--preset", "SMOKE", "--families", "linear_solve", "-o", str(out)]
    done = CliRunner().invoke(run_cli, [*argv, *extra], env=ENV)
    assert done.exit_code == code, done.output
    return json.loads(out.with_name(out.stem + ".run.json").read_text()), done.output


def _since(model: StubModel, before: Counter) -> dict[str, int]:
    return {k: model.reported[k] - before[k] for k in ("prompt_tokens", "completion_tokens", "requests")}


def _dry_run(*extra: str) -> tuple[int, int]:
    argv = ["--model", "truth", "--preset", "SMOKE", "--families", "linear_solve", "--dry-run", *extra]
    done = CliRunner().invoke(run_cli, argv, env=ENV)
    assert done.exit_code == 0, done.output
    prompt = re.search(r"Prompt tokens: ([\d,]+)", done.output)[1]
    completion = re.search(r"Completion tokens: at least ([\d,]+)", done.output)[1]
    return int(prompt.replace(",", "")), int(completion.replace(",", ""))


def test_the_run_record_keeps_the_usage_the_server_reported_across_a_resume(stand_in, tmp_path):
    model, url = stand_in
    out = tmp_path / "truth.jsonl"
    before = Counter(model.reported)
    first, _ = _run(url, out, "--limit", "100")
    first_part = _since(model, before)
    assert first_part["requests"] == 100
    assert first["usage"] == {
        "prompt_tokens": first_part["prompt_tokens"],
        "completion_tokens": first_part["completion_tokens"],
        "total_tokens": first_part["prompt_tokens"] + first_part["completion_tokens"],
        "requests": 100,
        "requests_without_usage": 0,
        "this_run": {
            "prompt_tokens": first_part["prompt_tokens"],
            "completion_tokens": first_part["completion_tokens"],
            "total_tokens": first_part["prompt_tokens"] + first_part["completion_tokens"],
            "requests": 100,
            "requests_without_usage": 0,
        },
    }
    middle = Counter(model.reported)
    record, output = _run(url, out)
    rest, whole = _since(model, middle), _since(model, before)
    assert rest["requests"] == 156 and whole["requests"] == 256
    usage = record["usage"]
    # The resumed record: every answer the output holds (both runs), and this run's share.
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["requests"]) == (
        whole["prompt_tokens"],
        whole["completion_tokens"],
        256,
    )
    assert (usage["this_run"]["prompt_tokens"], usage["this_run"]["completion_tokens"]) == (
        rest["prompt_tokens"],
        rest["completion_tokens"],
    )
    # The stand-in counts as the dry run estimates: a truth run spends exactly what the dry run said.
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == _dry_run() == (21_760, 3_584)
    assert (
        f"Tokens the server reported: 21,760 prompt and 3,584 completion over 256 requests; this run "
        f"{rest['prompt_tokens']:,} prompt and {rest['completion_tokens']:,} completion (run record `usage`)."
    ) in output


def test_a_sequential_runs_usage_counts_its_run_in_and_a_dedupe_run_its_asked_prompts(stand_in, tmp_path):
    model, url = stand_in
    before = Counter(model.reported)
    record, _ = _run(url, tmp_path / "seq.jsonl", "--protocol", "sequential", model="anchor-0.5")
    spent = _since(model, before)
    assert spent["requests"] == 256 + 4 * 8  # SMOKE's 4 sweeps of linear_solve, each after a run-in of 8
    assert (record["usage"]["prompt_tokens"], record["usage"]["completion_tokens"], record["usage"]["requests"]) == (
        spent["prompt_tokens"],
        spent["completion_tokens"],
        288,
    )
    before = Counter(model.reported)
    record, _ = _run(url, tmp_path / "dedupe.jsonl", "--dedupe")
    spent = _since(model, before)
    assert spent["requests"] == record["usage"]["requests"] == 17  # the distinct prompts, asked once each
    assert record["usage"]["prompt_tokens"] == spent["prompt_tokens"] == _dry_run("--dedupe")[0]


def test_a_torn_output_is_resumed_with_the_usage_of_the_answers_it_holds(stand_in, tmp_path):
    """After a kill (here: the last lines lost, the last one torn, the record stale), the totals are
    those of the answers the output holds, read from their lines: the re-asked rows counted once."""
    _, url = stand_in
    out = tmp_path / "torn.jsonl"
    _run(url, out)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:200]) + lines[200][:40])
    record, _ = _run(url, out)
    assert record["counts"]["already_answered"] == 200
    assert (record["usage"]["prompt_tokens"], record["usage"]["completion_tokens"]) == (21_760, 3_584)
    assert record["usage"]["this_run"]["requests"] == 56


class _Silent(StubModel):
    """A server that sends no `usage` (some local servers do not)."""

    def respond(self, method, path, body):
        status, payload = super().respond(method, path, body)
        payload.pop("usage", None)
        return status, payload


def test_a_server_that_reports_no_usage_leaves_it_null_and_says_so(tmp_path):
    with running(_Silent(systems_of(None))) as url:
        record, output = _run(url, tmp_path / "silent.jsonl", "--limit", "10")
    assert record["usage"] is None
    assert record["usage_note"] == (
        "the server reported no token usage with its answers (no `usage` in its chat completions), so the run "
        "cannot say what it spent; `mathbode run --dry-run` estimates it"
    )
    assert "Tokens: the server reported none with its answers (--dry-run estimates them)." in output


# -- Other releases: --reference -----------------------------------------------------------------


def test_a_multitone_release_is_answered_whole_with_reference(tmp_path):
    from mathbode.builder.families import get_family
    from mathbode.builder.release import build_release

    release = tmp_path / "mt-release"
    build_release([get_family("linear_solve")], release, drives="multitone")
    with running(StubModel(systems_of(str(release)))) as url:
        out = tmp_path / "mt.jsonl"
        argv = ["--model", "poly-0-0.05", "--base-url", url, "--reference", str(release), "--preset", "ALL"]
        done = CliRunner().invoke(run_cli, [*argv, "-o", str(out)], env=ENV)
    assert done.exit_code == 0, done.output
    record = json.loads((tmp_path / "mt.run.json").read_text())
    assert record["counts"]["answered"] == record["counts"]["compliant"] == 1920  # every row, none "I do not know"


def test_the_linear_systems_know_the_response_the_docs_read():
    """The Bode values docs/running.md's table gives for the stand-in's low-pass and delay."""
    from mathbode.runner.systems import parse_system

    lowpass = parse_system("anchor-0.5")
    assert [round(abs(lowpass.response(f)), 4) for f in (4, 8)] == [0.8756, 0.6786]
    assert [round(math.degrees(np.angle(lowpass.response(f))), 2) for f in (4, 8)] == [-19.58, -28.68]
    delay = parse_system("delay-4")
    assert delay.response(4) == pytest.approx(-1j, abs=1e-15) and delay.response(8) == pytest.approx(-1, abs=1e-15)
    assert parse_system("truth").response(8) == 1
    assert parse_system("gain-0.8").response(8) == 0.8
    with pytest.raises(ValueError, match="poly: not a linear system"):
        parse_system("poly-0.1-0").response(4)
