"""Hostile split manifests and seeds (issue 40, section 5): every identity a split's manifest
records is recomputed and compared, the card never hands a reader a shell command or markup from
a seed, and `--against` refuses what is not a release before anything is built."""

from __future__ import annotations

import html
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mathbode.builder.families import resolve_families
from mathbode.builder.release import build_release
from mathbode.builder.splits import SplitPlan
from mathbode.cli.reference import builder_truth
from mathbode.core.errors import UsageError
from mathbode.schema.dataset import validate_dataset
from mathbode.schema.splits import canary

#: A private seed of 128 bits (a fixed one: the test must be deterministic).
PRIVATE_SEED = "3f9a1c7e5b2d4086a1e9c3b7d5f20864"
#: A seed that is a shell command and HTML, to whoever pastes or renders it carelessly.
HOSTILE_SEED = "x$(touch pwned)`id`<b>hi</b>'\"; rm -rf ~"


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile-splits")
    family = resolve_families("linear_solve")
    out = {"public": root / "public", "private": root / "private", "half": root / "half"}
    build_release(family, out["public"], split=SplitPlan(HOSTILE_SEED))
    build_release(family, out["private"], split=SplitPlan(PRIVATE_SEED, private=True))
    build_release(family, out["half"], split=SplitPlan(PRIVATE_SEED, private=True, prompts_only=True))
    return out


def _tampered(source: Path, tmp_path: Path, edit) -> Path:
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    edit(manifest)
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    return folder


def _split_errors(folder: Path) -> list[str]:
    """The errors about what the manifest records: recomputed from the rows (`split`) or rebuilt
    from what the builder was asked (`description`: the canary is the seed's commitment's)."""
    report = validate_dataset(folder, builder_truth)
    return [f"{p.field}: {p.expected} / {p.found}" for p in report.errors if p.code in ("split", "description")]


def _set(path: str, value):
    def edit(manifest: dict) -> None:
        *parents, last = path.split(".")
        node = manifest
        for key in parents:
            node = node[key]
        node[last] = value

    return edit


OTHER_HASH = "sha256:" + "0" * 64
EDITS = {
    "canary": ("canary", _set("canary", "00000000-0000-5000-8000-000000000000")),
    "prompts hash": ("prompts_hash", _set("prompts_hash", OTHER_HASH)),
    "family prompts hash": (
        "families.linear_solve.prompts_hash",
        _set("families.linear_solve.prompts_hash", OTHER_HASH),
    ),
    "overlap in common": ("overlap.MathBode.prompts_in_common", _set("overlap.MathBode.prompts_in_common", 7)),
    "overlap of": ("overlap.MathBode.of", _set("overlap.MathBode.of", 1)),
    "overlap gone": ("overlap", _set("overlap", {})),
    "truth swing": (
        "families.linear_solve.truth.smallest_swing",
        _set("families.linear_solve.truth.smallest_swing", 1.0),
    ),
    "truth distortion": (
        "families.linear_solve.truth.harmonic_distortion",
        _set("families.linear_solve.truth.harmonic_distortion", 0.0),
    ),
}


def test_the_untouched_splits_are_valid_with_no_identity_error(releases):
    for folder in releases.values():
        assert validate_dataset(folder, builder_truth).valid, folder.name
        assert _split_errors(folder) == []


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
@pytest.mark.parametrize("kind", ["public", "private"])
def test_an_edited_identity_of_a_split_makes_it_invalid_naming_the_field(releases, tmp_path, kind, edit):
    field, change = EDITS[edit]
    folder = _tampered(releases[kind], tmp_path, change)
    errors = _split_errors(folder)
    assert [e for e in errors if e.startswith(field + ":")], errors
    assert not validate_dataset(folder, builder_truth).valid


def test_a_private_commitment_edited_no_longer_matches_its_canary(releases, tmp_path):
    folder = _tampered(releases["private"], tmp_path, _set("split.seed_sha256", OTHER_HASH))
    report = validate_dataset(folder, builder_truth)
    said = json.loads((releases["private"] / "MANIFEST.json").read_text())["canary"]
    assert [(p.code, p.field, p.found) for p in report.errors] == [
        ("description", "canary", f'canary: "{said}", the builder\'s "{canary(OTHER_HASH)}"')
    ]


