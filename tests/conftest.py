"""Shared fixtures: one fresh build per test session (about a second), and the committed dist/.

The suite runs on every core (pytest-xdist, `-n auto`): each worker is a session of its own, so a
session fixture is built once per worker, and everything a test writes lives under its tmp_path
(each worker has its own base folder) and every server it starts listens on port 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mathbode.builder import FAMILIES
from mathbode.builder.release import build_release

#: `inspect eval` on the command line writes its log once, at the end, as the tests' own
#: `inspect_eval(..., log_realtime=False)` calls do: streaming samples into the log as they finish
#: is for watching a run live (`inspect view`), and took 40 % of a 256-sample mock eval.
os.environ.setdefault("INSPECT_EVAL_NO_LOG_REALTIME", "1")

REPO = Path(__file__).resolve().parent.parent
COMMITTED_DIST = REPO / "dist"

#: Test modules whose verdicts no float that numpy or OpenBLAS computes can change: they check
#: bytes pushed to and fetched from a Hub, a card's text against its files, the layout's counts,
#: JSON Schemas, pandas staying unimported, a hostile server's messages, and a browser's rendering
#: of numbers copied from one results document (compared with that same document, never with a
#: second computation), and PAIRED's cost (counts of rows, prompts and their tokens: prompts of
#: exact decimals on standard drives, whose sines are mpmath's, truths rounded once from exact
#: values). `.ci/other-kernels` skips them (`-m "not cpu_independent"`); every other module builds
#: rows (numpy's sines under pinned hashes), fits, scores or compares computed floats, and runs
#: under every kernel set. A module that starts computing floats leaves this list.
CPU_INDEPENDENT = {
    "test_card",
    "test_hostile_server",
    "test_hub",
    "test_layout",
    "test_paired_cost",
    "test_pandas_probe",
    "test_schema_contract",
    "test_site",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.module is not None and item.module.__name__.rpartition(".")[2] in CPU_INDEPENDENT:
            item.add_marker(pytest.mark.cpu_independent)


def fresh_python(code: str) -> str:
    """Run `code` (dedented) in a fresh interpreter and return what it printed: what a program
    imports, and how it loads it, is per process. A failure shows the program's stderr."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="session")
def reference():
    """The builder's canonical rows of every family (built once per session)."""
    from mathbode.builder.oracle import canonical_reference
    from mathbode.schema import layout

    return canonical_reference(list(layout().families))


@pytest.fixture(scope="session")
def full_rows(reference):
    """FULL's rows as dicts, selected once per session (read, never changed, by the tests that take them)."""
    from mathbode.schema.selection import select_rows

    return select_rows(reference.table, "FULL")


@pytest.fixture(scope="session")
def all_rows(reference):
    """ALL's rows as dicts, selected once per session (read, never changed, by the tests that take them)."""
    from mathbode.schema.selection import select_rows

    return select_rows(reference.table, "ALL")


def score_lines(lines, reference, tmp_path, name="sub", **kw):
    """Write prediction lines, read them back as a user's file (it must be valid), and score them."""
    from mathbode.core.atomic import write_jsonl
    from mathbode.evaluator.scorer.scoring import score
    from mathbode.schema import read_submission

    path = tmp_path / f"{name}.jsonl"
    write_jsonl(path, lines)
    sub = read_submission(path)
    assert sub.report.valid, sub.report.format_text()
    return score(sub.predictions, reference, name, sub.model, **kw)


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


@pytest.fixture(scope="session")
def truth_answers(reference):
    """prompt -> its exact answer in the answer format, for every row (what the stub's `truth` says)."""
    from mathbode.builder.oracle import baseline_lines
    from mathbode.schema.selection import select_rows

    rows = select_rows(reference.table, "ALL")
    return {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)}


@pytest.fixture
def truth_stub(truth_answers):
    """The scripted OpenAI-compatible stub on 127.0.0.1, answering from `truth_answers`."""
    from .fixtures.stub_openai import StubOpenAI

    server = StubOpenAI(truth_answers).start()
    yield server
    server.stop()


def by_sweep(rows):
    """Rows grouped by sweep (their key less the time step), each sweep in time order."""
    from mathbode.schema import layout

    key = [k for k in layout().key if k != "time_step"]
    sweeps: dict[tuple, list[dict]] = {}
    for r in rows:
        sweeps.setdefault(tuple(r[k] for k in key), []).append(r)
    return [sorted(s, key=lambda r: r["time_step"]) for s in sweeps.values()]


def convert_and_score(tmp_path, logs, extra=()):
    """`mathbode convert LOGS -o converted.jsonl`, then `mathbode score --json` of the result:
    (the submission, what convert said, the scores document)."""
    import json

    from click.testing import CliRunner

    from mathbode.cli.convert import main as convert_cli
    from mathbode.cli.score import main as score_cli

    out = tmp_path / "converted.jsonl"
    result = CliRunner().invoke(convert_cli, [*map(str, logs), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    scored = CliRunner().invoke(score_cli, [str(out), "--json", "--no-plots", "--out", str(tmp_path / "report")])
    assert scored.exit_code == 0, scored.output
    (scores,) = json.loads(scored.stdout)
    return out, result.output, scores


@pytest.fixture(scope="session")
def smoke(reference, tmp_path_factory):
    """The exact answers to SMOKE as a submission file (read, never changed, by the tests that take it)."""
    from mathbode.builder.oracle import baseline_lines
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema.selection import select_rows

    path = tmp_path_factory.mktemp("smoke") / "s.jsonl"
    write_jsonl(path, baseline_lines(select_rows(reference.table, "SMOKE")))
    return path
