"""Tell a dataset from a submission and validate either: the entry point the CLI, scorer and publisher share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mathbode.core.errors import UsageError

from .manifest import MANIFEST
from .report import Report
from .row_id_predictions import PARQUET_MAGIC, has_row_id
from .submission import validate_submission

if TYPE_CHECKING:
    from .content import TruthRows

SUBMISSION_SUFFIXES = (".jsonl", ".ndjson", ".json")
#: A release's data files (the dataset validator's DATA_SUFFIXES, which is loaded only for a release).
DATA_SUFFIXES = (".parquet", ".jsonl")


def detect_kind(path: Path) -> str:
    """`dataset` for a folder or a parquet data file; `submission` for JSON Lines or a row_id parquet."""
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder.")
    if path.is_dir():
        return "dataset"
    if path.suffix == ".parquet":
        return "submission" if has_row_id(str(path)) else "dataset"
    if path.suffix in SUBMISSION_SUFFIXES:
        # JSON Lines is a submission, except a data file inside a --format jsonl release.
        in_release = path.parent.name == "data" and (path.parent.parent / MANIFEST).is_file()
        return "dataset" if in_release and path.suffix in DATA_SUFFIXES else "submission"
    with open(path, "rb") as f:
        parquet = f.read(4) == PARQUET_MAGIC
    return "dataset" if parquet and not has_row_id(str(path)) else "submission"


def validate_path(path: str | Path, truth: "TruthRows | None" = None) -> Report:
    """Validate a local release folder, data file or submission, whichever `path` is (`truth`: see validate_dataset)."""
    path = Path(path)
    if detect_kind(path) == "dataset":
        from .dataset import validate_dataset

        return validate_dataset(path, truth)
    return validate_submission(path)
