"""A plugin package installed into a fresh venv, through every command.

The venv is new and holds only the plugin (tests/fixtures/acme_plugin, `pip install`ed from a
copy); mathbode and its dependencies come from this test's environment through a .pth file, so
nothing is fetched. Everything then runs as a user runs it: `python -m mathbode ...` in that venv.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .fixtures.fresh_venv import make_fresh_venv, site_packages

PLUGIN = Path(__file__).parent / "fixtures" / "acme_plugin"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """The python of a fresh venv with the plugin package installed (and mathbode visible)."""
    root = tmp_path_factory.mktemp("plugin-venv")
    python = make_fresh_venv(root / "venv")
    source = shutil.copytree(PLUGIN, root / "acme_plugin")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return python


def mathbode(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "mathbode", *args], capture_output=True, text=True, cwd=cwd)


def test_the_installed_plugin_is_listed_with_its_origin(fresh):
    proc = mathbode(fresh, "families", "installed", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [f["name"] for f in listed] == ["acme.fuel_cost", "acme.fall_time", "acme.cooling"]
    assert {f["origin"] for f in listed} == {"acme-families 0.3.0"}
    assert listed[2]["answer"] == "(k - 20)*exp(-t/d) + 20" and listed[2]["p_range"] == ["5", "25"]
    every = mathbode(fresh, "families")
    assert every.returncode == 0 and every.stdout.startswith(
        "linear_solve 1.0.0  [canonical; mathbode.builder.families.canonical]"
    )
    assert "acme.cooling 1.0.0  [plugin; acme-families 0.3.0]" in every.stdout


def test_the_installed_plugin_passes_its_check(fresh):
    proc = mathbode(fresh, "family", "check", "acme.*")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("3 of 3 families passed.")


@pytest.fixture(scope="module")
def release(fresh, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("acme") / "acme-release"
    proc = mathbode(fresh, "build", "--families", "acme.*", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "release MathBode-Custom, content hash sha256:" in proc.stdout
    return out


def test_a_release_of_the_plugin_builds_and_validates_with_its_content_checked(fresh, release):
    out = release
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["name"] == "MathBode-Custom" and manifest["num_rows"] == 3 * 9408
    assert {f["origin"] for f in manifest["families"].values()} == {"acme-families 0.3.0"}
    assert sorted(manifest["files"]) == sorted(
        ["README.md", "data/acme.fuel_cost.parquet", "data/acme.fall_time.parquet", "data/acme.cooling.parquet"]
    )
    card = (out / "README.md").read_text()
    assert "# MathBode-Custom" in card and "is not the canonical MathBode release" in card
    assert "| `acme.cooling` | 1.0.0 |" in card and "| transcendental |" in card
    proc = mathbode(fresh, "validate", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "content-unchecked" not in proc.stdout  # the plugin is installed: every row was recomputed
    proc = mathbode(fresh, "push", str(out), "--repo-id", "ORG/acme", "--dry-run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "data/acme.cooling.parquet" in proc.stdout


def test_without_the_plugin_the_release_is_checked_for_layout_and_counts(release):
    proc = subprocess.run([sys.executable, "-m", "mathbode", "validate", str(release)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "content-unchecked" in proc.stdout and "pip install acme-families" in proc.stdout


def test_run_against_a_stub_then_score_baseline_and_the_inspect_task(fresh, release, tmp_path):
    from .fixtures.stub_openai import StubOpenAI

    def lines(proc: subprocess.CompletedProcess) -> list[dict]:
        assert proc.returncode == 0, proc.stderr
        return [json.loads(line) for line in proc.stdout.splitlines()]

    ref = ("--reference", str(release))
    prompts = lines(mathbode(fresh, "prompts", *ref, "--preset", "SMOKE", "-o", "-"))
    baseline = lines(mathbode(fresh, "baseline", *ref, "--preset", "SMOKE", "-o", "-"))
    assert len(prompts) == len(baseline) == 3 * 256
    answers = {p["prompt"]: b["response"] for p, b in zip(prompts, baseline, strict=True)}
    stub = StubOpenAI(answers).start()
    try:
        out = tmp_path / "acme.jsonl"
        url = stub.base_url
        run = mathbode(fresh, "run", *ref, "--preset", "SMOKE", "--model", "truth", "--base-url", url, "-o", str(out))
        assert run.returncode == 0, run.stderr
    finally:
        stub.stop()
    scored = mathbode(fresh, "score", str(out), *ref, "--json", "--no-plots", "--out", str(tmp_path / "r"))
    assert scored.returncode == 0, scored.stderr
    (scores,) = json.loads(scored.stdout)
    assert scores["overall"]["mb_core_calibrated"] == 1.0
    assert scores["conditions"]["release"] == "MathBode-Custom"
    assert sorted(scores["families"]) == ["acme.cooling", "acme.fall_time", "acme.fuel_cost"]

    # The inspect task on the release, answered by inspect's mock model with the baseline's
    # answers, then converted into a submission and scored.
    script = tmp_path / "inspect_run.py"
    script.write_text(
        "import json, sys\n"
        "from inspect_ai import eval as inspect_eval\n"
        "from inspect_ai.model import ModelOutput, ModelUsage, get_model\n"
        "from mathbode.integrations.inspect_tasks import smoke\n"
        "answers = json.load(open(sys.argv[1]))\n"
        "def answer(messages, tools, tool_choice, config):\n"
        "    out = ModelOutput.from_content(model='mockllm', content=answers[messages[-1].text])\n"
        "    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)\n"
        "    return out\n"
        "(log,) = inspect_eval(smoke(reference=sys.argv[2]), model=get_model('mockllm/model', custom_outputs=answer),\n"
        "                      log_dir=sys.argv[3], display='none', log_realtime=False)\n"
        "print(log.status, log.location, log.error)\n"
    )
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    done = subprocess.run(
        [str(fresh), str(script), str(tmp_path / "answers.json"), str(release), str(tmp_path / "logs")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout.startswith("success "), done.stdout + done.stderr
    log = done.stdout.split(" ")[1].strip()
    converted = tmp_path / "converted.jsonl"
    proc = mathbode(fresh, "convert", log, *ref, "-o", str(converted))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = mathbode(fresh, "score", str(converted), *ref, "--json", "--no-plots", "--out", str(tmp_path / "r2"))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)[0]["overall"]["mb_core_calibrated"] == 1.0


def test_the_built_in_commands_still_work_beside_a_broken_plugin(fresh, tmp_path):
    dist = site_packages(fresh) / "broken_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[mathbode.families]\nghost = no_such_module_at_all\n")
    try:
        proc = mathbode(fresh, "families", "all")
        assert proc.returncode == 0 and proc.stdout.startswith("linear_solve 1.0.0")
        assert "Warning: plugin 'ghost' (broken-plugin 1.0): cannot be loaded: ModuleNotFoundError" in proc.stderr
        built = mathbode(fresh, "build", "--families", "similar_triangles", "--out", str(tmp_path / "one"), "-q")
        assert built.returncode == 0 and built.stderr == ""
        named = mathbode(fresh, "family", "check", "ghost.anything")
        assert named.returncode == 2
        assert "Unknown family 'ghost.anything': plugin 'ghost' (broken-plugin 1.0): cannot be loaded" in named.stderr
    finally:
        shutil.rmtree(dist)
