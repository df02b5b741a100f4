"""A stand-in model server, so "Evaluate a model" can be tried before a model is at hand.

`python -m mathbode.runner.stub_model --port 8000` serves an OpenAI-compatible chat-completions
API on 127.0.0.1 that answers MathBode's prompts from a release's ground truth. The model name a
request asks for picks what it answers:

| model      | answers                                                                              |
|------------|--------------------------------------------------------------------------------------|
| `truth`    | the exact answer, truncated to six decimals (MB-Core 1; calibrated MB-Plus 1)         |
| `noisy`    | the truth times 1 + s N(0, 1), `s` = `--noise` (drawn afresh per request, seeded)     |
| `delay-K`  | the truth of the question K user turns back in its conversation: a pure delay of K    |
|            | steps, seen with `mathbode run --protocol sequential` (a stateless request has one    |
|            | turn, so it answers its own question)                                                |

A prompt the release does not hold gets text without answer tags (a non-compliant answer), an
unknown model a 404 that lists the models. It is a stand-in, not a benchmark of anything: one
process, no authentication, for 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathbode.core.errors import MathBodeError
from mathbode.schema.layout import layout
from mathbode.schema.parsing import truncate

#: What a prompt outside the release is answered with: text the strict parser finds no answer in.
UNKNOWN_PROMPT = "I do not know this question."
MODELS = ("truth", "noisy", "delay-K")
_DELAY = re.compile(r"delay-(\d{1,2})")
#: The largest body a request may have (a sequential sweep's conversation is tens of kilobytes).
MAX_BODY = 8 << 20


def answer_text(value: float) -> str:
    """A number in the answer format, truncated toward zero to six decimals."""
    lay = layout()
    return f"{lay.answer_start} {truncate(value):.{lay.answer_decimals}f} {lay.answer_end}"


@dataclass
class StubModel:
    """The answers of a release, served by model name (see the module's table)."""

    #: prompt -> its exact answer (the release's ground truth).
    truth: dict[str, float]
    noise: float = 0.01
    seed: int = 0
    _random: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def answer(self, model: str, messages: list[dict[str, Any]]) -> str | None:
        """The completion text for `model` asked `messages`; None for a model it does not serve."""
        turns = [str(m.get("content")) for m in messages if m.get("role") == "user"]
        if not turns:
            return UNKNOWN_PROMPT
        delay = _DELAY.fullmatch(model)
        if delay:
            asked = turns[max(0, len(turns) - 1 - int(delay.group(1)))]
        elif model in ("truth", "noisy"):
            asked = turns[-1]
        else:
            return None
        value = self.truth.get(asked)
        if value is None:  # `--instruction-as-system` sends the answer instruction apart from the question
            value = self.truth.get(f"{asked}\n\n{layout().answer_instruction()}")
        if value is None:
            return UNKNOWN_PROMPT
        if model == "noisy":
            value *= 1 + self.noise * self._random.gauss(0, 1)
        return answer_text(value)

    def respond(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """(status, JSON payload) of one HTTP request."""
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]}
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 404, _error(f"no route {method} {path}: this stub serves POST /v1/chat/completions", "not_found")
        try:
            request = json.loads(body)
            model, messages = request["model"], request["messages"]
            if not isinstance(model, str) or not isinstance(messages, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return 400, _error("expected a JSON chat-completions request with `model` and `messages`", "bad_request")
        text = self.answer(model, [m for m in messages if isinstance(m, dict)])
        if text is None:
            return 404, _error(
                f"The model `{model}` does not exist; this stub serves {', '.join(MODELS)}.", "model_not_found"
            )
        if "response_format" in request:  # `--constrain-format json-schema`: the number alone, as JSON
            text = json.dumps({"answer": text.split()[1] if text.count(" ") == 2 else text})
        return 200, _completion(model, text)

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


def _completion(model: str, text: str) -> dict[str, Any]:
    tokens = len(text.split())
    return {
        "id": "chatcmpl-mathbode-stub",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens},
    }


def truth_of(reference: str | None) -> dict[str, float]:
    """prompt -> exact answer of every row of the canonical release, or of a release folder."""
    if reference:
        from mathbode.schema.release_reference import release_reference

        ref = release_reference(Path(reference), None)
        if ref.prompts_only:
            raise MathBodeError(f"--reference {reference}: a prompts-only release holds no answers to serve.")
        table = ref.table
    else:
        from mathbode.schema.packaged import packaged_reference
        from mathbode.schema.universe import canonical_universe

        table = packaged_reference(list(canonical_universe().families)).table
    return dict(zip(table.column("prompt").to_pylist(), table.column("ground_truth").to_pylist(), strict=True))


async def serve(model: StubModel, host: str, port: int) -> None:
    server = await asyncio.start_server(model.handle, host, port, backlog=1024)
    where = server.sockets[0].getsockname()
    print(f"Serving {', '.join(MODELS)} at http://{where[0]}:{where[1]}/v1 (Ctrl-C stops)", flush=True)
    await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mathbode.runner.stub_model",
        description="A stand-in OpenAI-compatible model server answering MathBode's prompts: truth, noisy, delay-K.",
    )
    parser.add_argument("--port", type=int, default=8000, help="port on --host (0: any free port; default 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--reference", default=None, help="a release folder to answer (default: the canonical rows)")
    parser.add_argument("--noise", type=float, default=0.01, help="relative noise of `noisy` (default 0.01)")
    parser.add_argument("--seed", type=int, default=0, help="seed of `noisy`'s draws (default 0)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: a port is 0 to 65535")
    if not 0 <= args.noise < 1e6:
        parser.error(f"--noise {args.noise}: a relative spread, 0 or more")
    try:
        model = StubModel(truth_of(args.reference), args.noise, args.seed)
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
