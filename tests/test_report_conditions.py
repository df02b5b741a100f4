"""report.md names its conditions and provenance (issue #30, section 6), and its tables are
tables to a real Markdown parser (a `|` inside a column name split the main table's header)."""

from __future__ import annotations

import hashlib

from click.testing import CliRunner
from markdown_it import MarkdownIt

from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli

ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}


def _tables(markdown: str) -> list[tuple[int, list[int]]]:
    """Each table's header cell count and every body row's cell count."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables, header, rows, cells, inside_head = [], 0, [], 0, False
    for token in tokens:
        if token.type == "thead_open":
            inside_head = True
        elif token.type == "thead_close":
            inside_head = False
        elif token.type == "tr_open":
            cells = 0
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            if inside_head:
                header = cells
            else:
                rows.append(cells)
        elif token.type == "table_close":
            tables.append((header, rows))
            rows = []
    return tables


def test_a_sequential_report_says_how_it_was_asked_and_what_scored_it(truth_stub, tmp_path):
    out = tmp_path / "seq.jsonl"
    argv = ["--base-url", truth_stub.base_url, "--model", "anchor-0.5", "-o", str(out), "--preset", "SMOKE"]
    argv += ["--protocol", "sequential", "--history", "6", "--run-in", "4", "--concurrency", "16"]
    result = CliRunner().invoke(run_cli, argv, env=ENV)
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(score_cli, [str(out), "--out", str(tmp_path / "rep"), "--no-plots"], env=ENV)
    assert result.exit_code == 0, result.output
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "- Asked: protocol sequential, history 6, run-in 4 steps, answer format free, prompting zero-shot." in report
    assert "parser strict (paper appendix C;" in report
    assert "- Reference rows: builder, content hash `sha256:" in report
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert f"- Input: `{out}`, `sha256:{digest}`." in report
    tables = _tables(report)
    assert len(tables) == 3  # families, frequencies, dynamics (SMOKE has no mirrored pairs)
    for header, rows in tables:
        assert rows and all(n == header for n in rows), (header, rows)
    assert any(header == 10 for header, _ in tables)  # the per-family table, |G-1| mid and all


def test_a_stateless_report_says_stateless(reference, tmp_path):
    from mathbode.builder.oracle import baseline_lines
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema.selection import select_rows

    write_jsonl(tmp_path / "exact.jsonl", list(baseline_lines(select_rows(reference.table, "SMOKE"))))
    result = CliRunner().invoke(score_cli, [str(tmp_path / "exact.jsonl"), "--out", str(tmp_path / "r"), "--no-plots"])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "r" / "report.md").read_text()
    assert "- Asked: protocol stateless, answer format free, prompting zero-shot." in report
    # A cell's sweeps start at 0, 120 and 240 degrees: the mean of their absolute phases means nothing.
    header = (tmp_path / "r" / "frequency_summary.csv").read_text().splitlines()[0].split(",")
    assert "phase_err_deg" in header and "h2_over_h1_truth" in header
    assert "phase_truth_deg" not in header and "phase_model_deg" not in header
    for header, rows in _tables(report):
        assert all(n == header for n in rows)


def test_a_preset_the_file_does_not_answer_is_refused_and_a_transient_preset_cites_no_mb_plus(reference, tmp_path):
    """`--preset CHIRP_STEP` on a file with no chirp or step rows exited 0 with an all-n/a report."""
    from mathbode.builder.oracle import baseline_lines
    from mathbode.core.atomic import write_jsonl
    from mathbode.schema.selection import select_rows

    write_jsonl(tmp_path / "smoke.jsonl", list(baseline_lines(select_rows(reference.table, "SMOKE"))))
    argv = [str(tmp_path / "smoke.jsonl"), "--preset", "CHIRP_STEP", "--out", str(tmp_path / "r"), "--no-plots"]
    result = CliRunner().invoke(score_cli, argv)
    assert result.exit_code == 2 and not (tmp_path / "r").exists()
    assert (
        "symbolic-baseline: answers none of the rows of preset CHIRP_STEP (it answers sinusoid rows, 20 sweeps); "
        "score it without --preset, or with the preset it answers." in result.output
    )
    rows = [r for r in select_rows(reference.table, "CHIRP_STEP") if r["family"] == "linear_solve"]
    write_jsonl(tmp_path / "one.jsonl", list(baseline_lines(rows)))
    argv = [str(tmp_path / "one.jsonl"), "--preset", "CHIRP_STEP", "--out", str(tmp_path / "r"), "--no-plots"]
    result = CliRunner().invoke(score_cli, argv)
    assert result.exit_code == 0, result.output
    assert "answered 256 of the 1,280 CHIRP_STEP rows; the 1,024 unanswered rows are not measured." in result.output
    assert "MB-Plus)" not in result.output
