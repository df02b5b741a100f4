"""The release folder: determinism, the committed dist/, the manifest, atomic writes, CLI errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder import FAMILIES, get_family, resolve_families
from mathbode.builder import release as release_mod
from mathbode.builder.families.extended import FAMILIES as EXTENDED_FAMILIES
from mathbode.builder.release import build_release, family_facts
from mathbode.cards import render_card
from mathbode.cli.build import main as build_cli
from mathbode.core.hashing import file_sha256
from mathbode.schema import UnknownNameError, content_hash
from mathbode.schema.manifest import read_manifest

from .conftest import COMMITTED_DIST


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "MANIFEST.json").read_text())


def test_two_builds_have_the_same_content_hash(built, tmp_path):
    again = build_release(list(FAMILIES.values()), tmp_path / "again")
    assert again.manifest.content_hash == _manifest(built)["content_hash"]
    for name in FAMILIES:
        assert (tmp_path / "again/data" / f"{name}.parquet").read_bytes() == (
            built / "data" / f"{name}.parquet"
        ).read_bytes()
    assert (tmp_path / "again/README.md").read_text() == (built / "README.md").read_text()


def test_committed_dist_matches_a_fresh_build(built):
    committed, fresh = _manifest(COMMITTED_DIST), _manifest(built)
    assert committed["content_hash"] == fresh["content_hash"]
    assert {n: f["content_hash"] for n, f in committed["families"].items()} == {
        n: f["content_hash"] for n, f in fresh["families"].items()
    }
    assert committed["builder_version"] == fresh["builder_version"]
    if committed["parquet_writer"] == fresh["parquet_writer"]:
        # Same writer: byte for byte, card included.
        assert committed == fresh
        assert (COMMITTED_DIST / "README.md").read_text() == (built / "README.md").read_text()
    else:
        pytest.skip(f"bytes differ by writer: committed {committed['parquet_writer']}, here {fresh['parquet_writer']}")


def test_committed_card_is_the_card_of_the_committed_manifest():
    manifest = read_manifest(COMMITTED_DIST)
    facts = [family_facts(get_family(name)) for name in manifest.families]
    assert (COMMITTED_DIST / "README.md").read_text() == render_card(manifest, facts)


def test_content_hash_does_not_depend_on_the_file_format(built, tmp_path):
    result = build_release([get_family("ratio_saturation")], tmp_path / "j", fmt="jsonl")
    parquet_manifest = _manifest(built)
    assert (
        result.manifest.families["ratio_saturation"].content_hash
        == parquet_manifest["families"]["ratio_saturation"]["content_hash"]
    )
    lines = (tmp_path / "j/data/ratio_saturation.jsonl").read_text().splitlines()
    assert len(lines) == 9_408
    assert list(json.loads(lines[-1])) == list(pa.schema(pq.read_schema(built / "data/ratio_saturation.parquet")).names)


def test_manifest_records_versions_counts_and_file_hashes(built):
    m = _manifest(built)
    assert m["num_rows"] == 47_040 and m["format"] == "parquet"
    assert list(m["families"]) == list(FAMILIES)
    for name, fam in m["families"].items():
        assert fam["version"] == FAMILIES[name].version
        assert fam["num_rows"] == 9_408
        assert fam["files"] == [f"data/{name}.parquet"]
        table = pq.read_table(built / fam["files"][0])
        assert content_hash(table) == fam["content_hash"]
    for rel, info in m["files"].items():
        assert file_sha256(built / rel) == info["sha256"]
        assert (built / rel).stat().st_size == info["num_bytes"]
    assert set(os.listdir(built)) == {"MANIFEST.json", "README.md", "data", ".mathbode-written.json"}


def test_partial_build_writes_only_the_named_families(tmp_path):
    result = build_release(resolve_families("similar_triangles,linear_solve"), tmp_path / "d")
    assert list(result.manifest.families) == ["linear_solve", "similar_triangles"]
    assert sorted(os.listdir(tmp_path / "d/data")) == ["linear_solve.parquet", "similar_triangles.parquet"]


def test_building_fewer_families_over_a_release_is_refused_unless_replacing(tmp_path):
    out = tmp_path / "d"
    build_release(resolve_families("linear_solve,linear_system"), out)
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: --out {out} holds a release of linear_solve, linear_system; building only linear_solve "
        "would delete linear_system. Add them to --families, choose another --out, or pass --replace to "
        "replace the release.\n"
    )
    assert sorted(os.listdir(out / "data")) == ["linear_solve.parquet", "linear_system.parquet"]
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out), "--replace", "-q"])
    assert result.exit_code == 0, result.output
    assert os.listdir(out / "data") == ["linear_solve.parquet"]


def test_interrupted_build_leaves_the_old_release(tmp_path, monkeypatch):
    out = tmp_path / "dist"
    build_release([get_family("linear_solve")], out)
    before = _manifest(out)
    calls = {"n": 0}
    real = release_mod._write_table

    def crash_on_second(table, path, fmt):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        real(table, path, fmt)

    monkeypatch.setattr(release_mod, "_write_table", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        build_release(list(FAMILIES.values()), out)
    assert _manifest(out) == before
    assert os.listdir(tmp_path) == ["dist"], "no temporary folder may be left behind"


def test_unknown_family_says_what_is_available():
    with pytest.raises(UnknownNameError) as err:
        get_family("linear_solv")
    # Every built-in family is available: the canonical five, then MathBode-Extended's.
    assert str(err.value) == (
        "Unknown family 'linear_solv'. Did you mean 'linear_solve' or 'linear_system'? Available: "
        "linear_solve, ratio_saturation, exponential_interest, linear_system, similar_triangles, "
        + ", ".join(family.name for family in EXTENDED_FAMILIES)
        + "."
    )


def test_cli_unknown_family_exits_2_with_the_message(tmp_path):
    result = CliRunner().invoke(build_cli, ["--families", "ratio", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "Invalid value for --families: Unknown family 'ratio'." in result.output
    assert "Available: linear_solve," in result.output
    assert not (tmp_path / "d").exists()


def test_cli_bad_format_exits_2(tmp_path):
    result = CliRunner().invoke(build_cli, ["--format", "csv", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "Invalid value for '--format': 'csv' is not one of 'parquet', 'jsonl'." in result.output


def test_cli_refuses_to_replace_a_folder_that_is_not_a_release(tmp_path):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(target)])
    assert result.exit_code == 2
    assert (
        f"Error: --out {target}: the folder is not empty and mathbode did not write it (no readable "
        ".mathbode-written.json listing its files)" in result.output
    )
    assert (target / "notes.txt").read_text() == "keep me"


@pytest.mark.skipif(
    not Path("/sys/kernel").is_dir(), reason="needs Linux sysfs: a folder nobody may write in, root included"
)
def test_cli_unwritable_parent_exits_2():
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", "/sys/mathbode-dist"])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --out /sys/mathbode-dist: cannot write in /sys (")
    assert result.output.endswith("Choose another --out.\n")


def test_cli_missing_parent_exits_2(tmp_path):
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(tmp_path / "no/such/d")])
    assert result.exit_code == 2
    assert f"the parent folder {tmp_path / 'no/such'} does not exist" in result.output


def test_installed_command_builds_and_reports(tmp_path):
    exe = Path(sys.executable).with_name("mathbode-build")
    proc = subprocess.run(
        [str(exe), "--families", "linear_system", "--out", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Wrote 9,408 rows of 1 families to")
    assert "linear_system: 9,408 rows in" in proc.stderr


def test_the_builder_knows_the_hashes_of_the_committed_release(built):
    from mathbode.schema.release_hashes import RELEASE_CONTENT_HASHES

    committed = {n: f["content_hash"] for n, f in _manifest(COMMITTED_DIST)["families"].items()}
    assert committed == RELEASE_CONTENT_HASHES
    assert {n: f["content_hash"] for n, f in _manifest(built)["families"].items()} == RELEASE_CONTENT_HASHES
