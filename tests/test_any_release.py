"""Every command on a release of any families (issue #33, item 5): validate, push --dry-run, run,
score, prompts, convert, the inspect task and the lm-eval aggregation, against "Toy-Release", a
release of two families this installation does not know, made here without the builder's
registry (the committed canonical rows with their `family` column renamed), and a mixed release
of two canonical families and one toy family (whose canonical row ids must not move).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.push import main as push_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.core.atomic import write_jsonl
from mathbode.core.hashing import content_hash
from mathbode.core.version import __version__
from mathbode.evaluator.presentation.files import LEADERBOARD_FILE
from mathbode.evaluator.presentation.report import write_report
from mathbode.evaluator.scorer.scoring import score
from mathbode.hub.reference import resolve_reference
from mathbode.schema import layout, read_submission
from mathbode.schema.keys import canonical_row_ids, canonical_row_order, row_key_of
from mathbode.schema.manifest import FamilyEntry, FileEntry, Manifest, write_release_metadata
from mathbode.schema.parquet import read_parquet
from mathbode.schema.selection import key_fields, select_rows
from mathbode.schema.splits import canary
from mathbode.schema.universe import Universe, canonical_universe

from .conftest import COMMITTED_DIST

LAY = layout()
N = LAY.rows_per_family
TOY = {"toy.lin": "linear_solve", "orbit_decay": "ratio_saturation"}
MIXED = {"linear_solve": "linear_solve", "linear_system": "linear_system", "toy.lin": "similar_triangles"}
ORIGIN = "acme-families 1.2.0"
HINT = (
    "'toy.lin' is not a family of the canonical MathBode release: build its release with "
    "`mathbode-build --families toy.lin --out DIR` and pass `--reference DIR`."
)


def make_release(out: Path, families: dict[str, str], name: str, origins: dict[str, str] | None = None) -> Manifest:
    """A release folder of `families` (new name -> the committed canonical family whose rows it takes)."""
    (out / "data").mkdir(parents=True)
    entries, files = {}, {}
    for new, source in families.items():
        table = read_parquet(COMMITTED_DIST / "data" / f"{source}.parquet")
        table = table.set_column(0, "family", pa.array([new] * table.num_rows, pa.string()))
        rel = f"data/{new}.parquet"
        pq.write_table(table, out / rel)
        files[rel] = FileEntry.of(out / rel, table.num_rows, table.nbytes)
        origin = (origins or {}).get(new)
        entries[new] = FamilyEntry("1.0.0", table.num_rows, content_hash(table), (rel,), origin)
    # The canary every release of the families' own questions carries, as mathbode-build writes it.
    manifest = Manifest(
        __version__, "parquet", entries, files, f"pyarrow {pa.__version__}", name=name, canary=canary(None)
    )
    configs = "".join(
        f"- config_name: {f}\n  data_files:\n  - split: train\n    path:\n    - data/{f}.parquet\n" for f in families
    )
    return write_release_metadata(out, manifest, f"---\npretty_name: {name}\nconfigs:\n{configs}---\n# {name}\n")


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("toy") / "release"
    make_release(out, TOY, "Toy-Release", {"toy.lin": ORIGIN})
    return out


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mixed") / "release"
    make_release(out, MIXED, "Mixed-Release")
    return out


def toy_hash(folder: Path) -> str:
    return json.loads((folder / "MANIFEST.json").read_text())["content_hash"]


def exact_lines(rows: list[dict]) -> list[dict]:
    """The exact answers (truth truncated to six decimals) to `rows`, as prediction lines."""
    return [{**key_fields(r), "prediction": float(np.trunc(r["ground_truth"] * 1e6) / 1e6)} for r in rows]


def invoke(cli, *args):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})


# -- validate ---------------------------------------------------------------------------------------
def test_a_release_of_unknown_families_is_valid_and_says_its_content_was_not_checked(toy):
    result = invoke(validate_cli, toy)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"{toy}: valid dataset (0 error(s), 4 warning(s))",
        "  warning (description-unchecked) field 'families.toy.lin': expected a family this installation can "
        "describe (install acme-families: pip install acme-families)",
        f"    MANIFEST.json: found toy.lin: its version, origin and pairing were not checked: a family of {ORIGIN}, "
        "not installed here",
        "  warning (description-unchecked) field 'families.orbit_decay': expected a family this installation can "
        "describe (validate it where the family is installed)",
        "    MANIFEST.json: found orbit_decay: its version, origin and pairing were not checked: a family this "
        "installation does not know",
        "  warning (content-unchecked) field 'family': expected rows this installation can recompute "
        "(install the plugin that defines it: pip install acme-families)",
        f"    data/toy.lin.parquet: found toy.lin: content not checked: a family of {ORIGIN}, not installed here; "
        "its layout and counts were checked",
        "  warning (content-unchecked) field 'family': expected rows this installation can recompute",
        "    data/orbit_decay.parquet: found orbit_decay: content not checked: a family this installation does "
        "not know; its layout and counts were checked",
        "  rows: 18,816 in 2 families",
        f"  release Toy-Release, content {toy_hash(toy)}: families toy.lin, orbit_decay, not the canonical "
        "MathBode release (its scores are ranked apart from the canonical release's)",
    ]


def test_a_release_of_unknown_families_is_still_checked_for_layout_and_counts(toy, tmp_path):
    broken = tmp_path / "broken"
    make_release(broken, TOY, "Toy-Release")
    table = read_parquet(broken / "data" / "orbit_decay.parquet").slice(0, N - 64)
    pq.write_table(table, broken / "data" / "orbit_decay.parquet")
    result = invoke(validate_cli, broken, "--json")
    assert result.exit_code == 1
    codes = {p["code"] for p in json.loads(result.output)["reports"][0]["problems"]}
    assert {"incomplete-sweep", "row-count", "checksum", "content-unchecked"} <= codes


def test_a_canonical_content_hash_still_proves_canonical_in_a_mixed_release(mixed):
    result = invoke(validate_cli, mixed, "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)["reports"]
    assert report["summary"]["rows"] == {"linear_solve": N, "linear_system": N, "toy.lin": N}
    # Only the toy family is "not checked": the canonical two are proved canonical by their hashes.
    unchecked = [p for p in report["problems"] if p["code"] == "content-unchecked"]
    assert [p["count"] for p in unchecked] == [1] and unchecked[0]["examples"][0]["where"] == "data/toy.lin.parquet"
    assert not any(p["code"] == "partial" for p in report["problems"])


def test_a_submission_is_validated_against_its_release(toy, tmp_path):
    rows = select_rows(resolve_reference("all", str(toy)).table, "SMOKE")
    good = tmp_path / "good.jsonl"
    write_jsonl(good, exact_lines(rows))
    result = invoke(validate_cli, good, "--reference", toy)
    assert result.exit_code == 0, result.output
    assert "coverage by family: toy.lin 256/9,408, orbit_decay 256/9,408" in result.output
    assert "presets fully covered: SMOKE" in result.output
    # The same file with no --reference names its families as not the canonical release's.
    result = invoke(validate_cli, good)
    assert result.exit_code == 1
    assert f'line 1: found string "toy.lin" ({HINT})' in result.output


def test_a_family_the_reference_lacks_is_refused_with_its_line_and_close_matches(toy, tmp_path):
    lines = exact_lines(select_rows(resolve_reference("all", str(toy)).table, "SMOKE")[:3])
    lines[1]["family"] = "toy.line"
    lines[2]["family"] = "linear_solve"
    path = tmp_path / "p.jsonl"
    write_jsonl(path, lines)
    sub = read_submission(path, resolve_reference(None, str(toy)).universe)
    assert [(p.code, p.where, p.field, p.expected, p.found) for p in sub.report.problems] == [
        (
            "schema",
            "line 2",
            "family",
            'one of "toy.lin", "orbit_decay"',
            "string \"toy.line\" (did you mean 'toy.lin'?)",
        ),
        ("schema", "line 3", "family", 'one of "toy.lin", "orbit_decay"', 'string "linear_solve"'),
    ]
    result = invoke(validate_cli, path, "--reference", toy)
    assert result.exit_code == 1
    assert f"{path}: INVALID submission (2 error(s), 0 warning(s))" in result.output
    result = invoke(score_cli, path, "--reference", toy, "--no-plots", "--out", tmp_path / "r")
    assert result.exit_code == 1 and "cannot be scored: it fails validation" in result.output


def test_the_canonical_message_for_a_misspelt_family_is_unchanged(tmp_path):
    line = {**key_fields(select_rows(resolve_reference(["linear_solve"]).table, "SMOKE")[0]), "prediction": 1}
    path = tmp_path / "p.jsonl"
    write_jsonl(path, [{**line, "family": "linear_solv"}])
    (problem,) = read_submission(path).report.problems
    assert problem.expected == "one of " + ", ".join(json.dumps(f) for f in LAY.families)
    assert problem.found == "string \"linear_solv\" (did you mean 'linear_solve'?)"


# -- a family of another release, with no --reference: one message ----------------------------------
def test_a_family_that_is_not_canonical_without_reference_is_one_clear_message(tmp_path):
    for cli in (prompts_cli, run_cli):
        extra = ("--model", "truth", "--base-url", "http://127.0.0.1:9", "-o", tmp_path / "o.jsonl")
        result = invoke(cli, "--families", "toy.lin", *(extra if cli is run_cli else ("-o", tmp_path / "o.jsonl")))
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output  # no traceback
        assert result.output.splitlines()[-1] == (
            "Error: Invalid value for --families: Unknown family 'toy.lin'. Available: "
            + ", ".join(LAY.families)
            + ". "
            + HINT
        )
    from mathbode.integrations.records import task_rows

    with pytest.raises(Exception, match="build its release with `mathbode-build --families toy.lin"):
        task_rows("SMOKE", "toy.lin")


# -- prompts, run, score ------------------------------------------------------------------------------
def test_prompts_of_all_the_releases_families(toy, tmp_path):
    out = tmp_path / "requests.jsonl"
    result = invoke(prompts_cli, "--reference", toy, "-o", out)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 512 and [lines[0]["family"], lines[-1]["family"]] == ["toy.lin", "orbit_decay"]
    result = invoke(prompts_cli, "--reference", toy, "--families", "orbit_decay", "--preset", "MVP", "-o", out)
    assert result.exit_code == 0 and result.output == f"Wrote 384 requests (MVP) to {out}\n"
    result = invoke(prompts_cli, "--reference", toy, "--families", "linear_solve", "-o", out)
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for --families: Unknown family 'linear_solve'. Available: toy.lin, orbit_decay."
    )


def test_a_smoke_run_against_the_stub_scores_as_the_canonical_run_and_is_labelled(toy, truth_stub, tmp_path):
    out = tmp_path / "toy.jsonl"
    argv = ["--base-url", truth_stub.base_url, "--model", "truth", "--reference", toy, "-o", out]
    result = invoke(run_cli, *argv, "--families", "all", "--concurrency", "16", "--score")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 512 and {line["family"] for line in lines} == {"toy.lin", "orbit_decay"}
    record = json.loads(out.with_name("toy.run.json").read_text())
    assert record["families"] == ["toy.lin", "orbit_decay"] and record["reference"]["release"] == "Toy-Release"
    scores = json.loads((tmp_path / "toy-report" / "scores.json").read_text())
    release = {"release": "Toy-Release", "release_content_hash": toy_hash(toy)}
    assert {k: scores["conditions"][k] for k in release} == release
    assert scores["provenance"]["reference"]["release"] == "Toy-Release"
    assert scores["provenance"]["reference"]["release_content_hash"] == toy_hash(toy)
    assert scores["preset"] == "SMOKE" and list(scores["families"]) == ["toy.lin", "orbit_decay"]
    note = (
        f"scored against release Toy-Release (content {toy_hash(toy)}), not the canonical MathBode release: "
        "another benchmark, ranked apart from it"
    )
    assert f"note: truth: {note}." in result.output
    assert f"- {note}" in (tmp_path / "toy-report" / "report.md").read_text()

    # The same answers under the canonical names score exactly as the canonical run does.
    canonical = tmp_path / "canonical.jsonl"
    back = {new: old for new, old in TOY.items()}
    write_jsonl(canonical, [{**line, "family": back[line["family"]]} for line in lines])
    mine = score(
        read_submission(out, resolve_reference(None, str(toy)).universe).answers,
        resolve_reference("all", str(toy)),
        "toy",
    )
    theirs = score(read_submission(canonical).answers, resolve_reference(list(TOY.values())), "canonical")
    assert theirs.overall["num_families"] == 2 and "release" not in theirs.extra["conditions"]
    # Two of the canonical five: their mean is kept apart from the overall (which needs all five).
    for name in ("mb_core", "mb_plus", "mb_core_calibrated", "mb_plus_calibrated"):
        assert mine.overall[name] == theirs.overall["subset"][name], name
        for new, old in TOY.items():
            assert mine.families[new][name] == theirs.families[old][name], (name, new)
    assert mine.overall["mb_core_calibrated"] == 1.0 and mine.overall["mb_plus_calibrated"] == 1.0
    assert round(mine.overall["mb_core"], 4) == 1.0
    assert mine.extra["accuracy"] == {**theirs.extra["accuracy"]} and mine.extra["accuracy"]["rows"] == 512


def test_a_leaderboard_keeps_a_toy_and_a_canonical_submission_apart(toy, tmp_path):
    rows = select_rows(resolve_reference("all", str(toy)).table, "SMOKE")
    toy_file, canonical_file = tmp_path / "toy.jsonl", tmp_path / "canonical.jsonl"
    write_jsonl(toy_file, exact_lines(rows))
    write_jsonl(canonical_file, [{**line, "family": TOY[line["family"]]} for line in exact_lines(rows)])
    universe = resolve_reference(None, str(toy)).universe
    results = [
        score(read_submission(canonical_file).answers, resolve_reference(list(TOY.values())), "canonical"),
        score(read_submission(toy_file, universe).answers, resolve_reference("all", str(toy)), "toy"),
    ]
    write_report(results, tmp_path / "report", plots=False)
    with open(tmp_path / "report" / LEADERBOARD_FILE, newline="") as stream:
        rows_of = list(csv.DictReader(stream))
    assert [(r["label"], r["rank"]) for r in rows_of] == [("canonical", "1"), ("toy", "1")]
    groups = [r["group"] for r in rows_of]
    assert groups[0] == "answer format free, prompting zero-shot, protocol stateless"
    assert groups[1] == (
        f"release Toy-Release, content {toy_hash(toy)}, answer format free, prompting zero-shot, protocol stateless"
    )
    assert [r["release"] for r in rows_of] == ["", "Toy-Release"]
    report = (tmp_path / "report" / "report.md").read_text()
    assert "Submissions made under different conditions are ranked apart" in report
    assert f"### release Toy-Release, content {toy_hash(toy)}" in report


# -- the mixed release: canonical row ids do not move --------------------------------------------------
def test_a_mixed_release_keeps_the_canonical_row_ids(mixed, tmp_path):
    ref = resolve_reference(None, str(mixed))
    universe = ref.universe
    assert universe.families == ("linear_solve", "linear_system", "toy.lin")
    assert universe.slots == (*LAY.families, "toy.lin")
    ids = canonical_row_ids({name: ref.table.column(name) for name in LAY.key}, universe)
    canonical = canonical_row_ids({name: ref.table.column(name) for name in LAY.key})
    families = np.asarray(ref.table.column("family").to_pylist())
    for family in ("linear_solve", "linear_system"):
        assert np.array_equal(ids[families == family], canonical[families == family])
        start = LAY.families.index(family) * N
        assert np.array_equal(ids[families == family], np.arange(start, start + N))
    assert np.array_equal(ids[families == "toy.lin"], np.arange(5 * N, 6 * N))
    assert row_key_of(5 * N, universe).family == "toy.lin" and row_key_of(3 * N, universe).family == "linear_system"
    assert canonical_row_order(universe)[: 5 * N] == canonical_row_order()
    assert Universe.of(["linear_solve"]) == canonical_universe() and Universe.of(LAY.families).is_canonical
    # A canonical family the mixed release lacks is refused on its line; its rows are scored canonical.
    rows = select_rows(ref.table, "SMOKE")
    lines = exact_lines(rows)
    path = tmp_path / "mixed.jsonl"
    write_jsonl(path, lines + [{**lines[0], "family": "ratio_saturation"}])
    (problem,) = read_submission(path, universe).report.problems
    assert (problem.where, problem.expected) == (
        f"line {len(lines) + 1}",
        'one of "linear_solve", "linear_system", "toy.lin"',
    )
    write_jsonl(path, [line for line in lines if line["family"] == "linear_solve"])
    result = invoke(score_cli, path, "--reference", mixed, "--json", "--no-plots", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    (scores,) = json.loads(result.stdout)
    assert "release" not in scores["conditions"] and scores["provenance"]["reference"]["release"] == "Mixed-Release"
    assert scores["overall"]["num_families"] == 1 and list(scores["families"]) == ["linear_solve"]


# -- push, convert, inspect, lm-eval -------------------------------------------------------------------
def test_push_dry_run_of_a_release_of_unknown_families(toy):
    result = invoke(push_cli, toy, "--repo-id", "acme/Toy-Release", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "data/toy.lin.parquet" in result.output and "data/orbit_decay.parquet" in result.output
    assert result.output.rstrip().endswith("Dry run: nothing was sent.")


def test_the_inspect_task_and_convert_on_a_release_of_unknown_families(toy, tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from mathbode.cli.convert import main as convert_cli
    from mathbode.integrations.inspect_tasks import smoke

    table = resolve_reference("all", str(toy)).table
    truth = dict(zip(table.column("prompt").to_pylist(), table.column("ground_truth").to_pylist(), strict=True))

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(
            model="mockllm", content=f"[answer_start] {np.trunc(truth[messages[-1].text] * 1e6) / 1e6:.6f} [answer_end]"
        )
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=answer)
    (log,) = inspect_eval(
        smoke(reference=str(toy)), model=model, log_dir=str(tmp_path / "logs"), display="none", log_realtime=False
    )
    assert log.status == "success", log.error
    assert log.eval.dataset.samples == 512
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == 1.0 and metrics["mb_core_calibrated"] == 1.0
    out = tmp_path / "converted.jsonl"
    # With no reference, the log is read against the release it recorded (issue 40: it was refused,
    # and told to give --reference); given again, the same.
    result = invoke(convert_cli, log.location, "-o", out)
    assert result.exit_code == 0, result.output
    assert f"Reading the log against the reference it recorded: {toy}." in result.output
    assert f"Wrote 512 rows to {out}. Score them: mathbode score {out} --reference {toy}" in result.output
    result = invoke(convert_cli, log.location, "-o", out, "--overwrite", "--reference", toy)
    assert result.exit_code == 0, result.output
    assert f"Wrote 512 rows to {out}. Score them: mathbode score {out} --reference {toy}" in result.output
    assert "Note:" not in result.output
    result = invoke(score_cli, out, "--reference", toy, "--json", "--no-plots", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    (scores,) = json.loads(result.stdout)
    assert scores["overall"]["mb_core_calibrated"] == 1.0 and scores["conditions"]["release"] == "Toy-Release"
    # Scored with no reference, the converted file is refused with the same message.
    result = invoke(score_cli, out, "--no-plots", "--out", tmp_path / "r2")
    assert result.exit_code == 1 and HINT in result.output


def test_the_lm_eval_aggregation_on_a_release_of_unknown_families(toy):
    pytest.importorskip("lm_eval")
    from mathbode.integrations import harness

    docs = harness.load_rows("SMOKE", "all", str(toy))["test"]
    assert len(docs) == 512
    items = []
    for doc in docs:
        response = f"[answer_start] {np.trunc(doc['ground_truth'] * 1e6) / 1e6:.6f} [answer_end]"
        items.append(harness.process_results(doc, [response])["mb_core"])
    assert harness.mb_core_calibrated(items) == 1.0 and harness.compliance(items) == 1.0


@pytest.fixture
def local_hub(monkeypatch, tmp_path):
    """This process's Hub client pointed at the test double (as tests/test_hub.py does)."""
    from .fixtures.fake_hub import FakeHub, point_hub_client_at

    server = FakeHub().start()
    point_hub_client_at(server.endpoint, monkeypatch, tmp_path)
    yield server
    server.stop()


def test_push_to_the_test_hub_then_validate_and_score_against_it(toy, local_hub, tmp_path):
    from .fixtures.fake_hub import WRITE_TOKEN

    result = invoke(push_cli, toy, "--repo-id", "acme/Toy-Release", "--token", WRITE_TOKEN)
    assert result.exit_code == 0, result.output
    result = invoke(validate_cli, "hub:acme/Toy-Release")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("hub:acme/Toy-Release: valid dataset (0 error(s), 4 warning(s))")
    path = tmp_path / "toy.jsonl"
    write_jsonl(path, exact_lines(select_rows(resolve_reference("all", str(toy)).table, "SMOKE")))
    result = invoke(
        score_cli, path, "--reference", "hub:acme/Toy-Release", "--json", "--no-plots", "--out", tmp_path / "r"
    )
    assert result.exit_code == 0, result.output
    (scores,) = json.loads(result.stdout)
    assert scores["conditions"]["release"] == "Toy-Release"
    assert scores["conditions"]["release_content_hash"] == toy_hash(toy)
    assert scores["provenance"]["reference"]["source"] == "hub:acme/Toy-Release"
    assert scores["overall"]["mb_core_calibrated"] == 1.0
