"""Shared fixtures: one fresh build per test session (about a second), and the committed dist/."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mathbode.builder import FAMILIES
from mathbode.builder.release import build_release

REPO = Path(__file__).resolve().parent.parent
COMMITTED_DIST = REPO / "dist"


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
