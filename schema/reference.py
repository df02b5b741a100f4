"""The canonical rows a submission is asked and scored against, and where they came from.

A `Reference` is the rows plus their provenance (the builder's own rows, a release folder, or a
release fetched from the Hub), the release's name and each family's content hash, so a score or
a run record can say exactly what it was measured against. Its `universe` (the release's
families, see `universe`) is what a submission to it may name and how its row ids count.

A `Reference` read from a release folder is made in `release_reference`, which checks the folder
first: this type stays below the release checker (`dataset`), which reads the packaged rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError
from mathbode.core.hashing import combined_hash

from .release_hashes import RELEASE_CONTENT_HASHES, RELEASE_PROMPTS_HASH, release_content_hash
from .universe import CANONICAL_RELEASE, Universe, canonical_universe

#: The `source` of the builder's own rows.
BUILDER_SOURCE = "builder"


@dataclass(frozen=True)
class Reference:
    """Canonical rows of some families, with where they came from."""

    table: pa.Table
    #: `builder`, a release folder's path, or `hub:ORG/NAME[@REV]`.
    source: str
    #: family -> content hash of its rows, in canonical order.
    family_hashes: dict[str, str]
    #: The release's name (MANIFEST.json `name`; "MathBode" for the packaged canonical rows).
    name: str = CANONICAL_RELEASE
    #: Every family of the release (not only those read): what a submission to it may name.
    universe: Universe = field(default_factory=canonical_universe)
    #: The whole release's content hash (MANIFEST.json `content_hash`), whichever families were read.
    release_hash: str = field(default_factory=release_content_hash)
    #: The split's identity (MANIFEST.json `prompts_hash`): what a submission records it answered;
    #: "" for an old release that does not say and was not read whole.
    split_hash: str = RELEASE_PROMPTS_HASH
    #: The rows carry no ground truth (a prompts-only release): they can be asked, not scored.
    prompts_only: bool = False
    #: A fresh split's seed ({"seed": ...}) or commitment ({"seed_sha256": ...}); None otherwise.
    split: dict[str, str] | None = None
    #: A paired release's GAP variants: variant family -> (its original, its kind); empty otherwise.
    variants: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """One hash over the families' content hashes (the release's own when all are present)."""
        return combined_hash(list(self.family_hashes.values()))

    @property
    def is_canonical(self) -> bool:
        """Whether every family's rows are the canonical release's (their content hash proves it)."""
        return all(RELEASE_CONTENT_HASHES.get(f) == h for f, h in self.family_hashes.items())

    def release_identity(self) -> dict[str, str] | None:
        """The release a score on these rows is a score of, when it is not the canonical benchmark:
        its name and content hash (a condition of a score, like the protocol); None when canonical."""
        if self.is_canonical:
            return None
        return {"release": self.name, "release_content_hash": self.release_hash}

    def provenance(self) -> dict[str, object]:
        return {
            "source": self.source,
            "release": self.name,
            "release_content_hash": self.release_hash,
            "split": self.split_hash,
            "content_hash": self.content_hash,
            "families": dict(self.family_hashes),
        }

    def only(self, families: list[str]) -> Reference:
        """The rows of `families` alone; a family the release lacks is an error."""
        missing = [f for f in families if f not in self.family_hashes]
        if missing:
            raise ReferenceMismatchError(f"--reference {self.source} has no rows for {', '.join(missing)}.")
        names = [f for f in self.family_hashes if f in families]
        if names == list(self.family_hashes):
            return self
        import pyarrow.compute as pc  # here: the build reaches this module and never filters (40 ms)

        table = self.table.filter(pc.is_in(self.table.column("family"), value_set=pa.array(names)))
        return replace(self, table=table, family_hashes={f: self.family_hashes[f] for f in names})
