"""The documentation cannot drift: the site builds strictly, and every shell and Python block of
README.md and docs/*.md runs (offline) or says why it cannot.

The rules a page follows (docs/internals.md, "Documentation that runs", says the same):

- ```bash, ```sh, ```console and ```python blocks are run; other fences (text, json, yaml) are
  quoted, not run. In a ```console block, lines starting with `$ ` are commands and the other
  lines their expected output.
- A block that cannot run offline has a marker on the line just before its fence,
  `<!-- needs: KIND (why) -->`, KIND one of `server` (a real model server), `network` (PyPI or
  the Hugging Face Hub) or `long` (minutes: the whole test suite, a benchmark). It is not run.
- Every other block runs and must exit 0. The blocks of one page run in order, in one fresh
  folder per page that starts with a copy of the committed release as `dist/` (what a checkout
  holds after the quick start), so a block may use what an earlier block of its page wrote.
- A block that names `http://127.0.0.1:8000/v1` runs against the stub server
  (`tests/fixtures/stub_openai.py`): that address becomes the stub's, and the placeholder `MODEL`
  becomes `truth` (the stub's exact answers).
- A block marked `<!-- needs: stand-in (why) -->` starts the stand-in model server
  (`python -m mathbode.runner.stub_model --port 8000 ...`, one command): the test starts it in
  the background on a free port instead of 8000, with the block's other options, and the page's
  later blocks that name the address run against it (a second such block replaces it), as a
  reader runs them in another terminal.
- A ```text block right after a run block (only blank lines between) is that block's expected
  standard output, compared line by line (trailing spaces ignored): a changed output fails.
- The environment is offline (`HF_HUB_OFFLINE=1`, `HF_DATASETS_OFFLINE=1`, a fresh `HF_HOME`),
  draws with matplotlib's Agg backend, and has this Python's scripts first on `PATH`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mathbode.cli.main import SUBCOMMANDS

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN_LANGUAGES = {"bash", "sh", "console", "python"}
NEEDS = {"server", "network", "long", "stand-in"}
#: The command a `stand-in` block runs (see the module's rules).
STAND_IN = ["python", "-m", "mathbode.runner.stub_model", "--port", "8000"]
STUB_ADDRESS = "http://127.0.0.1:8000/v1"
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*needs:\s*(?P<kind>[\w-]+)\b(?P<why>.*?)-->\s*$")


@dataclass
class Block:
    """One fenced block of a page: where it starts, its language, its text and its marker."""

    page: Path
    line: int
    lang: str
    code: str
    needs: str | None = None
    expected: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, each run block with its marker and the output quoted after it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = previous_end = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, lang, start = fence["indent"], fence["lang"], i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        block = Block(page, start + 1, lang, "\n".join(body) + "\n", marker["kind"] if marker else None)
        previous = found[-1] if found else None
        between = lines[previous_end:start]
        if lang == "text" and previous and previous.lang in RUN_LANGUAGES and not any(s.strip() for s in between):
            previous.expected = block.code
        found.append(block)
        previous_end = i
    return found


def run_blocks(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.lang in RUN_LANGUAGES]


def test_blocks_are_found_and_markers_name_a_known_kind():
    every = [b for page in PAGES for b in run_blocks(page)]
    assert len(every) > 20
    unknown = [f"{b.where}: needs {b.needs}" for b in every if b.needs and b.needs not in NEEDS]
    assert not unknown, f"a `needs:` marker names one of {sorted(NEEDS)}: {unknown}"


def test_the_readme_keeps_the_quick_start_commands_ci_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install . && mathbode-build --families all\n" in readme
    assert 'pip install ".[test]" && python -m pytest\n' in readme
    assert 'pip install ".[test]" && python -m pytest\n' in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readmes_links_lead_to_files_of_the_repository():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((?!https?://|#)([^)#\s]+)", readme)
    assert targets
    missing = [t for t in targets if not (REPO / t).exists()]
    assert not missing, missing


def test_the_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    assert (site / "index.html").exists() and (site / "case-study" / "index.html").exists()


def documentation() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


@pytest.mark.parametrize("sub", list(SUBCOMMANDS))
def test_the_synopses_name_every_option_and_presets_as_help_shows_them(sub):
    import click
    from click.testing import CliRunner

    from mathbode.cli.main import mathbode
    from mathbode.schema.selection import PRESET_CHOICES

    docs = documentation()
    command = mathbode.get_command(click.Context(mathbode), sub)
    for param in command.params:
        names = [*param.opts, *param.secondary_opts]
        if names[0].startswith("-") and "--version" not in names:
            assert any(f"{n} " in docs or f"{n}]" in docs or f"{n}`" in docs for n in names), (
                f"mathbode {sub} {names[0]} is not in the documentation"
            )
    help_text = CliRunner().invoke(mathbode, [sub, "--help"]).output
    if "--preset" in help_text:
        names = "|".join(PRESET_CHOICES)
        assert names == "SMOKE|MVP|MVP_PLUS|FULL|PAIRED|CHIRP_STEP|ALL"
        assert f"[{names}]" in help_text and names in docs


def test_the_load_snippet_needs_only_the_main_install():
    """`pip install .` must bring `datasets`: the documentation's "Load it" and the card use it."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(d.split(">")[0].split("=")[0].strip() == "datasets" for d in project["dependencies"])
    assert 'load_dataset("dist", "linear_solve")' in (REPO / "docs" / "dataset.md").read_text()


