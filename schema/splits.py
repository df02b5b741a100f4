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
import math
import string
import uuid

import pyarrow as pa

from mathbode.core.hashing import combined_hash, content_hash

from .layout import layout

#: Where split identities (canaries) are named from: a fixed namespace of ours.
CANARY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/mathbode/mathbode/canary")

#: The seed a release of `mathbode-build --variants gap --questions N` draws its problems from
#: when no --seed is given (a label, published in its manifest like any fresh split's).
PROBLEMS_SEED = "problems-1"

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


#: A private split's seed must resist a search: 2**128 guesses, the strength of 16 random bytes
#: (`secrets.token_hex(16)`). Its commitment is public, so a weak seed is recovered by hashing
#: candidates until one matches (`--seed 42` falls to a loop over 0..999).
MIN_PRIVATE_SEED_BITS = 128
#: The smallest alphabet a seed's characters fit, in this order, sets the bits each character can carry.
_ALPHABETS = (
    string.digits,
    string.digits + "abcdef",
    string.digits + "ABCDEF",
    string.digits + string.ascii_lowercase,
    string.digits + string.ascii_uppercase,
    string.digits + string.ascii_letters,
    string.digits + string.ascii_letters + "-_",
    string.digits + string.ascii_letters + "+/=",
    string.printable.strip(),
)
#: Fewer different characters than this reads as a pattern, whatever the length.
_MIN_DISTINCT = 8


def seed_bits(seed: str) -> float:
    """An upper estimate of a seed's entropy: the length of its shortest repeating unit times log2
    of the smallest common alphabet its characters fit (10 digits, 16 hex, 36 or 62 letters and
    digits, 64 base64, 94 printable ASCII; anything else counts as 94 too). It cannot see that a
    phrase or a date is guessable, only that a seed is too short or too regular to be random."""
    unit = seed
    for period in range(1, len(seed) // 2 + 1):
        if len(seed) % period == 0 and seed[:period] * (len(seed) // period) == seed:
            unit = seed[:period]
            break
    chars = set(unit)
    size = next((len(a) for a in _ALPHABETS if chars <= set(a)), len(_ALPHABETS[-1]))
    return len(unit) * math.log2(size)


def private_seed_problem(seed: str) -> str | None:
    """Why `seed` must not seed a private split (None: it may)."""
    bits = seed_bits(seed)
    if bits >= MIN_PRIVATE_SEED_BITS and len(set(seed)) >= _MIN_DISTINCT:
        return None
    return (
        f"a private split's seed must be a secret nobody can guess: its commitment (sha256) is published, so a "
        f"short or regular seed is found by hashing candidates. This one carries at most {bits:.0f} bits "
        f"(needed: {MIN_PRIVATE_SEED_BITS}, e.g. 32 hex digits, with at least {_MIN_DISTINCT} different "
        'characters). Make one with: python -c "import secrets; print(secrets.token_hex(16))"'
    )
