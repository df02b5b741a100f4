"""The canonical rows shipped inside the package, trusted only after their content hash is checked.

The committed release's parquet files (dist/data, about 140 KB) are package data
(`schema/canonical` is a link to dist/data), so scoring, running, listing prompts and the framework tasks read the
canonical rows instead of making them with the builder (sympy's import and exact arithmetic,
about 3 s). Each family's rows are hashed when loaded and compared with the known release hashes:
a damaged or edited file is refused with a message, never scored against.
"""

from __future__ import annotations

import hashlib
import io
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

import pyarrow as pa

from mathbode.core.errors import ReferenceMismatchError
from mathbode.core.hashing import content_hash

from .layout import layout
from .parquet import read_parquet
from .reference import BUILDER_SOURCE, Reference
from .release_hashes import RELEASE_CONTENT_HASHES, RELEASE_FILE_SHA256
from .universe import canonical_universe

#: The folder of package data that holds dist/data/*.parquet (a link in the source tree).
FOLDER = "canonical"


def packaged_file(family: str) -> Traversable:
    """Where the installed package keeps a family's canonical parquet file."""
    return files(__package__) / FOLDER / f"{family}.parquet"


def _damaged(family: str, found: str) -> ReferenceMismatchError:
    return ReferenceMismatchError(
        f"the canonical rows of {family!r} shipped with mathbode ({packaged_file(family)}) {found}. "
        "Reinstall mathbode (pip install --force-reinstall mathbode), or give --reference DIR."
    )


@cache
def packaged_rows(family: str) -> pa.Table:
    """A family's canonical rows from the package, checked against the release's content hash."""
    expected = RELEASE_CONTENT_HASHES.get(family)
    if expected is None:
        raise ReferenceMismatchError(canonical_universe().unknown_family_message(family))
    try:
        data = packaged_file(family).read_bytes()
        table = read_parquet(io.BytesIO(data))
    except (OSError, pa.ArrowException, ValueError) as err:
        raise _damaged(family, f"cannot be read ({err})") from None
    if table.schema != layout().arrow_schema:
        raise _damaged(family, "do not have the canonical columns")
    if hashlib.sha256(data).hexdigest() == RELEASE_FILE_SHA256.get(family):
        return table  # the committed file's bytes: its content hash is known
    found = content_hash(table)
    if found != expected:
        raise _damaged(family, f"have content {found}, not the release's {expected}")
    return table


def packaged_truth(family: str) -> pa.Table | None:
    """The packaged canonical rows as the truth a release folder is checked against: a canonical
    family's rows, None for any other (its content is not this package's to check)."""
    return packaged_rows(family) if family in RELEASE_CONTENT_HASHES else None


def packaged_reference(families: list[str]) -> Reference:
    """The canonical rows of `families`, from the package, as a reference."""
    table = pa.concat_tables(packaged_rows(family) for family in families)
    return Reference(table, BUILDER_SOURCE, {family: RELEASE_CONTENT_HASHES[family] for family in families})