def test_a_prompts_only_half_is_checked_on_its_prompts_without_its_truth(releases, tmp_path):
    folder = _tampered(releases["half"], tmp_path, _set("families.linear_solve.prompts_hash", OTHER_HASH))
    assert [e for e in _split_errors(folder) if e.startswith("families.linear_solve.prompts_hash:")]
    # Its truth facts are the full split's: not refutable from prompts alone, so not refused.
    folder2 = _tampered(releases["half"], tmp_path / "2", _set("families.linear_solve.truth.smallest_swing", 1.0))
    assert _split_errors(folder2) == []


def test_the_canonical_canary_edited_is_refused(tmp_path):
    dist = Path(__file__).resolve().parents[1] / "dist"
    folder = tmp_path / "dist"
    shutil.copytree(dist, folder)
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest["canary"] = "00000000-0000-5000-8000-000000000000"
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    assert [e for e in _split_errors(folder) if e.startswith("canary:")]


def test_the_card_quotes_the_seed_for_a_shell_and_escapes_its_markup(releases, tmp_path):
    card = (releases["public"] / "README.md").read_text()
    assert "<b>" not in card
    line = next(x for x in card.splitlines() if "rebuilds it byte for byte" in x)
    command = line.split("(<code>", 1)[1].split("</code>", 1)[0]
    shown = html.unescape(command)
    assert shown == f"mathbode-build --families linear_solve --seed {shlex.quote(HOSTILE_SEED)}"
    # Pasted into a shell, the command's words are the seed as it is: nothing runs.
    words = shlex.split(shown)
    assert words[words.index("--seed") + 1] == HOSTILE_SEED
    seed_shown = line.split("from the seed <code>", 1)[1].split("</code>", 1)[0]
    assert "<" not in seed_shown and html.unescape(seed_shown) == HOSTILE_SEED
    assert "<b>hi</b>" not in card


def test_the_card_rebuild_command_rebuilds_the_same_bytes(releases, tmp_path):
    card = (releases["public"] / "README.md").read_text()
    line = next(x for x in card.splitlines() if "rebuilds it byte for byte" in x)
    words = shlex.split(html.unescape(line.split("(<code>", 1)[1].split("</code>", 1)[0]))
    assert words[0] == "mathbode-build"
    out = tmp_path / "again"
    done = subprocess.run(
        [sys.executable, "-m", "mathbode", "build", *words[1:], "--out", str(out), "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "pwned").exists()
    same = json.loads((releases["public"] / "MANIFEST.json").read_text())["prompts_hash"]
    assert json.loads((out / "MANIFEST.json").read_text())["prompts_hash"] == same


def _against(tmp_path: Path, other: Path) -> str:
    with pytest.raises(UsageError) as caught:
        build_release(resolve_families("linear_solve"), tmp_path / "out", split=SplitPlan("s1", against=(other,)))
    assert not (tmp_path / "out").exists()  # refused before anything was built
    return str(caught.value)


def test_against_a_deep_manifest_is_refused(tmp_path):
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "MANIFEST.json").write_text("[" * 100_000 + "]" * 100_000)
    message = _against(tmp_path, tmp_path / "deep")
    assert message.startswith(f"--against {tmp_path / 'deep'}: not a release that can be read")
    assert "nested too deep" in message


def test_against_a_fifo_manifest_is_refused_without_hanging(tmp_path):
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "MANIFEST.json")
    assert "a pipe, device or folder, not a regular file" in _against(tmp_path, tmp_path / "fifo")


def test_against_dev_zero_is_refused_without_reading_it(tmp_path):
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "MANIFEST.json").symlink_to("/dev/zero")
    assert "not a regular file" in _against(tmp_path, tmp_path / "zero")
    assert "not a folder" in _against(tmp_path, Path("/dev/zero"))


def test_against_a_parquet_file_is_refused(releases, tmp_path):
    data = releases["public"] / "data" / "linear_solve.parquet"
    message = _against(tmp_path, data)
    assert message == (
        f"--against {data}: not a folder. Give a release folder (one that holds MANIFEST.json), not a data file."
    )


def test_against_a_manifest_over_the_size_bound_is_refused(tmp_path):
    (tmp_path / "big").mkdir()
    with open(tmp_path / "big" / "MANIFEST.json", "wb") as f:
        f.truncate(17 * 2**20)
    assert "at most 16,777,216 bytes" in _against(tmp_path, tmp_path / "big")
