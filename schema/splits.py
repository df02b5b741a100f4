"""A split's identity: the content hash of its prompts, and whether a submission answered it.

Every release of one grid has the same row keys, so a submission answered on one split and
scored against another would read as a terrible model, with no message. A split is identified by
the `prompts_hash` of its rows: the content hash of the key columns, `p_value` and `prompt` (not
`ground_truth`, so a prompts-only release and its full split are one split). The runner, the
converters and the framework tasks record it in every line's `meta.split`; the scorer and the
validator compare it with the reference's.
"""

from __future__ import annotations

import hashlib
import uuid

import pyarrow as pa

from mathbode.core.hashing import combined_hash, content_hash

from .layout import layout

#: Where split identities (canaries) are named from: a fixed namespace of ours.
CANARY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/mathbode/mathbode/canary")

#: What a submission answered: the row's key, its rendered p and its prompt.
PROMPT_FIELDS = ("p_value", "prompt")


def prompt_columns() -> list[str]:
    return [*layout().key, *PROMPT_FIELDS]


def prompts_hash(table: pa.Table) -> str:
    """The content hash of one family's prompts (its rows without their ground truth)."""
    return content_hash(table.select(prompt_columns()))


def split_hash(family_prompt_hashes: list[str]) -> str:
    """One release's identity from its families' prompts hashes, in release order."""
    return combined_hash(family_prompt_hashes)


def split_mismatch(recorded: str | None, reference_split: str, reference: str, submission: str) -> str | None:
    """Why a submission recorded as answering `recorded` must not be scored against a reference
    whose split is `reference_split` (None: they are the same, or nothing was recorded)."""
    if recorded is None or recorded == reference_split:
        return None
    return (
        f"{submission} answered the split {recorded}, but --reference {reference} is the split {reference_split}: "
        "its rows have the same keys and other questions, so its scores would mean nothing. Score it against "
        "the release it was run on (its run record names it)."
    )


def seed_commitment(seed: str) -> str:
    """What a private split publishes instead of its seed: a hash that binds the keeper to it.

    A label such as 2026-12 is guessable from its hash: a private split needs a secret seed of
    its own (16 random bytes, say), which only this hash reveals nothing about."""
    return "sha256:" + hashlib.sha256(f"mathbode-split-seed\0{seed}".encode()).hexdigest()


def canary(commitment: str | None) -> str:
    """The canary GUID of a release: of the canonical one (no seed), or of a split's commitment
    (so a private split's canary says nothing of its seed)."""
    return str(uuid.uuid5(CANARY_NAMESPACE, commitment or "MathBode canonical release"))
