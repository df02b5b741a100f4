"""Keep secrets out of every message: servers sometimes echo the credentials they were sent.

What counts as a credential: a key of at least `MIN_SECRET_CHARS` characters. Local servers
(vLLM, llama.cpp, Ollama) take any key and are commonly given a placeholder ("0", "x", "EMPTY",
"ollama"): replacing every "0" of every answer would corrupt the answers and protect nothing. A
shorter key is never redacted; a longer one is replaced wherever it occurs, and only there.
"""

from __future__ import annotations

import re

#: The shortest key treated as a credential (a placeholder key is shorter; a real one far longer).
MIN_SECRET_CHARS = 8

# `Authorization: Bearer <anything>` and Hugging Face tokens, wherever they appear in a message.
# Idempotent: an already redacted credential is left as it is.
_PATTERNS = (re.compile(r"(?i)(bearer\s+)(?!\[redacted\])[^\s\"',;]+"), re.compile(r"\bhf_[A-Za-z0-9]{6,}"))
REDACTED = "[redacted]"


def is_credential(secret: str | None) -> bool:
    """Whether `secret` is long enough to be a credential (see the module's docstring)."""
    return secret is not None and len(secret.strip()) >= MIN_SECRET_CHARS


def redact_secret(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced by [redacted] where it occurs, if it is a credential; nothing
    else changes. For a model's answer: only the key itself is taken out of it."""
    if secret is None or not is_credential(secret) or secret not in text:
        return text
    return text.replace(secret, REDACTED)


def redact(text: str, *secrets: str | None) -> str:
    """A message with each known secret (a credential, see `is_credential`), any bearer credential
    and any Hugging Face token replaced by [redacted]."""
    for secret in secrets:
        text = redact_secret(text, secret)
    text = _PATTERNS[0].sub(lambda m: m.group(1) + REDACTED, text)
    return _PATTERNS[1].sub(REDACTED, text)
