"""Shared fixtures: one fresh build per test session (about a second), and the committed dist/."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mathbode.builder import FAMILIES
from mathbode.builder.release import build_release

REPO = Path(__file__).resolve().parent.parent
COMMITTED_DIST = REPO / "dist"


@pytest.fixture(autouse=True, scope="session")
def _private_reference_cache(tmp_path_factory):
    """The builder's row cache in a folder of the test session's own, never the user's."""
    import os

    folder = tmp_path_factory.mktemp("mathbode-cache")
    old = os.environ.get("MATHBODE_CACHE")
    os.environ["MATHBODE_CACHE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("MATHBODE_CACHE", None)
    else:
        os.environ["MATHBODE_CACHE"] = old


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """A fresh `--families all` release, built once for the session."""
    out = tmp_path_factory.mktemp("build") / "dist"
    build_release(list(FAMILIES.values()), out)
    return out


@pytest.fixture(scope="session")
def tables(built):
    """family name -> its Arrow table, read back from the fresh release."""
    return {name: pq.read_table(built / "data" / f"{name}.parquet") for name in FAMILIES}
