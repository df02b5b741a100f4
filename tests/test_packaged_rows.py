"""The canonical rows shipped inside the package: the builder's rows, checked at load, no sympy."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathbode.core.errors import ReferenceMismatchError
from mathbode.hub.reference import resolve_reference
from mathbode.schema import packaged
from mathbode.schema.layout import layout
from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES


@pytest.mark.parametrize("family", list(layout().families))
def test_the_package_ships_the_builders_rows(family, reference):
    ours = reference.table.filter(pa.compute.equal(reference.table.column("family"), family))
    assert packaged.packaged_rows(family).equals(ours)


def test_the_default_reference_is_the_packaged_rows_with_the_release_hashes(reference):
    families = list(layout().families)
    resolved = resolve_reference(families)
    assert resolved.table.equals(reference.table)
    assert resolved.provenance() == reference.provenance()


def test_scoring_against_the_default_reference_never_imports_the_builder_or_sympy():
    code = (
        "import sys\n"
        "from mathbode.hub.reference import resolve_reference\n"
        "ref = resolve_reference(['linear_solve', 'similar_triangles'])\n"
        "print(ref.table.num_rows, 'sympy' in sys.modules, 'mathbode.builder' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["18816", "False", "False"]


@pytest.mark.parametrize("damage", ["edited", "not parquet", "missing"])
def test_a_damaged_packaged_file_is_refused_with_what_to_do(damage, tmp_path, monkeypatch):
    family = "linear_system"
    table = packaged.packaged_rows(family)
    path = tmp_path / f"{family}.parquet"
    if damage == "edited":
        truth = table.column("ground_truth").to_pylist()
        truth[7] += 1.0
        i = table.schema.get_field_index("ground_truth")
        pq.write_table(table.set_column(i, table.schema.field(i), pa.array(truth)), path)
    elif damage == "not parquet":
        path.write_bytes(b"not parquet")
    monkeypatch.setattr(packaged, "packaged_file", lambda name: path)
    packaged.packaged_rows.cache_clear()
    try:
        with pytest.raises(ReferenceMismatchError) as err:
            resolve_reference([family])
    finally:
        packaged.packaged_rows.cache_clear()
    message = str(err.value)
    assert f"the canonical rows of {family!r} shipped with mathbode ({path})" in message
    assert "Reinstall mathbode (pip install --force-reinstall mathbode), or give --reference DIR." in message
    if damage == "edited":
        assert f"not the release's {RELEASE_CONTENT_HASHES[family]}" in message
    else:
        assert "cannot be read" in message


def test_the_known_file_hashes_are_the_committed_files_and_other_bytes_of_the_same_rows_pass(tmp_path, monkeypatch):
    import hashlib

    from mathbode.schema.release_hashes import RELEASE_FILE_SHA256

    from .conftest import COMMITTED_DIST

    for family, digest in RELEASE_FILE_SHA256.items():
        assert hashlib.sha256((COMMITTED_DIST / "data" / f"{family}.parquet").read_bytes()).hexdigest() == digest
    # The same rows written otherwise (no compression: other bytes) are checked by content and pass.
    family = "linear_solve"
    path = tmp_path / f"{family}.parquet"
    pq.write_table(packaged.packaged_rows(family), path, compression="none")
    assert hashlib.sha256(path.read_bytes()).hexdigest() != RELEASE_FILE_SHA256[family]
    monkeypatch.setattr(packaged, "packaged_file", lambda name: path)
    packaged.packaged_rows.cache_clear()
    try:
        assert resolve_reference([family]).family_hashes[family] == RELEASE_CONTENT_HASHES[family]
    finally:
        packaged.packaged_rows.cache_clear()


def test_a_release_folder_given_as_reference_is_read_once(monkeypatch):
    """--reference DIR: the release check reads each data file, and the scorer uses those tables."""
    from mathbode.schema import dataset

    from .conftest import COMMITTED_DIST

    real, reads = dataset.read_parquet, []
    monkeypatch.setattr(dataset, "read_parquet", lambda path: reads.append(path) or real(path))
    resolved = resolve_reference(list(layout().families), str(COMMITTED_DIST))
    assert sorted(p.name for p in reads) == sorted(f"{f}.parquet" for f in layout().families)
    assert resolved.table.num_rows == 47_040
