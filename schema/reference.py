"""The canonical rows a submission is asked and scored against, and where they came from.

A `Reference` is the rows plus their provenance (the builder's own rows, a release folder, or a
release fetched from the Hub), the release's name and each family's content hash, so a score or
a run record can say exactly what it was measured against. Its `universe` (the release's
families, see `universe`) is what a submission to it may name and how its row ids count.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError, UsageError
from mathbode.core.hashing import combined_hash

from .content import TruthRows
from .manifest import read_manifest
from .release_hashes import RELEASE_CONTENT_HASHES, RELEASE_PROMPTS_HASH, release_content_hash
from .splits import prompts_hash, split_hash
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


def release_reference(
    folder: str | Path,
    families: list[str] | None,
    source: str | None = None,
    truth: TruthRows | None = None,
    boundary: Path | None = None,
) -> Reference:
    """`families` (None: all of its families, in its universe's order) read from a release folder that
    passes validation (files, manifest and, with `truth`, every row)."""
    from .dataset import check_release, open_table  # the release check: only a folder given needs it

    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"--reference {folder}: no such folder. Give a release folder such as dist/.")
    report, read = check_release(folder, truth, boundary)
    if not report.valid:
        raise ReferenceMismatchError(f"--reference {folder} is not a valid release:\n{report.format_text()}")
    manifest = read_manifest(folder)
    universe = Universe.of(manifest.families, manifest.name, manifest.drive_set, manifest.questions)
    if families is None:
        families = list(manifest.families)
    missing = [f for f in families if f not in manifest.families]
    if missing:
        raise ReferenceMismatchError(f"--reference {folder} has no rows for {', '.join(missing)}.")
    # The tables the check read, not read again (a file it could not read failed the check).
    table = pa.concat_tables(
        read[rel] if rel in read else open_table(folder / rel)
        for name in families
        for rel in manifest.family_files(name)
    )
    hashes = {name: manifest.families[name].content_hash for name in families}
    split = manifest.prompts_hash
    if not split and families == list(manifest.families):  # a release from before splits had names
        split = split_hash([prompts_hash(read_family(table, name)) for name in families])
    return Reference(
        table,
        source or str(folder),
        hashes,
        manifest.name,
        universe,
        manifest.content_hash,
        split,
        manifest.prompts_only,
        manifest.split,
        variants=manifest.variants,
    )


def read_family(table: pa.Table, family: str) -> pa.Table:
    import pyarrow.compute as pc

    return table.filter(pc.equal(table.column("family"), family))
