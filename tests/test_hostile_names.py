"""Names are input (issue 40, sections 4 and 5): a model, label or family name never writes outside
the output folder, two names never share a file, and what a name holds (plotly markup, spreadsheet
formulas, terminal escapes, a malformed address) is shown as text, never run.

Each case failed before the fix: the file it names was written outside the folder, one of two
documents was lost, a traceback, a link in a plot, a formula in leaderboard.csv, a raw escape."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import markupsafe
import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.main import mathbode
from mathbode.core.atomic import write_jsonl
from mathbode.core.errors import UsageError
from mathbode.core.names import check_inside, file_name, printable
from mathbode.evaluator.presentation.report import render_report, saved_results
from mathbode.schema.selection import select_rows


@pytest.fixture(scope="module")
def smoke_lines(reference):
    return list(baseline_lines(select_rows(reference.table, "SMOKE")))


def _submission(folder: Path, stem: str, model: str, lines: list[dict]) -> Path:
    path = folder / f"{stem}.jsonl"
    write_jsonl(path, [{**line, "model": model} for line in lines])
    return path


def _invoke(*args: object):
    return CliRunner().invoke(mathbode, [str(a) for a in args])


def _score(paths: list[Path], out: Path, *extra: str):
    return _invoke("score", *paths, "--out", out, "--no-plots", "--bootstrap", "0", *extra)


def _tree(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


# -- the mapping --------------------------------------------------------------------------------
HOSTILE = ["a/b", "a_b", "a/", "a", "A", "results.json", "report.md", "../x", "/etc/x", "a\x00b", "CON", ".", "", "x~1"]


def test_file_names_are_safe_bounded_and_injective():
    names = [file_name(t) for t in HOSTILE + ["m" * 20_000, "m" * 20_001, "x\ud800"]]
    assert len(set(names)) == len(names)  # injective, and case-insensitively so
    assert len({n.lower() for n in names}) == len(names)
    for n in names:
        assert re.fullmatch(r"[a-z0-9][a-z0-9_.~-]*", n) and len(n) <= 64 and not n.endswith(".")
    assert file_name("gpt-4o-mini") == "gpt-4o-mini"  # a plain name is kept readable
    assert file_name("Qwen/Qwen2.5-7B") == "qwen-qwen2.5-7b~" + file_name("Qwen/Qwen2.5-7B").split("~")[1]


@pytest.mark.parametrize("path", ["../x", "/abs", "a/../../b", "a//b", "a\x00b", "", "a\\b"])
def test_a_path_leaving_the_folder_is_refused_before_writing(path):
    with pytest.raises(UsageError, match="not a plain file inside the folder; nothing was written"):
        check_inside(["ok.html", path], "S", "-o")


# -- score --out ------------------------------------------------------------------------------
def test_model_names_never_write_outside_the_report_folder(tmp_path, smoke_lines):
    subs = tmp_path / "subs"
    subs.mkdir()
    outside = tmp_path / "outside"
    paths = [
        _submission(subs, "up", "../escaped", smoke_lines),
        _submission(subs, "abs", str(outside), smoke_lines),
    ]
    before = _tree(tmp_path)
    result = _score(paths, tmp_path / "R")
    assert result.exit_code == 0, result.output
    assert _tree(tmp_path) - before == {f"R/{n}" for n in _tree(tmp_path / "R")} | {"R"}
    assert not outside.exists() and not (tmp_path / "escaped").exists()
    documents, _ = saved_results(tmp_path / "R")
    assert [d["scores"]["model"] for d in documents] == ["../escaped", str(outside)]


def test_names_that_sanitized_alike_each_keep_their_document(tmp_path, smoke_lines):
    subs = tmp_path / "subs"
    subs.mkdir()
    models = ["a/b", "a_b", "a/", "a", "results.json", "report.md", "leaderboard.csv"]
    paths = [_submission(subs, f"s{i}", m, smoke_lines) for i, m in enumerate(models)]
    result = _score(paths, tmp_path / "R")
    assert result.exit_code == 0, result.output
    documents, _ = saved_results(tmp_path / "R")
    assert [d["scores"]["label"] for d in documents] == models  # seven documents, none lost
    assert (tmp_path / "R/report.md").is_file() and (tmp_path / "R/leaderboard.csv").is_file()
    report = (tmp_path / "R/report.md").read_text()
    assert f"Its files: `{file_name('a/b')}/`" in report
    again = _invoke("report", tmp_path / "R")  # and the folder renders again from them
    assert again.exit_code == 0, again.output


def test_a_nul_and_a_20000_character_name_score_and_make_a_site(tmp_path, smoke_lines):
    subs = tmp_path / "subs"
    subs.mkdir()
    long = "m" * 20_000
    paths = [_submission(subs, "nul", "a\x00b", smoke_lines), _submission(subs, "long", long, smoke_lines)]
    result = _score(paths, tmp_path / "R")
    assert result.exit_code == 0, result.output
    assert "a\\x00b" in result.output and "\x00" not in result.output  # shown, not printed raw
    site = _invoke("site", tmp_path / "R", "-o", tmp_path / "S")
    assert site.exit_code == 0, site.output
    assert max(len(part) for p in _tree(tmp_path / "S") for part in p.split("/")) <= 80
    assert {d["scores"]["model"] for d in saved_results(tmp_path / "R")[0]} == {"a\x00b", long}


# -- the site ----------------------------------------------------------------------------------
def _rename_family(folder: Path, old: str, new: str) -> None:
    """A results document whose family is called `new` (as a hand-edited or hostile one would be)."""
    path = folder / "results.json"
    document = json.loads(path.read_text())
    families = document["scores"]["families"]
    document["scores"]["families"] = {new if k == old else k: v for k, v in families.items()}
    for table in document["tables"].values():
        for column in table["columns"]:
            if column["name"] == "family":
                column["values"] = [new if v == old else v for v in column["values"]]
    path.write_text(json.dumps(document))


def test_a_family_name_never_writes_beside_the_site(tmp_path, smoke_lines):
    subs = tmp_path / "subs"
    subs.mkdir()
    one = tmp_path / "R"
    assert _score([_submission(subs, "s", "m", smoke_lines)], one).exit_code == 0
    _rename_family(one, "linear_solve", "../../pwn_family")
    mine = tmp_path / "pwn_family.html"
    mine.write_text("the user's own file\n")
    before = _tree(tmp_path)
    result = _invoke("site", one, "-o", tmp_path / "S")
    assert result.exit_code == 0, result.output
    assert mine.read_text() == "the user's own file\n"
    assert _tree(tmp_path) - before == {"S"} | {f"S/{p}" for p in _tree(tmp_path / "S")}
    page = f"families/{file_name('../../pwn_family')}.html"
    assert (tmp_path / "S" / page).is_file()
    assert f'href="../{page}"' in (tmp_path / "S/submissions/m.html").read_text()


def _plot_specs(page: Path) -> list[dict]:
    found = re.findall(r'<script type="application/json" id="[^"]*">(.*?)</script>', page.read_text(), re.S)
    return [json.loads(text) for text in found]


def test_plot_labels_are_plain_text_and_csv_cells_are_not_formulas(tmp_path, smoke_lines):
    subs = tmp_path / "subs"
    subs.mkdir()
    link = '<a href="https://evil.example">click</a>'
    formula = '=HYPERLINK("https://evil.example","x")'
    paths = [_submission(subs, "link", link, smoke_lines), _submission(subs, "formula", formula, smoke_lines)]
    assert _score(paths, tmp_path / "R").exit_code == 0
    result = _invoke("site", tmp_path / "R", "-o", tmp_path / "S")
    assert result.exit_code == 0, result.output
    family = next((tmp_path / "S/families").iterdir())
    names = [t["name"] for spec in _plot_specs(family) if "data" in spec for t in spec["data"]]
    assert '&lt;a href="https://evil.example"&gt;click&lt;/a&gt;' in names
    assert not any("<" in n for n in names)
    for board in (tmp_path / "S/data/leaderboard.csv", tmp_path / "R/leaderboard.csv"):
        rows = list(csv.DictReader(board.open()))
        assert {r["model"] for r in rows} == {link, "'" + formula}
        assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values())


def test_a_name_s_terminal_escapes_are_shown_not_run(tmp_path, smoke_lines):
    subs = tmp_path / "subs"
    subs.mkdir()
    evil = "\x1b]0;owned\x07\x1b[2J\u202etxt.exe"
    result = _score([_submission(subs, "e", evil, smoke_lines)], tmp_path / "R")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\u202e" not in result.output
    assert "\\x1b]0;owned\\x07\\x1b[2J\\u202etxt.exe" in result.output
    assert printable("ok\n\tfine") == "ok\n\tfine"


HTML_NAMES = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<iframe src="https://evil.example"></iframe>',
    "<svg onload=alert(1)>",
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    '<base href="https://evil.example/">',
    '<a href="javascript:alert(1)">x</a>',
    "<!-- hidden -->",
    "[click](javascript:alert(1))",
]


def test_a_name_holding_html_is_text_in_report_md(tmp_path, smoke_lines):
    """report.md is Markdown, which renderers (mkdocs, editors' previews) pass HTML through: before,
    every name was written raw. Scored once, then each name given to a copy of its results document
    (label and model) and the copies rendered together, as `mathbode report` renders them."""
    subs = tmp_path / "subs"
    subs.mkdir()
    paths = [_submission(subs, "a", HTML_NAMES[0], smoke_lines), _submission(subs, "b", "plain", smoke_lines[:640])]
    assert _score(paths, tmp_path / "R").exit_code == 0
    report = (tmp_path / "R/report.md").read_text()
    assert HTML_NAMES[0] not in report and "## &lt;script&gt;alert(1)&lt;/script&gt;" in report
    assert "Model: &lt;script&gt;alert(1)&lt;/script&gt;." in report
    documents, _ = saved_results(tmp_path / "R")
    many = tmp_path / "many"
    for n, name in enumerate(HTML_NAMES):
        document = json.loads(json.dumps(documents[0]))
        document["scores"]["label"] = document["scores"]["model"] = name
        document["rendering"].update(position=n, of=len(HTML_NAMES))  # as one scoring of them all wrote it
        (many / f"s{n}").mkdir(parents=True)
        (many / f"s{n}/results.json").write_text(json.dumps(document))
    render_report(*saved_results(many), tmp_path / "out")
    text = (tmp_path / "out/report.md").read_text()
    assert not re.search(r"<[A-Za-z!/]", text), re.search(r".{40}<[A-Za-z!/].{40}", text)
    for name in HTML_NAMES:
        shown = str(markupsafe.escape(name)).replace("[", "&#91;").replace("]", "&#93;")
        assert f"## {shown}\n" in text and f"Model: {shown}." in text
        assert f"| {shown} |" in text  # its leaderboard row


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("fragment", ["#%zz", "#%", "#%E0%A4%A", "#linear_solve%2Fq0", ""])
def test_site_js_survives_a_malformed_address(tmp_path, fragment):
    """site.js's drill-down read the address with decodeURIComponent, which throws URIError on
    `#%zz`: the page stopped. Run in node with the least of a browser around it."""
    site_js = (Path(__file__).parents[1] / "evaluator/presentation/site_assets/site.js").read_text()
    harness = f"""
const element = () => ({{ textContent: "", dataset: {{}}, replaceChildren() {{}}, appendChild() {{}},
  querySelectorAll() {{ return []; }} }});
var window = {{ innerWidth: 1000, addEventListener() {{}} }};
var document = {{ addEventListener() {{}}, getElementById: element, querySelector: element, createElement: element }};
var location = {{ hash: {json.dumps(fragment)} }};
var Plotly = {{ react() {{}} }};
{site_js}
const div = element();
drawSweep(div, [{{ id: "linear_solve/q0", truth: [1, 2], answer: [1, null] }}]);
console.log(div.dataset.sweep);
"""
    script = tmp_path / "harness.js"
    script.write_text(harness)
    run = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "linear_solve/q0"


def test_headings_and_captions_wrap_a_long_hash_on_a_phone():
    """Without a browser (tests/test_site.py measures it in Chromium at 390 px): the rule that lets
    a group heading holding a release hash wrap instead of widening the page."""
    css = (Path(__file__).parents[1] / "evaluator/presentation/site_assets/site.css").read_text()
    wrapping = [
        {s.strip() for s in selectors.split(",")}
        for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css)
        if "overflow-wrap: anywhere" in body
    ]
    assert any({"h2", "h3", "caption"} <= rule for rule in wrapping), wrapping
