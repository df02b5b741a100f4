"""The release manifest (MANIFEST.json), typed: one reader and one writer for every room.

The builder writes it, the card is rendered from it, the publisher plans its commit from it and
the validator checks files against it. On disk it is checked against `manifest.schema.json`
before it is trusted (see `dataset.py`); here it is plain data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mathbode.core.digests import combined_hash, file_sha256

from .drives import MULTITONE, MultitoneDesign, design_of

MANIFEST, CARD = "MANIFEST.json", "README.md"
RELEASE_NAME = "MathBode"
#: File formats a release may hold its data in.
RELEASE_FORMATS = ("parquet", "jsonl")


@dataclass(frozen=True)
class FileEntry:
    """One file of the release, by its path relative to the release folder."""

    num_bytes: int
    sha256: str
    #: Data files only: rows in the file.
    num_rows: int | None = None
    #: Data files only: the rows' in-memory Arrow size (the card's `dataset_size`).
    arrow_bytes: int | None = None

    @classmethod
    def of(cls, path: Path, num_rows: int | None = None, arrow_bytes: int | None = None) -> "FileEntry":
        return cls(path.stat().st_size, file_sha256(path), num_rows, arrow_bytes)

    @property
    def is_data(self) -> bool:
        return self.num_rows is not None

    def to_json(self) -> dict[str, Any]:
        if not self.is_data:
            return {"num_bytes": self.num_bytes, "sha256": self.sha256}
        return {
            "num_rows": self.num_rows,
            "num_bytes": self.num_bytes,
            "arrow_bytes": self.arrow_bytes,
            "sha256": self.sha256,
        }


@dataclass(frozen=True)
class FamilyEntry:
    """One family's rows in the release."""

    version: str
    num_rows: int
    #: `content_hash` of the family's rows (independent of the file format).
    content_hash: str
    #: Its data files, relative paths.
    files: tuple[str, ...]
    #: The installed package that defines the family ("acme-families 1.2.0"); None: built into mathbode.
    origin: str | None = None
    #: `prompts_hash` of its rows: what a submission answered (the same with or without the truth).
    prompts_hash: str | None = None
    #: What bounds how exactly a gain and phase can be read on it: the truth's smallest swing and
    #: its own harmonic distortion (see the family check).
    truth: dict[str, float] | None = None
    #: A GAP variant's original family (its rows are paired with that family's, row key by row key).
    variant_of: str | None = None
    #: The variant's kind: DL, DLC, DLM, GS (a surface variant) or kernel.
    variant: str | None = None
    #: A surface variant's names: {"seed": the seed they were drawn from, "names": {text: name}}.
    surface: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version}
        if self.origin is not None:
            out["origin"] = self.origin
        if self.variant_of is not None:
            out["variant_of"] = self.variant_of
            out["variant"] = self.variant
        if self.surface is not None:
            out["surface"] = self.surface
        out.update(num_rows=self.num_rows, content_hash=self.content_hash)
        if self.prompts_hash is not None:
            out["prompts_hash"] = self.prompts_hash
        if self.truth is not None:
            out["truth"] = dict(self.truth)
        out["files"] = list(self.files)
        return out


