"""Hostile files get a located message, fast, never a traceback (issue #21, items 8-10)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathbode.builder import resolve_families
from mathbode.builder.release import build_release
from mathbode.schema import validate_dataset, validate_submission

KEY = (
    '"family": "linear_solve", "question_id": 0, "signal_type": "sinusoid", "amplitude_scale": 0.5, '
    '"frequency_cycles": 4, "phase_deg": 0, "time_step": 0'
)


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mathbode", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return build_release(resolve_families("linear_solve"), tmp_path_factory.mktemp("rel") / "r").out


def _copy(release: Path, tmp_path: Path) -> Path:
    out = tmp_path / "r"
    shutil.copytree(release, out)
    return out


def _card_errors(folder: Path) -> list[str]:
    return [f"{p.field}: {p.found}" for p in validate_dataset(folder).errors if p.code in ("card", "path")]


def test_a_yaml_alias_bomb_in_the_card_is_refused_at_once(release, tmp_path):
    """108 KB of nested aliases kept validate and push busy past 90 s."""
    out = _copy(release, tmp_path)
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    bomb += "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
    card = (out / "README.md").read_text().replace("---\n", "---\n" + bomb + "configs_x: *j\n", 1)
    (out / "README.md").write_text(card)
    start = time.monotonic()
    assert any("uses YAML aliases" in e for e in _card_errors(out))
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("- config_name: linear_solve", "- config_name: [a, b]", "config_name: ['a', 'b']"),
        (
            "  data_files:\n  - split: train\n    path:\n    - data/linear_solve.parquet\n  default",
            "  data_files: 5\n  default",
            "data_files: 5",
        ),  # noqa: E501
        ("    path:\n    - data/linear_solve.parquet\n  default", "    path: true\n  default", "True"),
    ],
)
def test_card_configs_of_the_wrong_shape_are_named(release, tmp_path, old, new, said):
    out = _copy(release, tmp_path)
    card = (out / "README.md").read_text()
    assert old in card
    (out / "README.md").write_text(card.replace(old, new, 1))
    assert any(said in e for e in _card_errors(out)), _card_errors(out)


def test_a_manifest_of_100000_brackets_is_a_message(release, tmp_path):
    out = _copy(release, tmp_path)
    (out / "MANIFEST.json").write_text("[" * 100_000)
    problems = validate_dataset(out).errors
    assert any(p.code == "manifest" and "nested too deep" in p.found for p in problems)


def test_a_gzip_of_newlines_ends_fast(tmp_path):
    """1.2 MB of gzip holding a billion newlines kept validate and score busy past 60 s."""
    path = tmp_path / "nl.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as stream:
        for _ in range(1200):
            stream.write(b"\n" * (1 << 20))
    start = time.monotonic()
    done = _cli("validate", str(path))
    assert done.returncode == 1 and "empty file" in done.stdout
    assert time.monotonic() - start < 20


def test_a_file_far_longer_than_the_split_stops_with_a_message(tmp_path):
    path = tmp_path / "braces.jsonl"
    path.write_text("{}\n" * 1_600_000)
    start = time.monotonic()
    report = validate_submission(path)
    assert time.monotonic() - start < 20
    first = next(p for p in report.errors if p.code == "too-long")
    assert first.where == "line 94,081" and "at most 94,080 lines" in first.expected


@pytest.mark.parametrize("depth", [330, 600, 900])
def test_a_deep_line_with_an_escape_gets_its_message(tmp_path, depth):
    """A \\u escape inside a line nested 330-900 deep raised RecursionError (lone-surrogate check)."""
    path = tmp_path / "deep.jsonl"
    path.write_text("{" + KEY + ', "prediction": 1, "meta": ' + "[" * depth + '"\\u00e9"' + "]" * depth + "}\n")
    done = _cli("validate", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "line 1" in done.stdout


def _parquet(path: Path, columns: dict, names: list[str] | None = None) -> Path:
    arrays = list(columns.values())
    table = pa.Table.from_arrays(arrays, names=names or list(columns))
    pq.write_table(table, path, compression="zstd")
    return path


@pytest.mark.parametrize(
    ("name", "make", "said"),
    [
        ("no_row_id", lambda p: _parquet(p, {"y_hat": pa.array([1.0])}), None),
        (
            "zero_rows",
            lambda p: _parquet(p, {"row_id": pa.array([], pa.int64()), "y_hat": pa.array([], pa.float64())}),
            "a parquet with no rows",
        ),  # noqa: E501
        (
            "row_id_twice",
            lambda p: _parquet(
                p, {"a": pa.array([0]), "b": pa.array([1.0]), "c": pa.array([0])}, ["row_id", "y_hat", "row_id"]
            ),
            "a column name twice",
        ),  # noqa: E501
        (
            "y_hat_twice",
            lambda p: _parquet(
                p, {"a": pa.array([0]), "b": pa.array([1.0]), "c": pa.array([1.0])}, ["row_id", "y_hat", "y_hat"]
            ),
            "a column name twice",
        ),  # noqa: E501
    ],
)
def test_odd_row_id_parquets_are_refused_with_a_message(tmp_path, name, make, said):
    path = make(tmp_path / f"{name}.parquet")
    for command in (["validate", str(path)], ["score", str(path), "--out", str(tmp_path / "r"), "--no-plots"]):
        done = _cli(*command)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and "INVALID" in done.stdout + done.stderr
        if said:
            assert said in done.stdout + done.stderr


def test_a_parquet_that_decodes_to_millions_of_rows_is_refused_from_its_metadata(tmp_path):
    """A 1.8 MB zstd parquet of 2-4 x 10^8 rows took validate past 3 GB."""
    ids = pa.array(np.zeros(20_000_000, dtype=np.int64))
    path = _parquet(tmp_path / "big.parquet", {"row_id": ids, "y_hat": pa.array(np.zeros(20_000_000))})
    assert path.stat().st_size < 1_000_000
    done = subprocess.run(
        # VmHWM, the process's own peak (ru_maxrss carries a forking parent's peak across exec).
        [sys.executable, "-c", f"from mathbode.schema import validate_submission\n"
         f"r = validate_submission({str(path)!r})\n"
         "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
         "print(r.errors[0].found, int(hwm.split()[1]) // 1024)"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found, peak_mb = done.stdout.rsplit(" ", 1)
    assert "20,000,000 rows, more than any MathBode file holds" in found
    assert int(peak_mb) < 400
    release_file = tmp_path / "rel" / "data"
    release_file.mkdir(parents=True)
    shutil.copy(path, release_file / "linear_solve.parquet")
    assert any("20,000,000 rows" in p.found for p in validate_dataset(tmp_path / "rel").errors)


def test_the_hooks_hostile_inputs_get_no_traceback(tmp_path):
    for name, text in {
        "bigint.jsonl": "{" + KEY + ', "prediction": ' + "7" * 6000 + "}\n",
        "inf.jsonl": "{" + KEY + ', "prediction": 1e999}\n',
        "bom.jsonl": "\ufeff{" + KEY + ', "prediction": 1}\n',
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        done = _cli("validate", str(tmp_path / name))
        assert "Traceback" not in done.stderr, (name, done.stderr)


# -- Environment faults (issue #21, item 11): a message and exit 1, nothing lost ------------------


def test_ctrl_c_during_a_build_prints_no_traceback(tmp_path):
    """The card helper printed its own KeyboardInterrupt traceback.

    Each delay counts from the moment the interpreter is up (it says "ready"), so that a loaded
    machine's slow start cannot put the Ctrl-C inside Python's own start-up, which is not ours."""
    import os
    import signal

    start = (
        "import runpy, sys; print('ready', file=sys.stderr, flush=True); "
        "sys.argv = ['mathbode', *sys.argv[1:]]; runpy.run_module('mathbode', run_name='__main__')"
    )
    for delay in (0.1, 0.3, 0.5, 0.7, 1.0):
        out = tmp_path / f"d{delay}"
        proc = subprocess.Popen(
            [sys.executable, "-c", start, "build", "--families", "all", "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert proc.stderr is not None and proc.stderr.readline() == "ready\n"
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err[-1500:]
        assert proc.returncode != 0 or out.is_dir()


def test_a_full_disk_is_a_message_and_keeps_the_old_file(tmp_path, monkeypatch):
    import errno
    import os

    from click.testing import CliRunner

    from mathbode.cli.baseline import main as baseline_cli
    from mathbode.core import atomic

    target = tmp_path / "b.jsonl"
    target.write_text("my earlier file\n")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "replace", full)
    result = CliRunner().invoke(baseline_cli, ["--preset", "SMOKE", "-o", str(target)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "the system refused: No space left on device. Nothing already written was lost" in result.output
    assert target.read_text() == "my earlier file\n" and [p.name for p in tmp_path.iterdir()] == ["b.jsonl"]


def test_a_name_that_is_not_utf8_is_a_usage_error(tmp_path):
    import os

    from click.testing import CliRunner

    from mathbode.cli.build import main as build_cli

    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/\xff")
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", name])
    assert result.exit_code == 2 and "the name is not valid UTF-8" in result.output


def test_run_into_a_missing_folder_is_a_usage_error(tmp_path):
    from click.testing import CliRunner

    from mathbode.cli.run import main as run_cli

    argv = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "no" / "p.jsonl")]
    result = CliRunner().invoke(run_cli, argv)
    assert result.exit_code == 2 and f"the folder {tmp_path / 'no'} does not exist" in result.output


def test_a_journal_line_nested_100000_deep_is_a_message(tmp_path):
    from mathbode.runner.journal import Journal, JournalError

    path = tmp_path / "p.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(JournalError, match="line 1: not a prediction line written by mathbode-run"):
        Journal.open(path, fresh=False)


# -- Confinement (issue #21, item 13): the same rules for every command ---------------------------


def _push_dry_run(folder: Path) -> subprocess.CompletedProcess:
    return _cli("push", str(folder), "--repo-id", "org/name", "--dry-run")


def test_a_manifest_that_is_a_symlink_leading_outside_is_refused(release, tmp_path):
    out = _copy(release, tmp_path)
    outside = tmp_path / "elsewhere.json"
    (out / "MANIFEST.json").rename(outside)
    (out / "MANIFEST.json").symlink_to(outside)
    problems = validate_dataset(out).errors
    assert any(p.code == "path" and p.where == "MANIFEST.json" and "outside the release" in p.found for p in problems)
    assert _push_dry_run(out).returncode == 1


def test_without_a_manifest_data_files_leading_outside_are_not_read(release, tmp_path):
    out = _copy(release, tmp_path)
    (out / "MANIFEST.json").unlink()
    outside = tmp_path / "secret.parquet"
    (out / "data" / "linear_solve.parquet").rename(outside)
    (out / "data" / "linear_solve.parquet").symlink_to(outside)
    problems = validate_dataset(out).errors
    assert any(p.code == "path" and p.where == "data/linear_solve.parquet" for p in problems)


@pytest.mark.parametrize("listed", ["notes.txt", ".git/config"])
def test_a_manifest_listing_files_that_are_not_data_is_refused_and_never_pushed(release, tmp_path, listed):
    from mathbode.core.hashing import file_sha256

    out = _copy(release, tmp_path)
    (out / listed).parent.mkdir(parents=True, exist_ok=True)
    (out / listed).write_text("private")
    manifest = json.loads((out / "MANIFEST.json").read_text())
    manifest["files"][listed] = {"num_bytes": 7, "sha256": file_sha256(out / listed)}
    (out / "MANIFEST.json").write_text(json.dumps(manifest))
    problems = validate_dataset(out).errors
    assert any(p.code == "path" and p.field == f"files.{listed}" for p in problems)
    done = _push_dry_run(out)
    assert done.returncode == 1 and listed not in done.stdout
