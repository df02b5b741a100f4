"""docs/family-guide.md, run whole in a fresh venv: a user's plugin from an empty file to a scored
release, every command as the page prints it, every quoted output compared.

tests/test_docs.py runs the page's offline blocks in this environment and skips the ones marked
`needs: long` (they install a package); here every block runs, in order, in a venv of its own
(tests/fixtures/fresh_venv.py) with this Python's packages visible and pip kept offline.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from .fixtures.fresh_venv import make_fresh_venv
from .fixtures.stub_openai import StubOpenAI
from .test_docs import REPO, STUB_ADDRESS, commands, environment, run_blocks, same_text

PAGE = REPO / "docs" / "family-guide.md"


@pytest.fixture
def stub():
    """The stub model server; its `truth` answers are filled in once the page has built its release."""
    server = StubOpenAI({}).start()
    yield server
    server.stop()


def exact_answers(python, folder, env) -> dict[str, str]:
    """prompt -> the symbolic baseline's response, for every row of the page's release."""

    def lines(*args: str) -> list[dict]:
        done = subprocess.run(
            [str(python), "-m", "mathbode", *args, "--reference", "orbit-release", "--preset", "ALL", "-o", "-"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return [json.loads(line) for line in done.stdout.splitlines()]

    return {p["prompt"]: b["response"] for p, b in zip(lines("prompts"), lines("baseline"), strict=True)}


def test_the_family_guide_runs_from_an_empty_folder_to_a_scored_release(tmp_path, stub):
    python = make_fresh_venv(tmp_path / "venv")
    folder = tmp_path / "work"
    folder.mkdir()
    env = environment(folder)
    env["PATH"] = f"{python.parent}{os.pathsep}{env['PATH']}"
    # Offline: build the package with the setuptools already installed, never fetch.
    env.update(PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    blocks = run_blocks(PAGE)
    assert sum(b.needs == "long" for b in blocks) == 3
    for block in blocks:
        if STUB_ADDRESS in block.code:
            stub.answers.update(exact_answers(python, folder, env))
        out = []
        for argv, code in commands(block, stub.base_url):
            done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{code}\n{done.stdout}\n{done.stderr}"
            out.append(done.stdout)
        if block.expected is not None:
            got = "".join(out).replace(str(folder), ".")
            assert same_text(got, block.expected), f"{block.where}: the quoted output changed\n--- now\n{got}"
    manifest = json.loads((folder / "orbit-release" / "MANIFEST.json").read_text())
    assert manifest["name"] == "Orbit"
    assert manifest["families"]["orbit.circular_speed"]["origin"] == "orbit-families 1.0.0"
    scores = json.loads((folder / "orbit-scores" / "scores.json").read_text())
    first = scores[0] if isinstance(scores, list) else scores
    assert first["conditions"]["release"] == "Orbit"
    assert first["overall"]["mb_core_calibrated"] == 1.0  # the stub answered exactly
