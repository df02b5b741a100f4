"""`mathbode batch write` / `read` and `mathbode run --dry-run`: a batch answered in the Batch API's
output format converts into the submission a live run writes against the same stub."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines, canonical_reference
from mathbode.cli.batch import main as batch_cli
from mathbode.cli.run import main as run_cli
from mathbode.evaluator.scorer.scoring import score
from mathbode.runner import batch
from mathbode.runner.config import RunConfig
from mathbode.runner.cost import Estimate, estimate
from mathbode.schema import layout, read_submission, validate_submission
from mathbode.schema.keys import row_key
from mathbode.schema.selection import select_rows

from .fixtures.stub_batch import answer_batch
from .fixtures.stub_openai import StubOpenAI

LAY = layout()
ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}


@pytest.fixture(scope="module")
def reference():
    return canonical_reference(list(LAY.families))


@pytest.fixture(scope="module")
def smoke_rows(reference):
    return select_rows(reference.table, "SMOKE")


@pytest.fixture
def stub(smoke_rows):
    answers = {
        row["prompt"]: line["response"] for row, line in zip(smoke_rows, baseline_lines(smoke_rows), strict=True)
    }
    server = StubOpenAI(answers)
    bodies: list[dict] = []
    respond = server._respond

    async def recording(method, path, headers, body):
        if method == "POST":
            bodies.append(json.loads(body))
        return await respond(method, path, headers, body)

    server._respond = recording
    server.bodies = bodies
    server.start()
    yield server
    server.stop()


def write_batch(tmp_path: Path, *args: str, folder: str = "batch"):
    result = CliRunner().invoke(batch_cli, ["write", "-o", str(tmp_path / folder), *args], env=ENV)
    return result, tmp_path / folder


def read_batch(tmp_path: Path, folder: Path, *results: Path, output: str = "from-batch.jsonl"):
    argv = ["read", str(folder), *map(str, results), "-o", str(tmp_path / output)]
    return CliRunner().invoke(batch_cli, argv, env=ENV), tmp_path / output


def live_run(stub, tmp_path: Path, *args: str, output: str = "live.jsonl") -> Path:
    argv = ["--base-url", stub.base_url, "-o", str(tmp_path / output), "--concurrency", "16", *args]
    result = CliRunner().invoke(run_cli, argv, env=ENV)
    assert result.exit_code == 0, result.output
    return tmp_path / output


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def answers_of(path: Path) -> dict:
    return {row_key(line): line.get("response", line.get("prediction")) for line in lines_of(path)}


def scores_of(path: Path, reference) -> tuple[str, str]:
    scored = score(read_submission(path).predictions, reference, "x")
    return json.dumps(scored.overall, sort_keys=True, default=str), json.dumps(scored.summary.rows(), default=str)


def inputs_of(folder: Path) -> list[Path]:
    return sorted(folder.glob("requests*.jsonl"))


# -- the round trip -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        pytest.param((), id="every-row"),
        pytest.param(("--dedupe",), id="dedupe"),
        pytest.param(("--one-shot", "--constrain-format", "json-schema", "--dedupe"), id="one-shot-json-schema"),
    ],
)
def test_a_smoke_batch_answered_in_the_output_format_equals_a_live_run(stub, tmp_path, reference, options):
    written, folder = write_batch(tmp_path, "--model", "truth", "--max-requests", "700", *options)
    assert written.exit_code == 0, written.output
    inputs = inputs_of(folder)
    expected_parts = ["requests.jsonl"] if "--dedupe" in options else ["requests-001.jsonl", "requests-002.jsonl"]
    assert [p.name for p in inputs] == expected_parts
    answer_batch(stub.base_url, inputs, tmp_path / "output.jsonl", tmp_path / "errors.jsonl", shuffle=7)
    batch_bodies = [json.loads(line)["body"] for p in inputs for line in p.read_text().splitlines()]
    got, converted = read_batch(tmp_path, folder, tmp_path / "output.jsonl", tmp_path / "errors.jsonl")
    assert got.exit_code == 0, got.output
    stub.bodies.clear()
    live = live_run(stub, tmp_path, "--model", "truth", *options)
    # The same request bodies, the same answers to every row, the same scores.
    key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
    assert sorted(map(key, batch_bodies)) == sorted(map(key, stub.bodies))
    assert validate_submission(converted).valid
    assert answers_of(converted) == answers_of(live) and len(answers_of(live)) == 1280
    assert scores_of(converted, reference) == scores_of(live, reference)
    batch_lines, live_lines = lines_of(converted), {row_key(x): x for x in lines_of(live)}
    for line in batch_lines:  # the conditions recorded as the run records them
        other = live_lines[row_key(line)]["meta"]
        assert {
            k: line["meta"][k] for k in other if k in ("answer_format", "prompting", "protocol", "dedupe", "shared")
        } == {k: other[k] for k in other if k in ("answer_format", "prompting", "protocol", "dedupe", "shared")}
    record = json.loads((tmp_path / "from-batch.batch.json").read_text())
    assert record["reference"]["release_content_hash"] == reference.release_hash
    assert record["reference"]["content_hash"] == reference.content_hash
    assert record["counts"]["rows"] == 1280 and record["counts"]["failed"] == 0 and record["counts"]["missing"] == 0


def test_failed_expired_and_missing_requests_are_null_rows_with_their_reason(stub, tmp_path, reference, smoke_rows):
    written, folder = write_batch(tmp_path, "--model", "truth")
    assert written.exit_code == 0, written.output
    ids = [batch.custom_id(row) for row in smoke_rows]
    expired, dropped, odd = set(ids[:3]), {ids[3]}, {ids[4]}
    answer_batch(
        stub.base_url,
        inputs_of(folder),
        tmp_path / "output.jsonl",
        tmp_path / "errors.jsonl",
        expire=expired,
        drop=dropped,
        not_completion=odd,
        shuffle=1,
    )
    # A refused request: the model the stub does not know answers 404 into the error file.
    errors = tmp_path / "errors.jsonl"
    refused = {
        "id": "batch_req_x",
        "custom_id": ids[5],
        "error": None,
        "response": {
            "status_code": 404,
            "request_id": "r",
            "body": {"error": {"message": "no such model", "code": "model_not_found"}},
        },
    }
    output_lines = [
        x for x in (tmp_path / "output.jsonl").read_text().splitlines() if json.loads(x)["custom_id"] != ids[5]
    ]
    (tmp_path / "output.jsonl").write_text("\n".join(output_lines) + "\n")
    errors.write_text(errors.read_text() + json.dumps(refused) + "\n")
    got, converted = read_batch(tmp_path, folder, tmp_path / "output.jsonl", errors)
    assert got.exit_code == 0, got.output
    lines = {batch.custom_id(x): x for x in lines_of(converted)}
    assert len(lines) == 1280 and validate_submission(converted).valid
    for cid in expired:
        assert lines[cid]["prediction"] is None and lines[cid]["meta"]["failed"].startswith("batch_expired")
        assert lines[cid]["meta"]["batch"]["result"].startswith("errors.jsonl:")
    assert lines[ids[3]]["meta"]["failed"] == "no result for this request in the files read"
    assert lines[ids[3]]["meta"]["batch"]["result"] is None
    assert lines[ids[4]]["meta"]["failed"].startswith("the response body is not a chat completion")
    assert lines[ids[5]]["meta"]["failed"] == "404: model_not_found no such model"
    assert sum("prediction" in x for x in lines.values()) == 6
    assert "1,274 answered, 5 failed, 1 without a result" in got.output
    assert "errors.jsonl:" in got.output and f"no result: {ids[3]}" in got.output
    scored = score(read_submission(converted).predictions, reference, "x")
    assert 0 < scored.overall["mb_core"] <= 1


def _lines_with(path: Path, *extra: dict) -> Path:
    path.write_text(path.read_text() + "".join(json.dumps(x) + "\n" for x in extra))
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        pytest.param(
            lambda first: {**first, "custom_id": "linear_solve/q9/t0"},
            "custom_id 'linear_solve/q9/t0' is not a request of the batch",
            id="unknown",
        ),
        pytest.param(lambda first: first, "a second result for custom_id", id="duplicate"),
        pytest.param(
            lambda first: {k: v for k, v in first.items() if k != "custom_id"},
            "the result has no custom_id",
            id="no-custom-id",
        ),
        pytest.param(lambda first: [1, 2], "not a JSON object", id="not-an-object"),
    ],
)
def test_results_that_are_not_this_batchs_are_refused_with_their_place(stub, tmp_path, make, message):
    written, folder = write_batch(tmp_path, "--model", "truth", "--preset", "SMOKE", "--families", "linear_solve")
    assert written.exit_code == 0, written.output
    output = tmp_path / "output.jsonl"
    answer_batch(stub.base_url, inputs_of(folder), output, tmp_path / "errors.jsonl")
    first = json.loads(output.read_text().splitlines()[0])
    n = len(output.read_text().splitlines())
    _lines_with(output, make(first))
    got, converted = read_batch(tmp_path, folder, output)
    assert got.exit_code == 2
    assert f"{output}:{n + 1}: " in got.output and message in got.output
    if message.startswith("a second"):
        assert f"(the first is {output}:1)" in got.output
    assert not converted.exists()


def test_a_line_that_is_not_json_is_located(tmp_path):
    _, folder = write_batch(tmp_path, "--model", "truth", "--families", "linear_solve")
    bad = tmp_path / "out.jsonl"
    bad.write_text('{"custom_id": "x"\n')
    got, converted = read_batch(tmp_path, folder, bad)
    assert got.exit_code == 2 and f"{bad}:1: not JSON" in got.output and not converted.exists()


def test_the_sequential_protocol_is_refused_with_why_and_what_to_do(tmp_path):
    result, folder = write_batch(tmp_path, "--model", "m", "--protocol", "sequential")
    assert result.exit_code == 2 and not folder.exists()
    assert "not a batch job" in result.output and "mathbode run --protocol sequential" in result.output
    with pytest.raises(batch.BatchError, match="not a batch job"):
        batch.plan([], RunConfig(model="m", protocol="sequential"))


def test_files_are_split_under_the_request_and_byte_limits_and_named(tmp_path, smoke_rows):
    result, folder = write_batch(tmp_path, "--model", "m", "--max-bytes", "100000")
    assert result.exit_code == 0, result.output
    parts = inputs_of(folder)
    assert len(parts) == 8 and [p.name for p in parts] == [f"requests-{n:03d}.jsonl" for n in range(1, 9)]
    assert all(p.stat().st_size <= 100_000 for p in parts)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [f["name"] for f in manifest["files"]] == [p.name for p in parts]
    assert sum(f["requests"] for f in manifest["files"]) == 1280 == len(manifest["rows"])
    ids = [json.loads(line)["custom_id"] for p in parts for line in p.read_text().splitlines()]
    assert ids == [batch.custom_id(row) for row in smoke_rows] and len(set(ids)) == 1280
    again, _ = write_batch(tmp_path, "--model", "m")
    assert again.exit_code == 2 and "already holds a batch" in again.output
    fewer, _ = write_batch(tmp_path, "--model", "m", "--overwrite")
    assert fewer.exit_code == 0 and [p.name for p in inputs_of(folder)] == ["requests.jsonl"]  # no stale parts
    too_small, _ = write_batch(tmp_path, "--model", "m", "--max-bytes", "100", folder="small")
    assert too_small.exit_code == 2 and "more than --max-bytes 100" in too_small.output
    assert batch.split([b"x" * 10] * 5, max_requests=2) == [[b"x" * 10] * 2, [b"x" * 10] * 2, [b"x" * 10]]


def test_dedupe_names_a_request_by_its_first_row_and_the_rows_it_answers(tmp_path):
    result, folder = write_batch(tmp_path, "--model", "m", "--dedupe")
    assert result.exit_code == 0, result.output
    manifest = json.loads((folder / "manifest.json").read_text())
    first = json.loads((folder / "requests.jsonl").read_text().splitlines()[0])
    assert first["custom_id"] == "linear_solve/q0/sinusoid/a0.5/f4/p0/t0+47"
    assert sum(row["custom_id"] == first["custom_id"] for row in manifest["rows"]) == 48
    assert manifest["requests"] == 85 and manifest["conditions"]["dedupe"] == "yes"


# -- the cost before the run ----------------------------------------------------------------------
def test_a_dry_run_says_the_cost_and_asks_nothing(tmp_path):
    argv = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "p.jsonl"), "--dry-run"]
    result = CliRunner().invoke(run_cli, argv, env=ENV)
    assert result.exit_code == 0, result.output
    assert "1,280 rows, 85 distinct prompts, 1,280 requests (stateless)." in result.output
    assert "Prompt tokens: 119,552 (estimate (no --tokenizer given)" in result.output
    assert "at most 327,680 (--max-tokens each)" in result.output
    assert "--dedupe would ask 85 requests instead of 1,280." in result.output
    assert not list(tmp_path.iterdir())
    sequential = CliRunner().invoke(run_cli, [*argv, "--protocol", "sequential"], env=ENV)
    assert sequential.exit_code == 0, sequential.output
    assert "1,440 requests (sequential)" in sequential.output and "(160 run-in requests)" in sequential.output
    assert "20 sweeps" in sequential.output
    bad = CliRunner().invoke(run_cli, [*argv, "--tokenizer", str(tmp_path / "none.json")], env=ENV)
    assert bad.exit_code == 2 and "no such file" in bad.output


def test_the_estimate_counts_history_run_in_and_what_a_prefix_cache_saves(smoke_rows, reference):
    catalogue = reference.table.to_pylist()
    stateless = estimate(smoke_rows, RunConfig(model="m"))
    windowed = estimate(smoke_rows, RunConfig(model="m", protocol="sequential", history=8, run_in=8), None, catalogue)
    whole = estimate(smoke_rows, RunConfig(model="m", protocol="sequential", history=None, run_in=8), None, catalogue)
    assert windowed.requests == whole.requests == 1440 and windowed.run_in_requests == 160
    # Without their history, the sequential requests are the stateless ones plus the run-in's own prompts.
    assert windowed.prompt_tokens - windowed.history_tokens > stateless.prompt_tokens
    assert whole.history_tokens > windowed.history_tokens > 0 and whole.run_in_tokens == windowed.run_in_tokens > 0
    # A window of 8 changes every request's history: the cache keeps little. The whole
    # conversation is a prefix of the next request: computed once.
    assert windowed.uncached_prompt_tokens > 0.9 * windowed.prompt_tokens
    assert whole.uncached_prompt_tokens < 0.03 * whole.prompt_tokens
    assert whole.uncached_prompt_tokens < 1.2 * stateless.prompt_tokens * 1440 / 1280


def test_the_estimate_is_the_pieces_a_bpe_pre_tokenizer_cuts():
    assert Estimate()("Solve for x: 3.250 + 12") == len(["Solve", " for", " x", ":", " 3", ".", "250", " +", " 12"])


def test_a_tokenizer_file_counts_the_tokens(tmp_path, smoke_rows):
    tokenizers = pytest.importorskip("tokenizers")
    from mathbode.runner.cost import load_counter

    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    counter = load_counter(str(tmp_path / "tokenizer.json"))
    assert counter.exact and counter("a b c") == 3
    cost = estimate(smoke_rows[:1], RunConfig(model="m"), counter)
    words = len(re.findall(r"\w+|[^\w\s]+", smoke_rows[0]["prompt"]))
    assert cost.prompt_tokens == words + 4 + 3 and "tokenizer.json" in cost.lines()[1]
    assert math.isfinite(cost.prompt_tokens)


def test_vllm_run_batch_failures_in_its_one_output_file_are_null_rows(tmp_path, smoke_rows):
    # vllm run-batch writes a failed request into its output file: status 400, no body, the
    # message as `error` (a string, or an ErrorResponse object).
    rows = [r for r in smoke_rows if r["family"] == "linear_solve"][:3]
    config = RunConfig(model="m")
    batch.write(rows, config, tmp_path / "b", {"preset": "SMOKE"})
    ids = [batch.custom_id(r) for r in rows]
    out = tmp_path / "results.jsonl"
    completion = {"choices": [{"message": {"role": "assistant", "content": "[answer_start] 1.000000 [answer_end]"}}]}
    out.write_text(
        "".join(
            json.dumps(x) + "\n"
            for x in [
                {
                    "id": "vllm-1",
                    "custom_id": ids[2],
                    "error": None,
                    "response": {"status_code": 200, "request_id": "a", "body": completion},
                },
                {
                    "id": "vllm-2",
                    "custom_id": ids[0],
                    "error": "The model does not support Chat Completions API",
                    "response": {"status_code": 400, "request_id": "b", "body": None},
                },
                {
                    "id": "vllm-3",
                    "custom_id": ids[1],
                    "response": {"status_code": 400, "request_id": "c"},
                    "error": {"object": "error", "error": {"message": "prompt too long", "code": 400}},
                },
            ]
        )
    )
    got = batch.read(tmp_path / "b", [out])
    assert [line.get("response") for line in got.lines] == [None, None, "[answer_start] 1.000000 [answer_end]"]
    assert got.lines[0]["meta"]["failed"] == "400: The model does not support Chat Completions API"
    assert got.lines[1]["meta"]["failed"] == "400: 400 prompt too long"
    assert got.counts() == {
        "rows": 3,
        "requests": 3,
        "answered": 1,
        "failed": 2,
        "missing": 0,
        "compliant_rows": 1,
        "null_rows": 2,
    }
