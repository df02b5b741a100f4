"""Keep secrets out of every message: servers sometimes echo the credentials they were sent."""

from __future__ import annotations

import re

# `Authorization: Bearer <anything>` and Hugging Face tokens, wherever they appear.
# Idempotent: an already redacted credential is left as it is.
_PATTERNS = (re.compile(r"(?i)(bearer\s+)(?!\[redacted\])[^\s\"',;]+"), re.compile(r"\bhf_[A-Za-z0-9]{6,}"))


def redact(text: str, *secrets: str | None) -> str:
    """`text` with each known secret, any bearer credential and any Hugging Face token replaced by [redacted]."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    text = _PATTERNS[0].sub(lambda m: m.group(1) + "[redacted]", text)
    return _PATTERNS[1].sub("[redacted]", text)
