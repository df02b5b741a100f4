"""Many problems (issue 48): `mathbode-build --variants gap --questions N` and the PAIRED preset.

A release of N problems a family is built, validated, asked on PAIRED and scored through the real
commands (the stand-in model server as a user starts it); the refusals name the option.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.splits import seeded
from mathbode.cli.batch import main as batch_cli
from mathbode.cli.build import main as build_cli
from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.schema.keys import SweepKey
from mathbode.schema.layout import MAX_QUESTIONS, SINUSOID, Sweep, layout
from mathbode.schema.pairing import PAIRED_FIELDS
from mathbode.schema.release_reference import release_reference
from mathbode.schema.selection import select_rows
from mathbode.schema.universe import canonical_universe

#: Problems a family of the release the flow tests build: more than the layout's three, few
#: enough to build, validate, run and score in seconds.
N = 6
#: linear_solve, its four surface variants and its kernel.
FAMILIES = 6
#: Distinct prompts of one PAIRED sweep: 4 cycles at phase 0 revisit 9 values of p in 64 steps.
DISTINCT_A_SWEEP = 9
ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("many") / "gap-6"
    argv = ["--variants", "gap", "--questions", str(N), "--families", "linear_solve", "--out", str(out), "-q"]
    result = CliRunner().invoke(build_cli, argv)
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--questions", "30"],
            "Invalid value for --questions: draws N problems a family of a paired release: give --variants gap too",
        ),
        (
            ["--variants", "gap", "--questions", "0"],
            "Invalid value for '--questions': 0 is not in the range 2<=x<=1000.",
        ),
        (
            ["--variants", "gap", "--questions", "1"],
            "Invalid value for '--questions': 1 is not in the range 2<=x<=1000.",
        ),
        (
            ["--variants", "gap", "--questions", "-5"],
            "Invalid value for '--questions': -5 is not in the range 2<=x<=1000.",
        ),
        (
            ["--variants", "gap", "--questions", str(10**12)],
            f"Invalid value for '--questions': {10**12} is not in the range 2<=x<=1000.",
        ),
        (
            ["--variants", "gap", "--questions", "many"],
            "Invalid value for '--questions': 'many' is not a valid integer range.",
        ),
        (
            ["--variants", "gap", "--questions", "5", "--drives", "multitone"],
            "Invalid value for --questions: draws problems on the standard grid; --drives multitone builds the "
            "families' own questions",
        ),
    ],
)
def test_questions_is_refused_without_variants_or_out_of_range(tmp_path, argv, message):
    result = CliRunner().invoke(build_cli, [*argv, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_more_problems_than_the_draws_hold_is_a_message(tmp_path):
    # similar_triangles draws s from 2 to 20 in steps of 0.1: 181 values, 3 of them its own questions.
    result = CliRunner().invoke(
        build_cli,
        ["--variants", "gap", "--questions", "500", "--families", "similar_triangles", "--out", str(tmp_path)],
    )
    assert result.exit_code == 2, result.output
    assert (
        "family 'similar_triangles': --questions 500 asks more problems than its draws hold (178 with constants "
        "other than its own questions'): ask fewer, or widen its draws" in " ".join(result.output.split())
    )


def test_the_release_holds_n_problems_a_family_each_variant_paired_row_for_row(release):
    manifest = json.loads((release / "MANIFEST.json").read_text())
    assert manifest["name"] == "MathBode-GAP-N6" and manifest["questions"] == N
    assert manifest["split"] == {"seed": "problems-1"} and manifest["overlap"]["MathBode"]["prompts_in_common"] == 0
    names = ["linear_solve", *(f"linear_solve__{k}" for k in ("dl", "dlc", "dlm", "gs", "kernel"))]
    assert list(manifest["families"]) == names
    # Every problem holds the full grid: 49 sweeps x 64 steps = 3,136 rows.
    assert manifest["num_rows"] == FAMILIES * N * 3136 == 112_896
    tables = {name: pq.read_table(release / "data" / f"{name}.parquet") for name in names}
    for name, table in tables.items():
        assert table.num_rows == N * 3136
        assert sorted(set(table.column("question_id").to_pylist())) == list(range(N)), name
    original = tables["linear_solve"]
    for name in names[1:5]:
        for field in ("family", *PAIRED_FIELDS):
            same = tables[name].column(field).equals(original.column(field))
            assert same == (field != "family"), (name, field)  # every key but the family's name, bit for bit
    # The kernel is drawn too (its own constants and answers), N problems of its own.
    assert manifest["families"]["linear_solve__kernel"]["variant"] == "kernel"
    assert not tables["linear_solve__kernel"].column("ground_truth").equals(original.column("ground_truth"))
    result = CliRunner().invoke(validate_cli, [str(release)])
    assert result.exit_code == 0 and "valid dataset (0 error(s), 0 warning(s))" in result.output, result.output


def test_the_problems_are_distinct_and_the_first_are_a_smaller_releases():
    family = get_family("linear_solve")
    six = seeded(family, "problems-1", 6)
    constants = [tuple(sorted(v.constants.items())) for v in six.variants]
    assert len(constants) == len(set(constants)) == 6
    assert not set(constants) & {tuple(sorted(v.constants.items())) for v in family.variants}
    # Problem q is drawn from the seed and the problems before it: N = 4 is the first four of N = 6.
    assert seeded(family, "problems-1", 4).variants == six.variants[:4]


def test_paired_asks_one_sweep_of_every_problem(release, tmp_path):
    ref = release_reference(release, None)
    assert ref.universe.questions == N and ref.universe.layout.rows_per_family == N * 3136
    rows = select_rows(ref.table, "PAIRED", ref.universe)
    assert len(rows) == N * FAMILIES * 64 == 2304
    assert {(r["signal_type"], r["amplitude_scale"], r["frequency_cycles"], r["phase_deg"]) for r in rows} == {
        ("sinusoid", 1.0, 4.0, 0.0)
    }
    assert {(r["family"], r["question_id"]) for r in rows} == {(f, q) for f in ref.family_hashes for q in range(N)}
    distinct = N * FAMILIES * DISTINCT_A_SWEEP
    assert len({r["prompt"] for r in rows}) == distinct == 324
    # The canonical release: its three problems a family, 3 x 5 families x 64 rows.
    assert len(select_rows(release_reference_canonical(), "PAIRED")) == 3 * 5 * 64
    out = tmp_path / "requests.jsonl"
    result = CliRunner().invoke(prompts_cli, ["--preset", "PAIRED", "--reference", str(release), "-o", str(out)])
    assert result.exit_code == 0 and len(out.read_text().splitlines()) == 2304, result.output
    argv = ["--model", "m", "--preset", "PAIRED", "--reference", str(release)]
    result = CliRunner().invoke(run_cli, [*argv, "--dry-run"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "2,304 rows, 324 distinct prompts, 2,304 requests (stateless)." in result.output
    assert "Problems: 6 a family (the units of the paired scores over problems)." in result.output
    assert "--dedupe would ask 324 requests instead of 2,304." in result.output
    result = CliRunner().invoke(run_cli, [*argv, "--dry-run", "--dedupe"], env=ENV)
    assert "2,304 rows, 324 distinct prompts, 324 requests (stateless)." in result.output
    result = CliRunner().invoke(batch_cli, ["write", *argv, "--dedupe", "-o", str(tmp_path / "batch")])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "batch" / "requests.jsonl").read_text().splitlines()) == 324


def release_reference_canonical():
    from mathbode.schema.packaged import packaged_reference

    return packaged_reference(list(canonical_universe().families)).table


@pytest.fixture(scope="module")
def stub_server(release):
    """The stand-in model server as a user starts it, answering the release's prompts."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mathbode.runner.stub_model", "--port", "0", "--reference", str(release)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        if not (line.startswith("Serving truth, noisy, delay-K") and " at http://127.0.0.1:" in line):
            # Stopped first: reading a running server's stderr would wait for it forever.
            process.kill()
            pytest.fail(f"the stand-in did not start: {line!r} {process.communicate(timeout=10)[1]!r}")
        yield line.split(" at ")[1].split()[0]
    finally:
        process.terminate()
        process.wait(10)


