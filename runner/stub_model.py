"""A stand-in model server, so "Evaluate a model" and every documented reading can be tried
before a model is at hand.

`python -m mathbode.runner.stub_model --port 8000` serves an OpenAI-compatible chat-completions
API on 127.0.0.1 that answers MathBode's prompts from a release's exact answers (the canonical
rows, or `--reference DIR`: a multi-tone, paired GAP or fresh-split release folder). The model
name a request asks for picks a known system (`systems.PATTERNS`: truth, noisy, delay-K,
anchor-A, poly-E-O, wiener-A-E-O, hammerstein-A-E-O, jitter-E, fixed-E, numbers, gsgain-G), its
numbers filled in (`delay-2`, `anchor-0.5`). `GET /v1/models` lists one model of each pattern
with the pattern and what it answers; a pattern asked as it is (`delay-K`) or an unknown name is
a 404 that lists the patterns.

Token usage is reported as an OpenAI server reports it (`usage`: prompt, completion and total
tokens), counted as `mathbode run --dry-run` estimates them (`runner.cost`: the pieces a BPE
pre-tokenizer cuts a text into, 4 tokens of chat template a message and 3 a request), so a run
against the stand-in records the spend its dry run predicted.

A prompt the release does not hold gets text without answer tags (a non-compliant answer). It is
a stand-in, not a benchmark of anything: one process, no authentication, for 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from mathbode.core.errors import MathBodeError

from .cost import TEMPLATE_PER_MESSAGE, TEMPLATE_PER_REQUEST, Estimate
from .systems import PATTERNS, KnownSystems, UnknownModel, deviations, exact, parse_system, served

#: The largest body a request may have (a sequential sweep's conversation is tens of kilobytes).
MAX_BODY = 8 << 20


def answer_text(value: float) -> str:
    """A number in the answer format, truncated toward zero to six decimals."""
    return exact(value)


def usage(messages: list[dict[str, Any]], text: str) -> dict[str, int]:
    """The token usage of one request and its completion, counted as the dry run estimates them."""
    count = Estimate()
    prompt = sum(count(str(m.get("content") or "")) + TEMPLATE_PER_MESSAGE for m in messages) + TEMPLATE_PER_REQUEST
    completion = count(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@dataclass
class StubModel:
    """A release's exact answers, served by model name through the known systems."""

    systems: KnownSystems
    #: The usage it has reported since it started, summed (prompt_tokens, completion_tokens, requests).
    reported: Counter[str] = field(default_factory=Counter)

    def models(self) -> dict[str, Any]:
        """`GET /v1/models`: one model of each pattern, the pattern and what it answers."""
        return {
            "object": "list",
            "data": [
                {
                    "id": p.example,
                    "object": "model",
                    "created": 0,
                    "owned_by": "mathbode-stand-in",
                    "pattern": p.pattern,
                    "description": p.about,
                }
                for p in PATTERNS
            ],
        }

    def answer(self, model: str, messages: list[dict[str, Any]]) -> str:
        """The completion text for `model` asked `messages`; raises `UnknownModel` for a model it does not serve."""
        return self.systems.answer(parse_system(model), messages)

    def respond(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """(status, JSON payload) of one HTTP request."""
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, self.models()
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 404, _error(f"no route {method} {path}: this stand-in serves POST /v1/chat/completions", "not_found")
        try:
            request = json.loads(body)
            model, messages = request["model"], request["messages"]
            if not isinstance(model, str) or not isinstance(messages, list):
                raise TypeError
        except (ValueError, KeyError, TypeError, RecursionError):
            return 400, _error("expected a JSON chat-completions request with `model` and `messages`", "bad_request")
        messages = [m for m in messages if isinstance(m, dict)]
        try:
            text = self.answer(model, messages)
        except UnknownModel as err:
            return 404, _error(str(err), "model_not_found")
        if "response_format" in request:  # `--constrain-format json-schema`: the number alone, as JSON
            text = json.dumps({"answer": text.split()[1] if text.count(" ") == 2 else text})
        counted = usage(messages, text)
        self.reported.update(prompt_tokens=counted["prompt_tokens"], completion_tokens=counted["completion_tokens"])
        self.reported["requests"] += 1
        return 200, _completion(model, text, counted)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One HTTP/1.1 connection (keep-alive, Content-Length bodies)."""
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                length = int(headers.get("content-length", "0"))
                if not 0 <= length <= MAX_BODY:
                    status, payload = 413, _error(f"a request body of at most {MAX_BODY:,} bytes", "too_large")
                    close = True
                else:
                    status, payload = self.respond(method, path, await reader.readexactly(length))
                    close = headers.get("connection", "").lower() == "close"
                data = json.dumps(payload).encode()
                reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}[status]
                head_out = (
                    f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}"
                )
                writer.write(f"{head_out}\r\n\r\n".encode() + data)
                await writer.drain()
                if close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _completion(model: str, text: str, counted: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-mathbode-stand-in",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": counted,
    }


def systems_of(reference: str | None, noise: float = 0.01, seed: int = 0) -> KnownSystems:
    """The known systems over the canonical release's exact answers, or a release folder's (with
    its garbled names when it is a paired GAP release)."""
    gs_names: list[str] = []
    if reference:
        from mathbode.schema.manifest import read_manifest
        from mathbode.schema.release_reference import release_reference

        ref = release_reference(Path(reference), None)
        if ref.prompts_only:
            raise MathBodeError(
                f"--reference {reference}: a prompts-only release holds no answers to serve; give its full split "
                "(the keeper's folder)."
            )
        table = ref.table
        for entry in read_manifest(Path(reference)).families.values():
            if entry.variant == "GS" and entry.surface:
                gs_names += [str(n) for n in entry.surface.get("names", {}).values()]
    else:
        from mathbode.schema.packaged import packaged_reference
        from mathbode.schema.universe import canonical_universe

        table = packaged_reference(list(canonical_universe().families)).table
    rows = table.select(
        ["family", "question_id", "signal_type", "amplitude_scale", "prompt", "ground_truth"]
    ).to_pylist()
    truth = {r["prompt"]: r["ground_truth"] for r in rows}
    return KnownSystems(truth, deviations(rows), tuple(gs_names), noise, seed)


async def serve(model: StubModel, host: str, port: int, ready: Any = None) -> None:
    server = await asyncio.start_server(model.handle, host, port, backlog=1024)
    where = server.sockets[0].getsockname()
    url = f"http://{where[0]}:{where[1]}/v1"
    if ready is not None:
        ready(url, server)
    else:
        print(f"Serving {served()} at {url} (Ctrl-C stops)", flush=True)
    await server.serve_forever()


@contextmanager
def running(model: StubModel, host: str = "127.0.0.1") -> Iterator[str]:
    """`model` served from a thread of this process, on a free port: yields its base URL (for the
    benchmarks and tests, which read its systems through the real `mathbode run`)."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    found: dict[str, Any] = {}

    def ready(url: str, server: Any) -> None:
        found["url"] = url
        started.set()

    async def stop() -> None:
        # The connections a client keeps alive end here too, not when the loop is gone.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def go() -> None:
        asyncio.set_event_loop(loop)
        loop.create_task(serve(model, host, 0, ready))
        loop.run_forever()

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    if not started.wait(30):
        raise MathBodeError("the stand-in did not start within 30 s")
    try:
        yield found["url"]
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _help() -> str:
    """The patterns and what each answers, wrapped for a terminal."""
    width = max(len(p.pattern) for p in PATTERNS)
    listed = [
        textwrap.fill(p.about, 100, initial_indent=f"  {p.pattern:<{width}}  ", subsequent_indent=" " * (width + 4))
        for p in PATTERNS
    ]
    examples = ", ".join(p.example for p in PATTERNS if p.arity)
    head = f"The model a request names picks what it answers; a pattern's capital letters are its numbers ({examples})."
    tail = (
        "t is a row's exact answer, z(prompt) a standard normal number fixed by the prompt's text, c and s the centre "
        "and scale of its question's exact answers (u = (t - c) / s). Token usage is reported as `mathbode run "
        "--dry-run` estimates it."
    )
    return f"{textwrap.fill(head, 100)}\n\n" + "\n".join(listed) + f"\n\n{textwrap.fill(tail, 100)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mathbode.runner.stub_model",
        description="A stand-in OpenAI-compatible model server answering MathBode's prompts with known systems.",
        epilog=_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=8000, help="port on --host (0: any free port; default 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--reference",
        default=None,
        help="a release folder to answer: multi-tone, paired (GAP) or a fresh split (default: the canonical rows)",
    )
    parser.add_argument("--noise", type=float, default=0.01, help="relative noise s of `noisy` (default 0.01)")
    parser.add_argument("--seed", type=int, default=0, help="seed of `noisy`'s draws (default 0)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: a port is 0 to 65535")
    if not 0 <= args.noise < 1e6:
        parser.error(f"--noise {args.noise}: a relative spread, 0 or more")
    try:
        model = StubModel(systems_of(args.reference, args.noise, args.seed))
        asyncio.run(serve(model, args.host, args.port))
    except MathBodeError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(
            f"Error: cannot listen on {args.host}:{args.port} ({err.strerror}); give another --port.", file=sys.stderr
        )
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
