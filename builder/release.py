"""Write a release folder (data files, MANIFEST.json, README.md card) atomically.

Everything is written into a temporary sibling folder first and moved into place at the end,
so an interrupted build leaves either the old release or the new one, never a mix.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from mathbode.schema.atomic import atomic_folder, check_replaceable
from mathbode.schema.dataset import CARD, MANIFEST
from mathbode.schema.errors import UsageError
from mathbode.schema.hashing import combined_hash, content_hash, file_sha256

from .families import Family
from .rows import family_table
from .version import __version__

FORMATS = ("parquet", "jsonl")


def data_path(family: str, fmt: str) -> str:
    """Where a family's rows live inside a release (relative, POSIX)."""
    return f"data/{family}.{fmt}"


@dataclass(frozen=True)
class BuildResult:
    out: Path
    manifest: dict
    #: Seconds spent generating each family's rows (not writing them).
    generation_seconds: dict[str, float]


def _write_table(table: pa.Table, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        # Fixed options so the bytes only depend on the rows and the pyarrow version.
        pq.write_table(table, path, compression="zstd", row_group_size=table.num_rows or None)
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for row in table.to_pylist():
                f.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")


def build_release(
    families: list[Family],
    out: Path | str = "dist",
    fmt: str = "parquet",
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Generate `families` and write the release to `out`, replacing an older release there."""
    from mathbode.cards import render_card

    if fmt not in FORMATS:
        raise UsageError(f"Unknown format {fmt!r}. Available: {', '.join(FORMATS)}.")
    out = Path(out)
    check_replaceable(out, MANIFEST, "a MathBode release")
    say = progress or (lambda _msg: None)
    with atomic_folder(out) as tmp:
        (tmp / "data").mkdir()
        timings: dict[str, float] = {}
        fam_entries: dict[str, dict] = {}
        files: dict[str, dict] = {}
        for family in families:
            start = time.perf_counter()
            table = family_table(family)
            timings[family.name] = time.perf_counter() - start
            rel = data_path(family.name, fmt)
            _write_table(table, tmp / rel, fmt)
            digest = content_hash(table)
            fam_entries[family.name] = {
                "version": family.version,
                "num_rows": table.num_rows,
                "content_hash": digest,
                "files": [rel],
            }
            files[rel] = {
                "num_rows": table.num_rows,
                "num_bytes": (tmp / rel).stat().st_size,
                "arrow_bytes": table.nbytes,
                "sha256": file_sha256(tmp / rel),
            }
            say(f"{family.name}: {table.num_rows:,} rows in {timings[family.name]:.2f} s -> {rel}")
        manifest = {
            "name": "MathBode",
            "builder_version": __version__,
            "format": fmt,
            # File bytes (not the content hash) depend on the writer's version.
            "parquet_writer": f"pyarrow {pa.__version__}",
            "num_rows": sum(f["num_rows"] for f in fam_entries.values()),
            "content_hash": combined_hash([f["content_hash"] for f in fam_entries.values()]),
            "families": fam_entries,
            "files": files,
        }
        card = render_card(manifest)
        (tmp / CARD).write_text(card, encoding="utf-8", newline="\n")
        manifest["files"][CARD] = {"num_bytes": (tmp / CARD).stat().st_size, "sha256": file_sha256(tmp / CARD)}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8", newline="\n")
    return BuildResult(out=out, manifest=manifest, generation_seconds=timings)


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