def test_run_on_paired_then_score_over_the_problems(release, stub_server, tmp_path):
    pred = tmp_path / "truth.jsonl"
    argv = ["--model", "truth", "--base-url", stub_server, "--preset", "PAIRED", "--reference", str(release)]
    result = CliRunner().invoke(run_cli, [*argv, "--dedupe", "-o", str(pred)], env=ENV)
    assert result.exit_code == 0, result.output
    assert len(pred.read_text().splitlines()) == 2304
    out = tmp_path / "report"
    result = CliRunner().invoke(score_cli, [str(pred), "--reference", str(release), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    assert scores["preset"] == "PAIRED"
    assert scores["accuracy"]["correct"] == scores["accuracy"]["rows"] == 2304
    by_kind = scores["variants"]["linear_solve"]
    assert set(by_kind) == {"DL", "DLC", "DLM", "GS", "kernel"}
    for entry in by_kind.values():
        # One sweep of each problem on both sides: the pairs are the problems.
        assert entry["shared_sweeps"] == N and entry["shared_rows"] == N * 64
        assert entry["mcnemar_p"] == 1.0  # every row exact on both sides
    for kind in ("DL", "DLC", "DLM", "GS"):
        assert by_kind[kind]["mb_core_diff"] == 0.0  # a surface is its original renamed: the same numbers
    # The kernel's own answers are truncated elsewhere: MB-Core differs only in the last digits.
    assert abs(by_kind["kernel"]["mb_core_diff"]) < 1e-6


def test_the_same_seed_gives_the_same_bytes(release, tmp_path):
    again = tmp_path / "again"
    argv = ["--variants", "gap", "--questions", str(N), "--families", "linear_solve", "--out", str(again), "-q"]
    assert CliRunner().invoke(build_cli, argv).exit_code == 0
    files = sorted(p.relative_to(release) for p in release.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((release / f).read_bytes() == (again / f).read_bytes() for f in files)
    # The card's rebuild command is the one just run (the default seed unnamed).
    assert (
        "<code>mathbode-build --variants gap --families linear_solve --questions 6</code> rebuilds it byte for byte"
        in (release / "README.md").read_text()
    )


def test_validate_checks_the_recorded_number_of_problems(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    manifest = json.loads((copy / "MANIFEST.json").read_text())
    manifest["questions"] = N - 1
    (copy / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    result = CliRunner().invoke(validate_cli, [str(copy)])
    assert result.exit_code == 1
    assert "row-count" in result.output and f"{(N - 1) * 3136:,} rows of linear_solve" in result.output


def test_a_data_file_read_alone_is_checked_on_its_grid(release):
    result = CliRunner().invoke(validate_cli, [str(release / "data" / "linear_solve__gs.parquet")])
    assert result.exit_code == 0, result.output
    assert "a family of 6 problems (mathbode-build --questions): validate its release folder" in " ".join(
        result.output.split()
    )


def test_layout_of_n_problems():
    lay = layout(questions=30)
    assert lay.question_ids == tuple(range(30)) and lay.rows_per_family == 30 * 3136
    assert layout(questions=3) == layout()
    grid = lay.preset_grid("PAIRED")
    assert [q for q, _ in grid] == list(range(30))
    assert {s for _, s in grid} == {Sweep(SINUSOID, 1.0, 4.0, 0.0)}
    for bad in (0, MAX_QUESTIONS + 1):
        with pytest.raises(ValueError, match="a family holds 1 to 1,000 problems"):
            layout(questions=bad)
    # A universe of N problems counts its row ids over them.
    from mathbode.schema.keys import canonical_row_order
    from mathbode.schema.universe import Universe

    universe = Universe.of(["linear_solve"], "MathBode-GAP-N30", questions=30)
    order = canonical_row_order(universe)
    assert len(order) == 5 * 30 * 3136
    assert SweepKey("linear_solve", 29, "step", 2.5, None, None).row(63) == order[30 * 3136 - 1]


def test_baseline_draws_the_problems_again_and_scores_exact(release, tmp_path):
    from mathbode.cli.baseline import main as baseline_cli

    lines = tmp_path / "baseline.jsonl"
    argv = ["--preset", "PAIRED", "--reference", str(release), "-o", str(lines)]
    result = CliRunner().invoke(baseline_cli, argv)
    assert result.exit_code == 0, result.output
    assert len(lines.read_text().splitlines()) == 2304
    out = tmp_path / "report"
    result = CliRunner().invoke(score_cli, [str(lines), "--reference", str(release), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    # Every surface variant's answer is its original's (drawn as the build drew it, renamed).
    assert scores["preset"] == "PAIRED" and scores["accuracy"]["correct"] == scores["accuracy"]["rows"] == 2304


def test_a_file_of_many_problems_read_row_by_row_names_only_what_is_wrong(tmp_path):
    # One non-finite p sends the file to the row-by-row check: it must name that row, not call
    # every row of problem 3 onwards out of the schema (question_ids beyond the layout's three).
    import math
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from mathbode.builder.families import gap_families, resolve_families
    from mathbode.builder.release import build_release
    from mathbode.builder.splits import SplitPlan
    from mathbode.schema.dataset import validate_dataset

    out = tmp_path / "n4"
    families, _ = gap_families(resolve_families("linear_solve"))
    build_release(families[:1], out, split=SplitPlan("mathbode-problems-v1"), questions=4)
    path = out / "data" / "linear_solve.parquet"
    table = pq.read_table(path)
    values = table.column("p_value").to_pylist()
    values[9500] = math.nan  # a row of problem 3
    pq.write_table(table.set_column(table.schema.get_field_index("p_value"), "p_value", pa.array(values)), path)
    report = validate_dataset(out)
    codes = {(p.code, p.field) for p in report.errors}
    assert ("non-finite", "p_value") in codes
    assert not any(p.code == "schema" for p in report.errors), report.format_text()
    assert not any(p.code in ("incomplete-sweep", "extra-sweep", "row-count") for p in report.errors), (
        report.format_text()
    )
    shutil.rmtree(out)
