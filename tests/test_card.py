"""The generated dataset card: parses as a Hub card, and every number is the files' own."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard

from mathbode.schema import layout

from .conftest import COMMITTED_DIST


def test_card_parses_and_its_numbers_are_the_files_numbers():
    card = DatasetCard.load(COMMITTED_DIST / "README.md")
    data = card.data.to_dict()
    manifest = json.loads((COMMITTED_DIST / "MANIFEST.json").read_text())
    assert data["license"] == "apache-2.0" and data["pretty_name"] == "MathBode"
    assert data["size_categories"] == ["10K<n<100K"] and data["language"] == ["en"]
    configs = {c["config_name"]: c for c in data["configs"]}
    assert list(configs) == ["all", *layout().families]
    assert configs["all"]["default"] is True
    infos = {i["config_name"]: i for i in data["dataset_info"]}
    for name, config in configs.items():
        paths = config["data_files"][0]["path"]
        tables = [pq.read_table(COMMITTED_DIST / p) for p in paths]
        info = infos[name]
        assert info["splits"] == [
            {
                "name": "train",
                "num_examples": sum(t.num_rows for t in tables),
                "num_bytes": sum(t.nbytes for t in tables),
            }
        ]
        assert info["download_size"] == sum((COMMITTED_DIST / p).stat().st_size for p in paths)
        assert info["dataset_size"] == info["splits"][0]["num_bytes"]
        assert [f["name"] for f in info["features"]] == list(layout().column_names)
    assert infos["all"]["splits"][0]["num_examples"] == 47_040
    assert f"Content hash: `{manifest['content_hash']}`" in card.text
    assert f"builder {manifest['builder_version']}" in card.text


def test_card_body_documents_every_family_and_the_grid():
    text = (COMMITTED_DIST / "README.md").read_text()
    for family in layout().families:
        assert f"(`{family}`)" in text
    assert "| sinusoid | sin(2 pi f t / 64 + phase), f in 1, 2, 4, 8, 16 cycles per 64 steps" in text
    assert "Per question: 49 sweeps x 64 steps = 3,136 rows; 3 questions per family." in text
    assert 'load_dataset("ORG/MathBode", "linear_solve")["train"]' in text


def _helper_exit(body: str) -> subprocess.CompletedProcess:
    """Run `body` inside `with CardHelper() as helper:` (its process as `process`) in a process of its
    own, printing the helper's exit code: a test worker's threads make forking unsafe, and no helper
    is made there."""
    lines = ["process = helper._process", *body.splitlines()]
    script = (
        "from mathbode.cards.helper import CardHelper\n"
        "from mathbode.core.forking import can_fork\n"
        "assert can_fork()\n"
        "with CardHelper() as helper:\n" + "".join(f"    {line}\n" for line in lines) + "print(process.exitcode)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_the_card_helper_ends_by_itself_when_a_build_stops_before_its_card():
    """A build that stops early (Ctrl-C, an error) closes its end of the pipe: the helper reads an
    end of file and exits with 0 at once. It used to hold a forked copy of the build's end open,
    so the build waited out a 5 s join before killing it (every stopped build took 5 s longer)."""
    done = _helper_exit("")
    # Ended by itself (exit code 0), not killed (-9) after the join's timeout.
    assert done.stdout == "0\n"


def test_the_card_helper_is_silent_when_the_build_stops_after_asking_for_its_card():
    """Ctrl-C between the build's request and the card's return: the helper's answer meets a closed
    pipe, and it ends quietly (it printed a BrokenPipeError traceback under the build's
    "Aborted!"). The request here is one the renderer refuses, so the answer is ready at once."""
    done = _helper_exit(
        "helper._conn.send(('not a manifest', []))\nhelper._conn.close()\nhelper._conn = None\nprocess.join(60)"
    )
    assert done.stdout == "0\n"
    assert "Traceback" not in done.stderr, done.stderr
