"""A model server that answers wrongly (issue #21, items 6-8 and 12): a 200 that is not a chat
completion is a failed request, never an answer; bodies that broke the runner are messages; the
timeout bounds a whole request; a server's Retry-After cannot stall a run; the key is never written."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.cli.run import main as run_cli
from mathbode.runner.client import MAX_RETRY_AFTER, backoff, retry_after, wait_text

KEY = "sk-hostile-0123456789abcdef"


class Hostile:
    """A server on 127.0.0.1 whose /chat/completions answers `body` (bytes) with `status`,
    optionally one byte every `drip` seconds; /models answers a list (dripped too with `drip_models`)."""

    def __init__(self, body: bytes, status: int = 200, drip: float = 0.0, drip_models: bool = False) -> None:
        self.body, self.status, self.drip, self.drip_models = body, status, drip, drip_models
        self.completions = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, data: bytes, drip: float) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not drip:
                    self.wfile.write(data)
                    return
                for i in range(len(data)):
                    try:
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(drip)

            def do_GET(self) -> None:  # noqa: N802
                # Other models after `m`: dripped, the list takes 60 s, twice the bound below.
                others = [{"id": f"other-{n}", "object": "model"} for n in range(4)]
                models = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}, *others]}).encode()
                self._send(200, models, outer.drip if outer.drip_models else 0.0)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length", "0")))
                outer.completions += 1
                self._send(outer.status, outer.body, outer.drip)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _completion(content) -> bytes:
    # An id as long as a real one and more: dripped, the answer takes 60 s, twice the bound below.
    return json.dumps(
        {
            "id": "chatcmpl-" + "0" * 64,
            "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
    ).encode()


def _run(server: Hostile, tmp_path: Path, *args: str, key: str | None = KEY):
    argv = ["--base-url", server.base_url, "--model", "m", "-o", str(tmp_path / "p.jsonl"), "--limit", "3"]
    argv += ["--max-retries", "1", "--concurrency", "1", *args]
    return CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": key, "OPENAI_BASE_URL": None})


NOT_COMPLETIONS = {
    "an error object with status 200": json.dumps({"error": {"message": "overloaded"}}).encode(),
    "an empty object": b"{}",
    "choices as an object": json.dumps({"choices": {"0": {"message": {"content": "1"}}}}).encode(),
    "integer content": _completion(5),
    "list content": _completion([{"type": "text", "text": "1"}]),
    "a lone surrogate in the content": b'{"choices": [{"message": {"content": "\\ud800 7"}}]}',
    "a body nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "not JSON": b"<html>busy</html>",
    "a JSON string": b'"hello"',
}


@pytest.mark.parametrize("name", NOT_COMPLETIONS)
def test_a_200_that_is_not_a_completion_is_a_failed_request(tmp_path, name):
    server = Hostile(NOT_COMPLETIONS[name])
    try:
        result = _run(server, tmp_path)
    finally:
        server.stop()
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "3 rows failed after 1 retries" in result.output
    assert "not a chat completion" in result.output
    assert (tmp_path / "p.jsonl").read_text() == ""  # nothing written: a resume asks them again
    assert server.completions == 6  # each row asked twice (one retry)
    record = json.loads((tmp_path / "p.run.json").read_text())
    assert record["counts"]["failed"] == 3 and record["counts"]["answered"] == 0


@pytest.mark.parametrize("key", ["sk-abc\r\nX-Evil: 1", "sk-abc\ndef", "sk-clé", "sk-\x07bell"])
def test_an_api_key_a_header_cannot_carry_is_a_usage_error(tmp_path, key):
    server = Hostile(_completion("[answer_start] 1.000000 [answer_end]"))
    try:
        result = _run(server, tmp_path, key=key)
    finally:
        server.stop()
    assert result.exit_code == 2 and "holds a character an HTTP header cannot carry" in result.output
    assert key not in result.output and server.completions == 0


def test_the_timeout_bounds_a_server_that_drips_its_answer(tmp_path):
    """A byte every 0.5 s outlived --timeout 5 (the client's timeout bounds each read)."""
    server = Hostile(_completion("[answer_start] 1.000000 [answer_end]"), drip=0.3)
    start = time.monotonic()
    try:
        result = _run(server, tmp_path, "--timeout", "1", "--limit", "1", "--max-retries", "0")
    finally:
        server.stop()
    assert result.exit_code == 1 and "no complete answer within --timeout 1 s" in result.output
    # A few seconds on an idle machine, under 30 s on a loaded one; the whole dripped answer takes 60 s.
    assert time.monotonic() - start < 30


def test_the_timeout_bounds_the_model_list_too(tmp_path):
    server = Hostile(_completion("x"), drip=0.3, drip_models=True)
    start = time.monotonic()
    try:
        result = _run(server, tmp_path, "--timeout", "1")
    finally:
        server.stop()
    assert result.exit_code == 1 and "did not answer the model list within --timeout 1 s" in result.output
    assert time.monotonic() - start < 30 and server.completions == 0  # the dripped list: 60 s


class _Headers:
    def __init__(self, value: str) -> None:
        self.headers = {"retry-after": value}


class _Err:
    def __init__(self, value: str) -> None:
        self.response = _Headers(value)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("inf", "the server asked for an endless wait before retrying (Retry-After); waiting 300 s instead"),
        ("86400", "the server asked for a wait of 86,400 s before retrying (Retry-After); waiting 300 s instead"),
        ("120", "the server asked to wait 120 s before retrying (Retry-After); waiting."),
    ],
)
def test_a_servers_retry_after_is_capped_and_said_as_asked(value, said):
    """Retry-After: inf slept forever, and 86400 a day, without a word; then 'inf' was reported
    as 'the server asked to wait 300 s'."""
    asked = retry_after(_Err(value))  # type: ignore[arg-type]
    wait = backoff(1, None if asked is None else min(asked, MAX_RETRY_AFTER))
    assert wait <= MAX_RETRY_AFTER and wait_text(asked, wait).startswith(said)
    assert retry_after(_Err("nan")) is None and retry_after(_Err("2")) == 2.0  # type: ignore[arg-type]


def test_a_key_the_server_echoes_in_its_answer_is_never_written(tmp_path):
    server = Hostile(_completion(f"your key is {KEY}. [answer_start] 1.000000 [answer_end]"))
    try:
        result = _run(server, tmp_path)
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    written = (tmp_path / "p.jsonl").read_text() + (tmp_path / "p.run.json").read_text()
    assert KEY not in written and "your key is [redacted]." in written
