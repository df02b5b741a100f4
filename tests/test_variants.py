"""GAP surface and kernel variants: names, row-by-row invariance, the paired release, paired scores."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from mathbode.builder.families import EXTENDED, FAMILIES, KERNELS, gap_families, get_family
from mathbode.builder.families.check import check_family
from mathbode.builder.families.variants import (
    SURFACE_KINDS,
    name_problems,
    surface_names,
    surface_problems,
    surface_variant,
)
from mathbode.builder.rows import family_table
from mathbode.cli.build import main as build_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.cli.validate import main as validate_cli
from mathbode.evaluator.scorer.variants import exact_mcnemar
from mathbode.evaluator.table import Table
from mathbode.schema.pairing import PAIRED_FIELDS

PAIRED = "linear_solve,ratio_saturation"


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_surface_row_keeps_its_original_bit_for_bit(name, tables):
    """The invariance over every row: keys, p_value and truth bit for bit, numbers in order, names undone."""
    original = tables[name]
    for kind in SURFACE_KINDS:
        variant = surface_variant(FAMILIES[name], kind)
        table = family_table(variant)
        assert surface_problems(original, variant, table) == []
        for field in PAIRED_FIELDS:
            assert table.column(field).equals(original.column(field)), (kind, field)
        assert table.column("prompt") != original.column("prompt")
        assert all(new in table.column("prompt")[0].as_py() for new in variant.renamed.values())


def test_names_are_seeded_and_recorded():
    family = FAMILIES["linear_solve"]
    assert surface_names(family, "GS") == surface_names(family, "GS", "gap-1")
    assert surface_names(family, "GS", "other") != surface_names(family, "GS")
    dl = surface_names(family, "DL")
    assert dl["x"] == "unknown_amount" and set(dl) == {"a", "b", "c", "x"}
    dlc = surface_names(family, "DLC")
    assert len({n.rsplit("_", 1)[0] for n in dlc.values()}) == 1  # one stem: easily confused
    dlm = surface_names(family, "DLM")
    assert all(not n.startswith(family.renamable[t].replace(" ", "_")) for t, n in dlm.items())  # a wrong role


def test_a_colliding_name_is_refused():
    family = FAMILIES["linear_solve"]
    problems = name_problems(family, {"a": "Solve", "b": "x1", "c": "answer_start", "x": "solve"})
    assert any("'Solve' (for 'a') is already a word" in p for p in problems)
    assert any("'x1'" in p and "letters" in p for p in problems)
    assert any("answer format's tags" in p for p in problems)
    assert any("names both" in p for p in problems)


def test_a_broken_surface_is_caught_row_by_row(tables):
    variant = surface_variant(FAMILIES["linear_solve"], "GS")
    table = family_table(variant)
    shifted = table.set_column(
        table.schema.get_field_index("ground_truth"),
        "ground_truth",
        [np.nextafter(table.column("ground_truth").to_numpy(), np.inf)],
    )
    assert any(
        "ground_truth" in p and "9408 rows differ" in p
        for p in surface_problems(tables["linear_solve"], variant, shifted)
    )


def test_kernels_pass_their_check_and_name_their_original():
    assert len(KERNELS) == 10
    originals = {k.variant_of for k in KERNELS.values()}
    assert set(FAMILIES) <= originals and len(originals & set(EXTENDED)) == 5
    for kernel in KERNELS.values():
        report = check_family(kernel)
        assert report.passed, report.format_text()
        assert kernel.variant == "kernel"
    assert get_family("linear_solve__gs").variant_of == "linear_solve"


def test_gap_families_order():
    families, said = gap_families([FAMILIES["linear_solve"]])
    assert [f.name for f in families] == [
        "linear_solve",
        "linear_solve__dl",
        "linear_solve__dlc",
        "linear_solve__dlm",
        "linear_solve__gs",
        "linear_solve__kernel",
    ]
    assert said == []


@pytest.fixture(scope="module")
def paired(tmp_path_factory):
    out = tmp_path_factory.mktemp("gap") / "paired"
    result = CliRunner().invoke(build_cli, ["--variants", "gap", "--families", PAIRED, "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def test_paired_release_manifest_and_rows(paired):
    manifest = json.loads((paired / "MANIFEST.json").read_text())
    assert manifest["name"] == "MathBode-GAP" and manifest["num_rows"] == 12 * 9408
    entries = manifest["families"]
    assert len(entries) == 12
    for name, entry in entries.items():
        if "__" not in name:
            assert "variant_of" not in entry
            continue
        original, kind = name.split("__")
        assert entry["variant_of"] == original and entry["variant"] == ("kernel" if kind == "kernel" else kind.upper())
        if kind != "kernel":
            assert entry["surface"]["seed"] == "gap-1"
            mine, theirs = (pq.read_table(paired / "data" / f"{n}.parquet") for n in (name, original))
            for field in PAIRED_FIELDS:
                assert mine.column(field).equals(theirs.column(field))
    result = CliRunner().invoke(validate_cli, [str(paired)])
    assert result.exit_code == 0 and "valid dataset (0 error(s)" in result.output


def _run_and_score(paired, tmp_path, model, gs_names=()):
    from mathbode.builder.oracle import baseline_lines
    from mathbode.schema.release_reference import release_reference
    from mathbode.schema.selection import select_rows

    from .fixtures.stub_openai import StubOpenAI

    # The exact answer of each distinct prompt of MVP (the oracle is exact, not fast: once a prompt).
    rows = list({r["prompt"]: r for r in select_rows(release_reference(paired, None).table, "MVP")}.values())
    answers = {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)}
    stub = StubOpenAI(answers, gs_names=tuple(gs_names)).start()
    try:
        pred = tmp_path / f"{model}.jsonl"
        argv = ["--base-url", stub.base_url, "-o", str(pred), "--model", model, "--preset", "MVP"]
        result = CliRunner().invoke(
            run_cli, [*argv, "--reference", str(paired), "--concurrency", "16"], env={"OPENAI_API_KEY": None}
        )
        assert result.exit_code == 0, result.output
    finally:
        stub.stop()
    out = tmp_path / f"{model}-report"
    result = CliRunner().invoke(score_cli, [str(pred), "--reference", str(paired), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    scores["console"] = result.output  # what the user read, for the tests of the paired table
    scores["report"] = (out / "report.md").read_text()
    return scores


def _pooled_line(scores, kind):
    """The console's line of GAP's headline for `kind`, parsed: (difference, low, high) in pp."""
    line = next(x for x in scores["console"].splitlines() if x.startswith(f"  {kind} ") and " pp " in x)
    points, bounds = line.split(" pp [")
    low, high = bounds.split("]")[0].split(", ")
    return float(points.split()[-1]), float(low), float(high), line


def test_name_invariant_model_reads_zero_on_every_surface(paired, tmp_path):
    scores = _run_and_score(paired, tmp_path, "numbers")
    variants = scores["variants"]
    assert set(variants) == {"linear_solve", "ratio_saturation"}
    for by_kind in variants.values():
        assert set(by_kind) == {"DL", "DLC", "DLM", "GS", "kernel"}
        for kind in SURFACE_KINDS:
            entry = by_kind[kind]
            assert entry["kind"] == "surface"
            assert entry["mb_core_diff"] == 0.0 and entry["mcnemar_p"] == 1.0
            assert entry["exact_share_original"] == entry["exact_share_variant"] > 0.3
            low, high = entry["mb_core_diff_interval"]
            assert low <= 0.0 <= high
        assert by_kind["kernel"]["kind"] == "kernel"
    # Read in pairs: the headline over the two originals, each surface kind's pooled difference 0.
    assert scores["overall"]["num_families"] == 2 and len(scores["families"]) == 12
    for kind in SURFACE_KINDS:
        pooled = scores["variants_pooled"][kind]
        assert pooled["mb_core_diff"] == 0.0 and pooled["families"] == ["linear_solve", "ratio_saturation"]
        low, high = pooled["mb_core_diff_interval"]
        assert low <= 0.0 <= high
        # One problem (MVP): the units are the shared sweeps, 6 a family, as each family's are.
        assert pooled["unit"] == "sweep" and pooled["n_units"] == 12
        points, low_pp, high_pp, line = _pooled_line(scores, kind)
        assert points == 0.0 and low_pp <= 0.0 <= high_pp, line
        assert "mean over 2 families; 95 % paired t interval over 12 sweeps" in line
        assert f"- {line.strip()}" in scores["report"]
    # The site's page of the pair: the headline, the paired table with its McNemar counts, and one
    # Bode pair of plots an original (its curves beside its variants').
    from mathbode.cli.site import main as site_cli

    site = tmp_path / "site"
    result = CliRunner().invoke(site_cli, [str(tmp_path / "numbers-report"), "-o", str(site)])
    assert result.exit_code == 0, result.output
    (page,) = (site / "paired").glob("*.html")
    html = page.read_text()
    assert "GS 0.0 pp [0.0, 0.0]" in html and "McNemar p (Holm) [discordant]" in html
    assert html.count('id="paired-0-gain"') == 1 and 'id="paired-1-phase"' in html
    assert "GS: linear_solve__gs" in html and "kernel: ratio_saturation__kernel" in html
    assert f'href="../paired/{page.name}"' in (site / "submissions" / page.name).read_text()
    # A document saved before the pooled headline existed still renders: its pairs, no headline.
    from mathbode.evaluator.presentation.console import table_text
    from mathbode.evaluator.presentation.report import render_report
    from mathbode.evaluator.results import from_document

    document = json.loads((tmp_path / "numbers-report" / "results.json").read_text())
    del document["scores"]["variants_pooled"]
    (old,) = render_report([document], [], tmp_path / "old-report")
    text = table_text([old], [])
    assert " pp [" not in text and "  linear_solve      GS       surface" in text
    assert "| linear_solve | GS | surface |" in (tmp_path / "old-report" / "report.md").read_text()
    assert from_document(document)[0].extra.get("variants_pooled") is None


def test_gs_only_degradation_shows_on_gs_alone(paired, tmp_path):
    manifest = json.loads((paired / "MANIFEST.json").read_text())
    gs = [n for e in manifest["families"].values() if e.get("variant") == "GS" for n in e["surface"]["names"].values()]
    scores = _run_and_score(paired, tmp_path, "gsgain-1.3", gs)
    for original, by_kind in scores["variants"].items():
        low, high = by_kind["GS"]["mb_core_diff_interval"]
        assert by_kind["GS"]["mb_core_diff"] < 0 and high < 0, (original, by_kind["GS"])
        # A gain of 1.3 on every GS row; the original's own errors (0.1 % noise on half its rows) stay.
        assert 0.2 <= by_kind["GS"]["gain_error_diff"] <= 0.35
        assert by_kind["GS"]["exact_share_variant"] == 0.0 and by_kind["GS"]["exact_share_original"] > 0.3
        # Counted in units: MVP asks one problem, so the units are its distinct prompts (each asked
        # in several rows, counted once). Every prompt the original answers exactly the GS variant
        # misses: n discordant units, all one way, exact McNemar p = 2 / 2^n.
        gs = by_kind["GS"]
        assert gs["unit"] == "distinct prompt" and gs["problems"] == [0] and gs["n_units"] == gs["distinct_prompts"]
        assert gs["only_variant_exact"] == 0 and gs["only_original_exact"] == gs["units_exact_original"] >= 5
        assert gs["mcnemar_p"] == 2.0 ** (1 - gs["only_original_exact"])
        assert gs["mcnemar_tests"] == 10 and gs["mcnemar_p_holm"] >= gs["mcnemar_p"]
        for kind in ("DL", "DLC", "DLM"):
            entry = by_kind[kind]
            assert entry["mb_core_diff"] == 0.0 and entry["mcnemar_p"] == 1.0
            assert entry["mb_core_diff_interval"][0] <= 0.0 <= entry["mb_core_diff_interval"][1]
    # GAP's headline: GS pooled over the two families is their differences' mean, its interval
    # excludes 0; the names the model ignores read 0.
    gs_pooled = scores["variants_pooled"]["GS"]
    per_family = [by_kind["GS"]["mb_core_diff"] for by_kind in scores["variants"].values()]
    assert gs_pooled["mb_core_diff"] == pytest.approx(sum(per_family) / 2, abs=1e-12)
    assert -0.55 < gs_pooled["mb_core_diff"] < -0.45 and gs_pooled["mb_core_diff_interval"][1] < 0
    points, low, high, line = _pooled_line(scores, "GS")
    assert points == round(100 * gs_pooled["mb_core_diff"], 1) and low <= points <= high < 0, line
    for kind in ("DL", "DLC", "DLM"):
        assert _pooled_line(scores, kind)[0] == 0.0
    assert scores["overall"]["num_families"] == 2
    # The console's paired table: one row a pair, under the report's heads; GS's adjusted p marked.
    console = scores["console"].splitlines()
    head = next(i for i, x in enumerate(console) if x.startswith("  family") and "McNemar p (Holm)" in x)
    rows = [x.split() for x in console[head + 1 : head + 11]]
    assert [(r[0], r[1]) for r in rows] == [
        (f, k) for f in ("linear_solve", "ratio_saturation") for k in ("DL", "DLC", "DLM", "GS", "kernel")
    ]
    # The family table keeps its columns under a long name (ratio_saturation__kernel: 24 letters).
    table = console[console.index(next(x for x in console if x.startswith("family "))) :][:13]
    assert {len(x) for x in table} == {len(table[0])} and table[-1].startswith("ratio_saturation__kernel ")


def test_the_stand_in_serves_a_paired_release_with_its_garbled_names(paired):
    """`python -m mathbode.runner.stub_model --reference gap` (the README's GAP recipe) reads the GS
    names from the release's manifest: `gsgain-1.3` answers 1.3 x `numbers` on a GS prompt alone."""
    import random
    import re

    from mathbode.runner.stub_model import StubModel, systems_of
    from mathbode.schema.release_reference import release_reference

    manifest = json.loads((paired / "MANIFEST.json").read_text())
    gs = {n for e in manifest["families"].values() if e.get("variant") == "GS" for n in e["surface"]["names"].values()}
    model = StubModel(systems_of(str(paired)))
    assert set(model.systems.gs_names) == gs and gs
    rows = release_reference(paired, ["linear_solve__gs", "linear_solve__dl"]).table.to_pylist()
    for row in (rows[0], rows[-1]):  # a GS row and a DL row: the same numbers, other names
        rng = random.Random(" ".join(re.findall(r"\d+(?:\.\d+)?", row["prompt"])))
        rng.random()
        noisy = row["ground_truth"] * (1 + 0.001 * rng.gauss(0, 1))
        gain = 1.3 if row["family"].endswith("__gs") else 1.0
        answer = model.answer("gsgain-1.3", [{"role": "user", "content": row["prompt"]}])
        if gain == 1.3:
            assert answer == f"[answer_start] {gain * noisy:.6f} [answer_end]"
        else:
            assert answer == model.answer("numbers", [{"role": "user", "content": row["prompt"]}])


def test_exact_mcnemar():
    assert exact_mcnemar(0, 0) == 1.0
    assert exact_mcnemar(5, 5) == 1.0
    assert exact_mcnemar(10, 0) == pytest.approx(2 / 2**10)


def _delayed_sweeps(rng: np.random.Generator, delays: dict[str, float], noise: float) -> Table:
    """MVP-shaped sweeps (4, 8 and 16 cycles, 2 questions) of pure delays, one per family, with noise."""
    rows = []
    for family, d in delays.items():
        for frequency in (4.0, 8.0, 16.0):
            for question in (0, 1):
                h = np.exp(-1j * 2 * np.pi * frequency / 64 * d) * (1 + noise * rng.standard_normal())
                rows.append(
                    {"family": family, "question_id": question, "signal_type": "sinusoid", "amplitude_scale": 1.0}
                    | {"frequency_cycles": frequency, "phase_deg": 0.0}
                    | {"gain": float(abs(h)), "phase_err_deg": float(np.degrees(np.angle(h)))}
                )
    return Table.from_rows(rows)


def test_dynamics_difference_reads_the_added_delay():
    from mathbode.evaluator.scorer.dynamics import dynamics_difference

    sweeps = _delayed_sweeps(np.random.default_rng(7), {"f": 0.0, "g": 2.0}, 0.0)
    mine = sweeps.take(np.flatnonzero(sweeps["family"] == "g"))
    theirs = sweeps.take(np.flatnonzero(sweeps["family"] == "f"))
    mine["family"] = ["f"] * len(mine)
    found = dynamics_difference(mine, theirs)
    # The delay search resolves to 1e-4 steps (a parabola through a 0.05-step grid).
    assert found["delay_diff_steps"] == pytest.approx(2.0, abs=1e-3)
    assert found["delay_period_steps"] == 16.0
    # Noiseless pairs: every resample is the point itself, so the interval is the point.
    assert found["delay_diff_interval"] == pytest.approx([found["delay_diff_steps"]] * 2)
    assert found["time_constant_diff_steps"] > 0  # a lag reads as a longer memory
    same = dynamics_difference(theirs, theirs)
    assert same["delay_diff_steps"] == 0.0 and same["time_constant_diff_steps"] == 0.0
    assert same["delay_diff_interval"] == [0.0, 0.0]
    one = dynamics_difference(mine.take([0]), theirs.take([0]))
    assert one == {"dynamics_diff_note": "not measured: the pair shares answers at fewer than two frequencies"}


def test_sequential_delay_is_the_same_on_original_and_variants(paired, tmp_path):
    """A stub that answers the truth of 2 turns back, sequential: every variant's delay difference is 0."""
    from mathbode.builder.oracle import baseline_lines
    from mathbode.schema.release_reference import release_reference
    from mathbode.schema.selection import select_rows

    from .fixtures.stub_openai import StubOpenAI

    families = "linear_solve,linear_solve__gs,linear_solve__dl"
    rows = [r for r in select_rows(release_reference(paired, None).table, "MVP") if r["family"] in families.split(",")]
    rows = list({r["prompt"]: r for r in rows}.values())
    answers = {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)}
    stub = StubOpenAI(answers).start()
    try:
        pred = tmp_path / "delay.jsonl"
        argv = ["--base-url", stub.base_url, "-o", str(pred), "--model", "delay-2", "--preset", "MVP"]
        argv += ["--families", families, "--protocol", "sequential", "--reference", str(paired), "--concurrency", "8"]
        result = CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None})
        assert result.exit_code == 0, result.output
    finally:
        stub.stop()
    out = tmp_path / "report"
    result = CliRunner().invoke(score_cli, [str(pred), "--reference", str(paired), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    assert scores["dynamics"]["linear_solve"]["delay_steps"] == pytest.approx(2.0, abs=0.05)
    by_kind = scores["variants"]["linear_solve"]
    assert set(by_kind) == {"GS", "DL"}
    for entry in by_kind.values():
        # The same truths two turns back on both sides: the same responses, so exactly the same fits.
        assert entry["delay_diff_steps"] == 0.0 and entry["time_constant_diff_steps"] == 0.0
        assert entry["delay_diff_interval"] == [0.0, 0.0]
    report = (out / "report.md").read_text()
    assert (
        "delay diff (steps) [95 %]" in report
        and "| 1.0000 (1.0000) [0/0] | 0.00 [+0.00, +0.00] | 0.00 [+0.00, +0.00] |" in report
    )


def _copy_release(paired, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(paired, out)
    return out


def test_validate_rechecks_the_pairing_row_by_row(paired, tmp_path):
    import pyarrow as pa

    release = _copy_release(paired, tmp_path)
    path = release / "data" / "linear_solve__gs.parquet"
    table = pq.read_table(path)
    truth = table.column("ground_truth").to_numpy().copy()
    truth[5] = np.nextafter(truth[5], np.inf)  # one bit of one row
    table = table.set_column(table.schema.get_field_index("ground_truth"), "ground_truth", pa.array(truth))
    pq.write_table(table, path)
    result = CliRunner().invoke(validate_cli, [str(release)])
    assert result.exit_code != 0
    assert "data/linear_solve__gs.parquet" in result.output
    assert "row 5: ground_truth is" in result.output and "(1 rows differ)" in result.output
    assert "equal to its original's (linear_solve)" in result.output


def test_validate_names_a_variant_without_its_original(paired, tmp_path):
    release = _copy_release(paired, tmp_path)
    manifest = json.loads((release / "MANIFEST.json").read_text())
    entry = manifest["families"].pop("ratio_saturation")
    for rel in entry["files"]:
        manifest["files"].pop(rel)
        (release / rel).unlink()
    (release / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    result = CliRunner().invoke(validate_cli, [str(release)])
    assert result.exit_code != 0
    for kind in ("dl", "dlc", "dlm", "gs", "kernel"):
        assert f"ratio_saturation__{kind} is a variant of 'ratio_saturation', which the release does not hold" in (
            result.output
        )
    assert "mathbode-build --variants gap --families ratio_saturation" in result.output


def test_batch_write_and_dry_run_dedupe_say_the_paired_release_cost(paired, tmp_path):
    from mathbode.cli.batch import main as batch_cli
    from mathbode.schema.release_reference import release_reference
    from mathbode.schema.selection import select_rows

    rows = select_rows(release_reference(paired, None).table, "MVP")
    # MVP: 3 frequencies x 2 sweeps x 64 steps of each of the 12 families (2 originals, 4 surfaces and a kernel each).
    assert len(rows) == 12 * 384 == 4608
    distinct = len({r["prompt"] for r in rows})
    said = f"4,608 rows, {distinct:,} distinct prompts, {distinct:,} requests (stateless)."
    argv = ["--model", "m", "--preset", "MVP", "--reference", str(paired), "--dedupe"]
    result = CliRunner().invoke(run_cli, [*argv, "--dry-run"], env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.output
    assert said in result.output and "Prompt tokens: " in result.output and "nothing is asked" in result.output
    result = CliRunner().invoke(batch_cli, ["write", *argv, "-o", str(tmp_path / "batch")])
    assert result.exit_code == 0, result.output
    assert said in result.output
    requests = (tmp_path / "batch" / "requests.jsonl").read_text().splitlines()
    assert len(requests) == distinct
    # Without --dedupe every row is a request: the paired release multiplies the cost by its families.
    result = CliRunner().invoke(run_cli, [*argv[:-1], "--dry-run"], env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0 and f"4,608 rows, {distinct:,} distinct prompts, 4,608 requests" in result.output


def test_a_fresh_split_of_the_paired_release_keeps_each_surface_row_paired(tmp_path):
    out = tmp_path / "split"
    argv = ["--variants", "gap", "--families", "linear_solve", "--seed", "gap-test", "--out", str(out), "-q"]
    result = CliRunner().invoke(build_cli, argv)
    assert result.exit_code == 0, result.output
    # The built-in kernels declare draws: drawn like any family, with questions of their own.
    assert "left out" not in result.output
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["name"] == "MathBode-GAP-split-gap-test" and manifest["split"] == {"seed": "gap-test"}
    kinds = ("dl", "dlc", "dlm", "gs", "kernel")
    assert list(manifest["families"]) == ["linear_solve", *(f"linear_solve__{k}" for k in kinds)]
    kernel = pq.read_table(out / "data" / "linear_solve__kernel.parquet")
    assert not kernel.column("prompt").equals(family_table(KERNELS["linear_solve__kernel"]).column("prompt"))
    original = pq.read_table(out / "data" / "linear_solve.parquet")
    for kind in SURFACE_KINDS:
        entry = manifest["families"][f"linear_solve__{kind.lower()}"]
        # The names are the paired release's (the surface seed), the numbers the split's.
        assert entry["surface"] == {"seed": "gap-1", "names": surface_names(FAMILIES["linear_solve"], kind)}
        table = pq.read_table(out / "data" / f"linear_solve__{kind.lower()}.parquet")
        for field in PAIRED_FIELDS:
            a = table.column(field).to_numpy(zero_copy_only=False)
            b = original.column(field).to_numpy(zero_copy_only=False)
            same = a.view(np.int64) == b.view(np.int64) if a.dtype == np.float64 else a == b
            assert same.all(), (kind, field)
    # Drawn anew: the split's truth is not the canonical family's.
    packaged = family_table(FAMILIES["linear_solve"]).column("ground_truth").to_numpy()
    assert not np.array_equal(original.column("ground_truth").to_numpy(), packaged)
    result = CliRunner().invoke(validate_cli, [str(out)])
    assert result.exit_code == 0 and "valid dataset (0 error(s)" in result.output, result.output
