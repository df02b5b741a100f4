"""docs/multitone.md's cost table is made from `mathbode run --dry-run`, so it cannot go stale
(issue 50, section 1: it assumed a run-in of 64 after the default became 8). A changed default,
prompt or estimate fails this test with the table the dry run gives now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release
from mathbode.cli.run import main as run_cli
from mathbode.runner.config import DEFAULT_HISTORY
from mathbode.runner.run_in import DEFAULT_RUN_IN
from mathbode.schema.layout import layout

DOC = Path(__file__).resolve().parent.parent / "docs" / "multitone.md"
HEADER = [
    "| preset | protocol | rows | requests | prompt tokens | Bode points | requests per Bode point |",
    "|---|---|---|---|---|---|---|",
]


def dry_run(*argv: str) -> tuple[int, int, int]:
    """(rows, requests, prompt tokens) as `mathbode run --dry-run` says them, with its defaults."""
    done = CliRunner().invoke(run_cli, ["--model", "MODEL", "--dry-run", *argv])
    assert done.exit_code == 0, done.output
    counts = re.search(r"^([\d,]+) rows, [\d,]+ distinct prompts, ([\d,]+) requests", done.output, re.MULTILINE)
    tokens = re.search(r"^Prompt tokens: ([\d,]+)", done.output, re.MULTILINE)
    assert counts and tokens, done.output
    rows, requests = (int(n.replace(",", "")) for n in counts.groups())
    return rows, requests, int(tokens[1].replace(",", ""))


def cost_rows(multitone: Path) -> list[tuple[str, str, int, int, int, str, int]]:
    """(preset, protocol, rows, requests, prompt tokens, Bode points as shown, Bode points) on the canonical five."""
    lay = layout()
    families = len(lay.families)
    plan = layout("multitone").multitone
    detection = (plan.highest_line - len(plan.excited_lines) + len(plan.products())) * families
    grids = [
        ("SMOKE", ["--preset", "SMOKE"], len({s.frequency_cycles for _, s in lay.preset_grid("SMOKE")}) * families),
        ("FULL", ["--preset", "FULL"], len({s.frequency_cycles for _, s in lay.preset_grid("FULL")}) * families),
        ("multi-tone ALL", ["--preset", "ALL", "--reference", str(multitone)], len(plan.excited_lines) * families),
    ]
    out = []
    for name, argv, points in grids:
        shown = f"{points} (+{detection} distortion levels)" if name.startswith("multi-tone") else str(points)
        for protocol in ("stateless", "sequential"):
            rows, requests, tokens = dry_run(*argv, "--protocol", protocol)
            out.append((name, protocol, rows, requests, tokens, shown, points))
    return out


def table(rows) -> list[str]:
    return [*HEADER] + [
        f"| {name} | {protocol} | {n:,} | {requests:,} | {tokens:,} | {shown} | {requests / points:,.0f} |"
        for name, protocol, n, requests, tokens, shown, points in rows
    ]


def documented() -> list[str]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER[0])
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return lines[start:end]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    release = tmp_path_factory.mktemp("mt") / "mt-release"
    build_release([get_family(f) for f in layout().families], release, drives="multitone")
    return cost_rows(release)


def test_the_documented_cost_table_is_the_dry_runs(rows):
    want = table(rows)
    assert documented() == want, "docs/multitone.md's cost table is stale; the dry run gives:\n" + "\n".join(want)


def test_the_text_around_the_table_says_the_dry_runs_defaults_and_ratios(rows):
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert f"`mathbode run`'s defaults, history {DEFAULT_HISTORY} and run-in {DEFAULT_RUN_IN}" in text
    by = {(name, protocol): (n, requests, tokens) for name, protocol, n, requests, tokens, _, _ in rows}
    full, multitone = by[("FULL", "stateless")], by[("multi-tone ALL", "stateless")]
    more = 100 * (multitone[2] / full[2] - 1)
    assert f"the same {full[0]:,} rows on five families, {more:.1f} % more prompt tokens" in text, f"{more:.1f} %"
    extra = by[("FULL", "sequential")][1] / full[1] - 1
    assert f"the run-in of {DEFAULT_RUN_IN} steps before each sweep, {100 * extra:.1f} % more requests" in text