@dataclass(frozen=True)
class Manifest:
    """What a build wrote: versions, counts, content hashes and every file's checksum."""

    builder_version: str
    #: `parquet` or `jsonl`.
    format: str
    families: dict[str, FamilyEntry]
    files: dict[str, FileEntry]
    #: The writer, since file bytes (not the content hash) depend on its version.
    parquet_writer: str | None = None
    name: str = RELEASE_NAME
    #: Filled in from `families` when not given.
    num_rows: int = -1
    content_hash: str = ""
    #: The split's identity: one hash over the families' prompts hashes (filled in when they all have one).
    prompts_hash: str = ""
    #: How the split was drawn: {"seed": label} for a fresh split, {"seed_sha256": commitment} for a
    #: private one; None for the canonical release.
    split: dict[str, str] | None = None
    #: A GUID that training-data filters can search for (also in the card's text).
    canary: str | None = None
    #: Prompts in common with the canonical release and with splits named at build time.
    overlap: dict[str, dict[str, Any]] | None = None
    #: The rows carry no `ground_truth` (a private split's public half).
    prompts_only: bool = False
    #: A multi-tone release's drives (`MultitonePlan.describe()`: lines, realizations, periods,
    #: phases); None for the standard grid (the canonical release's manifest does not change).
    drives: dict[str, Any] | None = None
    #: Problems a family holds when built with `mathbode-build --questions N` (question_ids 0..N-1);
    #: None: the layout's three (the canonical release's manifest does not change).
    questions: int | None = None
    #: A multi-tone release's design when not the layout's (`design_record`: realizations, periods,
    #: rms_level); None for the layout's (the manifest of a release built without options does not change).
    multitone_design: dict[str, Any] | None = None

    @property
    def drive_set(self) -> str:
        """`standard` or `multitone`: which grid the release's rows are on."""
        return "standard" if self.drives is None else str(self.drives.get("drives", "standard"))

    @property
    def design(self) -> MultitoneDesign | None:
        """A multi-tone release's design (realizations, periods, level) when not the layout's; None
        for the layout's, the standard grid, or a record that holds none (the description check says so)."""
        return design_of(self.multitone_design) if self.drive_set == MULTITONE else None

    def __post_init__(self) -> None:
        if self.num_rows < 0:
            object.__setattr__(self, "num_rows", sum(f.num_rows for f in self.families.values()))
        if not self.content_hash:
            object.__setattr__(self, "content_hash", combined_hash([f.content_hash for f in self.families.values()]))
        prompts = [f.prompts_hash for f in self.families.values()]
        if not self.prompts_hash and prompts and all(prompts):
            object.__setattr__(self, "prompts_hash", combined_hash([h for h in prompts if h]))

    @property
    def data_files(self) -> dict[str, FileEntry]:
        return {rel: entry for rel, entry in self.files.items() if entry.is_data}

    @property
    def variants(self) -> dict[str, tuple[str, str]]:
        """Each GAP variant family -> (its original, its kind), in the manifest's order."""
        return {
            name: (entry.variant_of, entry.variant or "")
            for name, entry in self.families.items()
            if entry.variant_of is not None
        }

    def family_files(self, family: str) -> tuple[str, ...]:
        return self.families[family].files

    def only(self, family: str) -> "Manifest":
        """The manifest of a one-family release made from this one (its card not yet listed)."""
        entry = self.families[family]
        return replace(
            self,
            families={family: entry},
            files={rel: self.files[rel] for rel in entry.files},
            num_rows=-1,
            content_hash="",
            prompts_hash="",
        )

    def with_file(self, rel: str, entry: FileEntry) -> "Manifest":
        return replace(self, files={**self.files, rel: entry})

    # -- JSON --------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "builder_version": self.builder_version, "format": self.format}
        if self.parquet_writer is not None:
            out["parquet_writer"] = self.parquet_writer
        out["num_rows"] = self.num_rows
        out["content_hash"] = self.content_hash
        if self.prompts_hash:
            out["prompts_hash"] = self.prompts_hash
        if self.prompts_only:
            out["prompts_only"] = True
        if self.split is not None:
            out["split"] = dict(self.split)
        if self.canary is not None:
            out["canary"] = self.canary
        if self.overlap is not None:
            out["overlap"] = self.overlap
        if self.drives is not None:
            out["drives"] = self.drives
        if self.multitone_design is not None:
            out["multitone_design"] = self.multitone_design
        if self.questions is not None:
            out["questions"] = self.questions
        out["families"] = {name: entry.to_json() for name, entry in self.families.items()}
        out["files"] = {rel: entry.to_json() for rel, entry in self.files.items()}
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> "Manifest":
        """A manifest document that passed `manifest.schema.json`."""
        return cls(
            name=raw["name"],
            builder_version=raw["builder_version"],
            format=raw["format"],
            parquet_writer=raw.get("parquet_writer"),
            num_rows=raw["num_rows"],
            content_hash=raw["content_hash"],
            prompts_hash=raw.get("prompts_hash", ""),
            split=raw.get("split"),
            canary=raw.get("canary"),
            overlap=raw.get("overlap"),
            prompts_only=bool(raw.get("prompts_only", False)),
            drives=raw.get("drives"),
            questions=raw.get("questions"),
            multitone_design=raw.get("multitone_design"),
            families={
                name: FamilyEntry(
                    f["version"],
                    f["num_rows"],
                    f["content_hash"],
                    tuple(f["files"]),
                    f.get("origin"),
                    f.get("prompts_hash"),
                    f.get("truth"),
                    variant_of=f.get("variant_of"),
                    variant=f.get("variant"),
                    surface=f.get("surface"),
                )
                for name, f in raw["families"].items()
            },
            files={
                rel: FileEntry(f["num_bytes"], f["sha256"], f.get("num_rows"), f.get("arrow_bytes"))
                for rel, f in raw["files"].items()
            },
        )

    def dumps(self) -> str:
        # Strict JSON (no NaN or Infinity): what JSON.parse, jq and every strict reader accept.
        return json.dumps(self.to_json(), indent=2, allow_nan=False) + "\n"


def write_release_metadata(folder: Path, manifest: Manifest, card: str) -> Manifest:
    """Write the card, record its checksum, write MANIFEST.json: the last step of every release folder."""
    (folder / CARD).write_text(card, encoding="utf-8", newline="\n")
    final = manifest.with_file(CARD, FileEntry.of(folder / CARD))
    (folder / MANIFEST).write_text(final.dumps(), encoding="utf-8", newline="\n")
    return final


def read_manifest(folder: Path) -> Manifest:
    """The manifest of a release folder that has passed `validate_dataset`."""
    return Manifest.from_json(json.loads((folder / MANIFEST).read_text("utf-8")))
