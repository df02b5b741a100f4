"""One chat completion, asked through the official `openai` client, with retries that respect the server.

Rate limits (429), server errors (5xx), timeouts and dropped connections are retried with
exponential backoff and full jitter, waiting at least what `Retry-After` asks. Problems no retry
can fix (a rejected key, an unknown model, a request the server refuses, a server that cannot
be reached at all) raise `FatalServerError`, which stops the run.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

import openai

from mathbode.core.errors import MathBodeError
from mathbode.core.redact import redact, redact_secret

from .completions import NotACompletion, parse_completion, request_body
from .config import RunConfig
from .formats import unwrap

#: Backoff: the first wait is up to BASE seconds, doubling per attempt, never above CAP.
BACKOFF_BASE, BACKOFF_CAP = 0.5, 30.0
#: The longest wait a server's Retry-After gets; from LONG_WAIT on, the wait is said on stderr.
MAX_RETRY_AFTER, LONG_WAIT = 300.0, 30.0
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class FatalServerError(MathBodeError):
    """The server refused in a way retrying cannot fix; the run stops."""


class RetriesExhausted(Exception):
    """A row failed after every retry (the run goes on; the row is reported and retried on resume)."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


@dataclass(frozen=True)
class Answer:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    attempts: int

    def meta(self) -> dict[str, Any]:
        return {
            "latency_s": round(self.latency_s, 4),
            "attempts": self.attempts,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def make_client(config: RunConfig) -> openai.AsyncOpenAI:
    # Retries are ours (to count attempts and honour Retry-After the same way on every server).
    # The aiohttp transport the client offers: its default HTTP stack spent about 2 ms of CPU per
    # request, which capped a run near 450 answers/s; with aiohttp it runs at 600 to 900
    # (benchmarks/bench_run.py).
    return openai.AsyncOpenAI(
        api_key=config.api_key or "not-needed",
        base_url=config.base_url,
        timeout=config.timeout,
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(timeout=config.timeout),
    )


def retry_after(err: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms` or `retry-after` in seconds), if any."""
    headers = err.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                seconds = float(value) * scale
            except ValueError:
                continue  # an HTTP date: fall back to our own backoff
            if seconds != seconds:
                continue  # NaN
            return max(0.0, seconds)  # `inf` or a day: capped where it is waited, and said (`wait_text`)
    return None


def wait_text(asked: float | None, wait: float) -> str:
    """What a long wait says: what the server asked, and that the wait is capped when it is."""
    if asked is not None and asked > MAX_RETRY_AFTER:
        said = "an endless wait" if asked == float("inf") else f"a wait of {asked:,.0f} s"
        return (
            f"the server asked for {said} before retrying (Retry-After); waiting {wait:.0f} s instead, the longest "
            "wait mathbode takes, then retrying."
        )
    return f"the server asked to wait {wait:.0f} s before retrying (Retry-After); waiting."


def backoff(attempt: int, asked: float | None) -> float:
    """Full jitter, never less than what the server asked."""
    wait = random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)))
    return max(wait, asked or 0.0)


def _fatal(err: openai.APIStatusError, config: RunConfig) -> FatalServerError:
    where = config.base_url or "the default endpoint"
    status = err.status_code
    if status == 401:
        return FatalServerError(
            f"{where} rejected the API key (401). Set the key in ${config.api_key_env} (or name another "
            "variable with --api-key-env)."
        )
    if status == 403:
        return FatalServerError(f"{where} refused access to model {config.model!r} (403).")
    if status == 404:
        # The server's own words may say what it serves (the stand-in lists its patterns).
        said = _server_message(err, config).rstrip(".")
        return FatalServerError(
            f"{where} does not know model {config.model!r} (404). List the server's models at {where}/models."
            + (f" The server says: {said}." if said else "")
        )
    hint = (
        f" The server may not support --constrain-format {config.constrain_format}; try another mechanism."
        if config.constrain_format and status in (400, 422)
        else ""
    )
    return FatalServerError(
        f"{where} refused the request ({status}): {_server_message(err, config).rstrip('.')}.{hint}"
    )


def _server_message(err: openai.APIStatusError, config: RunConfig) -> str:
    body = err.body
    text = str(err)
    if isinstance(body, dict):
        text = str(body.get("message") or (body.get("error") or {}).get("message") or text)
    return redact(text, config.api_key)[:300]


async def ask(
    client: openai.AsyncOpenAI, config: RunConfig, prompt: str, history: list[tuple[str, str]] | None = None
) -> Answer:
    """The model's answer to one prompt (after `history`, the conversation so far); raises
    `RetriesExhausted` or `FatalServerError`."""
    body = request_body(config, prompt, history or [])
    attempt = 0
    while True:
        attempt += 1
        start = time.perf_counter()
        asked: float | None = None
        try:
            # The client's transport, auth and error mapping, without its typed request and response
            # layers: they cost about 2 ms a request, more than everything else the runner does.
            # wait_for bounds the whole request: the client's timeout bounds each read, so a server
            # that drips a byte every half second would never time out.
            raw = await asyncio.wait_for(
                client.post("/chat/completions", cast_to=bytes, body=body), timeout=config.timeout
            )
            text, finish, prompt_tokens, completion_tokens = parse_completion(raw)
        except openai.APIStatusError as err:
            if err.status_code not in RETRY_STATUSES and err.status_code < 500:
                raise _fatal(err, config) from None
            reason = f"{err.status_code}: {_server_message(err, config)}"
            asked = retry_after(err)
        except (openai.APITimeoutError, openai.APIConnectionError) as err:
            reason = redact(f"{type(err).__name__}: {err}", config.api_key)
        except (asyncio.TimeoutError, TimeoutError):
            reason = f"no complete answer within --timeout {config.timeout:g} s"
        except NotACompletion as err:  # a 200 whose body is not a completion: retried, never an answer
            reason = redact(f"the server's answer is not a chat completion: {err}", config.api_key)
        else:
            return Answer(
                # A server may echo the key it was sent: never written anywhere. Only the key
                # itself is taken out; an answer without it is written exactly as it came.
                text=redact_secret(unwrap(config.constrain_format, text), config.api_key),
                finish_reason=redact_secret(finish, config.api_key) if finish else finish,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                latency_s=time.perf_counter() - start,
                attempts=attempt,
            )
        if attempt > config.max_retries:
            raise RetriesExhausted(reason, attempt)
        wait = backoff(attempt, None if asked is None else min(asked, MAX_RETRY_AFTER))
        if wait >= LONG_WAIT:
            print(wait_text(asked, wait), file=sys.stderr)
        await asyncio.sleep(wait)


async def preflight(client: openai.AsyncOpenAI, config: RunConfig) -> None:
    """Fail at once, with one line, when the server cannot be reached or rejects the key."""
    where = config.base_url or str(client.base_url)
    try:
        await asyncio.wait_for(client.models.list(), timeout=config.timeout)
    except (asyncio.TimeoutError, TimeoutError):
        raise FatalServerError(
            f"{where} did not answer the model list within --timeout {config.timeout:g} s. Is it the right "
            "server, and is it working?"
        ) from None
    except (ValueError, TypeError, KeyError, RecursionError):
        return  # a list we cannot read: some servers answer oddly here; the first completion will tell
    except openai.APIConnectionError:
        raise FatalServerError(
            f"cannot reach {where}. Is the server running, and is --base-url right (it usually ends in /v1)?"
        ) from None
    except openai.APIStatusError as err:
        if err.status_code in (401, 403):
            raise _fatal(err, config) from None
        # Some servers do not list models; the first completion will tell.