def test_the_docs_extra_is_part_of_the_test_install():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["docs"]} == {"mkdocs", "mkdocs-material"}
    assert "mathbode[inspect,lm-eval,docs]" in extras["test"]


@pytest.fixture(scope="module")
def stub(truth_answers):
    from .fixtures.stub_openai import StubOpenAI

    server = StubOpenAI(truth_answers).start()
    yield server
    server.stop()


def environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "OPENAI_"))}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HOME=str(folder.parent / "hf-home"),
        MPLBACKEND="Agg",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def commands(block: Block, base_url: str) -> list[tuple[list[str], str]]:
    """(argv, code) to run for a block: its stub address and `MODEL` substituted."""
    code = block.code
    if STUB_ADDRESS in code:
        code = re.sub(r"\bMODEL\b", "truth", code.replace(STUB_ADDRESS, base_url))
    if block.lang == "python":
        return [([sys.executable, "-c", code], code)]
    if block.lang == "console":
        return [(["bash", "-euo", "pipefail", "-c", c[2:]], c[2:]) for c in code.splitlines() if c.startswith("$ ")]
    return [(["bash", "-euo", "pipefail", "-c", code], code)]


def console_output(block: Block) -> str | None:
    lines = [line for line in block.code.splitlines() if not line.startswith("$ ")]
    return "\n".join(lines) + "\n" if lines else None


def same_text(got: str, expected: str) -> bool:
    def norm(text: str) -> list[str]:
        return [line.rstrip() for line in text.rstrip().splitlines()]

    return norm(got) == norm(expected)


class StandIn:
    """The stand-in a `stand-in` block starts, run in the background on a free port."""

    def __init__(self, block: Block, folder: Path, env: dict[str, str]) -> None:
        argv = shlex.split(block.code)
        assert argv[: len(STAND_IN)] == STAND_IN and "\n" not in block.code.strip(), (
            f"{block.where}: a stand-in block is one command, `{' '.join(STAND_IN)} ...`"
        )
        argv = [sys.executable, *STAND_IN[1:-1], "0", *argv[len(STAND_IN) :]]
        self.process = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.process.stdout.readline().decode()  # it says where it serves once it listens
        if " at http://" not in line:
            self.process.terminate()
            err = self.process.communicate(timeout=10)[1].decode()
            raise AssertionError(f"{block.where}: the stand-in did not start\n{line}{err}")
        self.base_url = line.split(" at ")[1].split()[0]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.process.stdout.close()
        self.process.stderr.close()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_block_of_the_page_runs_offline_or_says_why_not(page, stub, tmp_path):
    runnable = [b for b in run_blocks(page) if b.needs in (None, "stand-in")]
    if not runnable:
        pytest.skip(f"{page.name} has no block that runs offline")
    folder = tmp_path / "work"
    shutil.copytree(REPO / "dist", folder / "dist")
    env = environment(folder)
    stand_in: StandIn | None = None
    try:
        for block in runnable:
            if block.needs == "stand-in":
                if stand_in is not None:
                    stand_in.stop()
                    stand_in = None
                stand_in = StandIn(block, folder, env)
                continue
            base_url = stand_in.base_url if stand_in is not None else stub.base_url
            check_block(block, base_url, folder, env)
    finally:
        if stand_in is not None:
            stand_in.stop()


def check_block(block: Block, base_url: str, folder: Path, env: dict[str, str]) -> None:
    """Run a block's commands in `folder`; each must exit 0, and the output quoted after it must match."""
    out = []
    for argv, code in commands(block, base_url):
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (
            f"{block.where}: exit {done.returncode}\n{code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
        out.append(done.stdout)
    expected = block.expected if block.lang != "console" else console_output(block)
    if expected is not None:
        got = "".join(out).replace(str(folder), ".")
        assert same_text(got, expected), f"{block.where}: the quoted output changed\n--- now\n{got}"
