"""A chat completion's request body and the reading of its answer: the protocol's data alone.

Apart from the client (`client`, which loads `openai` and its HTTP stack, 0.4-0.5 s of imports),
so that writing and reading batch files (`batch`) never loads it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .config import RunConfig
from .formats import request_fields


def request_body(config: RunConfig, prompt: str, history: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The chat-completions request body, as the protocol defines it (`history`: earlier
    (prompt, answer) exchanges of the conversation, for the sequential protocol)."""
    body: dict[str, Any] = {
        "model": config.model,
        "messages": config.messages(prompt, history or []),
        "temperature": config.temperature,
    }
    if config.max_tokens is not None:
        body["max_tokens"] = config.max_tokens
    if config.seed is not None:
        body["seed"] = config.seed
    fields = request_fields(config.constrain_format)
    body.update(fields.pop("extra_body", {}))
    body.update(fields)
    return body


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_text(text: str) -> str:
    """`text` as a UTF-8 file can hold it: a lone surrogate (valid in JSON text, which a server's
    error or finish reason may hold, but not in UTF-8) written as its escape, `\\ud800`."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class NotACompletion(ValueError):
    """A 200 answer whose body is not a chat completion (an error object, `{}`, another shape)."""


def parse_completion(raw: bytes) -> tuple[str, str | None, int | None, int | None]:
    """(text, finish reason, prompt tokens, completion tokens) of a chat completion body; raises
    `NotACompletion` for anything else, so it is retried and never written as an answer."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise NotACompletion("the body is not JSON (or nested too deep)") from None
    return completion_fields(data)


def completion_fields(data: Any) -> tuple[str, str | None, int | None, int | None]:
    """`parse_completion` of a body already read as JSON (a batch output line's `response.body`)."""
    if not isinstance(data, dict):
        raise NotACompletion("the body is not a JSON object")
    if data.get("error") is not None:
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise NotACompletion(f"the server answered with an error: {unicode_text(str(message)[:200])}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise NotACompletion("the body has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise NotACompletion("the first choice has no message")
    content = message.get("content")
    if content is None:
        content = ""  # an empty completion is an answer (non-compliant), as docs/running.md says
    if not isinstance(content, str):
        raise NotACompletion(f"the message content is not text ({type(content).__name__})")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise NotACompletion("the message content is not valid Unicode (a lone surrogate)") from None
    raw_usage = data.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    finish = choice.get("finish_reason")

    def count(name: str) -> int | None:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return (
        content,
        unicode_text(finish) if isinstance(finish, str) else None,
        count("prompt_tokens"),
        count("completion_tokens"),
    )
