"""What PAIRED costs on a paired release of N problems a family (docs/variants.md, "Many problems").

The table in the docs is recomputed here as `mathbode run --dry-run` computes it (`runner.cost.
estimate` over the rows PAIRED selects), for the canonical five and their GAP variants at N = 30
and 100. Building those releases whole takes minutes (every problem holds the full grid), so the
rows PAIRED asks are made alone, from the same drawn families; a small release built whole shows
that those rows, and their dry run, are the release's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.families import FAMILIES, gap_families
from mathbode.builder.rows import family_table
from mathbode.builder.splits import drawn_family
from mathbode.cli.build import main as build_cli
from mathbode.cli.run import main as run_cli
from mathbode.runner.config import RunConfig
from mathbode.runner.cost import Cost, estimate
from mathbode.schema.layout import layout
from mathbode.schema.release_reference import release_reference
from mathbode.schema.selection import select_rows
from mathbode.schema.splits import PROBLEMS_SEED

DOC = Path(__file__).resolve().parent.parent / "docs" / "variants.md"
START, END = "<!-- paired-cost: start (tests/test_paired_cost.py) -->", "<!-- paired-cost: end -->"
ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}


def paired_rows(originals: list[str], questions: int) -> list[dict]:
    """The rows PAIRED asks of `mathbode-build --variants gap --families ORIGINALS --questions N`, in
    its families' order: the families drawn as the build draws them, only the PAIRED sweep made."""
    lay = layout(questions=questions)
    sweeps = tuple({s for _, s in lay.preset_grid("PAIRED")})
    families, _ = gap_families([FAMILIES[name] for name in originals])
    drawn: dict = {}
    rows: list[dict] = []
    for family in families:
        drawn[family.name] = drawn_family(family, PROBLEMS_SEED, drawn, questions)
        rows += family_table(drawn[family.name], lay, sweeps).to_pylist()
    return rows


def cost_table(costs: dict[int, tuple[Cost, Cost]]) -> str:
    """The docs' table: per N, the run without and with --dedupe (estimated tokens, no --tokenizer)."""
    lines = [
        "| problems a family | rows | distinct prompts | requests | prompt tokens | completion tokens (at least) |",
        "|---|---|---|---|---|---|",
    ]
    for n, pair in costs.items():
        for label, cost in zip((f"{n}", f"{n}, `--dedupe`"), pair, strict=True):
            lines.append(
                f"| {label} | {cost.rows:,} | {cost.distinct_prompts:,} | {cost.requests:,} | "
                f"{cost.prompt_tokens:,} | {cost.completion_tokens_min:,} |"
            )
    return "\n".join(lines)


def both(rows: list[dict]) -> tuple[Cost, Cost]:
    return estimate(rows, RunConfig(model="m")), estimate(rows, RunConfig(model="m", dedupe=True))


def test_the_cost_table_in_the_docs_is_the_dry_runs():
    canonical = list(layout().families)
    costs = {n: both(paired_rows(canonical, n)) for n in (30, 100)}
    for n, (plain, deduped) in costs.items():
        # N problems x 30 families (5 originals, 4 surfaces and a kernel each) x 64 steps, 9 values of p a sweep.
        assert plain.rows == deduped.rows == n * 30 * 64 and plain.requests == plain.rows
        assert plain.distinct_prompts == deduped.requests == n * 30 * 9
        assert plain.problems == n
    text = DOC.read_text()
    found = re.search(re.escape(START) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    assert found, f"docs/variants.md has no table between {START} and {END}"
    expected = cost_table(costs)
    assert found.group(1) == expected, f"docs/variants.md's PAIRED cost table is stale; it is now:\n{expected}"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A paired release of 4 problems a family, built whole."""
    out = tmp_path_factory.mktemp("cost") / "gap-4"
    argv = ["--variants", "gap", "--questions", "4", "--families", "ratio_saturation", "--out", str(out), "-q"]
    assert CliRunner().invoke(build_cli, argv).exit_code == 0
    return out


@pytest.mark.parametrize("dedupe", [False, True])
def test_the_rows_made_alone_are_the_releases_and_cost_what_its_dry_run_says(small, dedupe):
    out = small
    ref = release_reference(out, None)
    selected = select_rows(ref.table, "PAIRED", ref.universe)
    made = paired_rows(["ratio_saturation"], 4)
    assert selected == made and len(made) == 4 * 6 * 64
    cost = estimate(made, RunConfig(model="m", dedupe=dedupe))
    argv = ["--model", "m", "--preset", "PAIRED", "--reference", str(out), "--dry-run"]
    result = CliRunner().invoke(run_cli, [*argv, *(["--dedupe"] if dedupe else [])], env=ENV)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1:] == cost.lines()
