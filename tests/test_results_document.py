"""The results document: every presentation renders from it, `mathbode report` re-renders a report
folder from it byte for byte, and a document of another version is refused or upgraded."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from mathbode.cli.main import mathbode
from mathbode.evaluator import results as results_module
from mathbode.evaluator.results import RESULTS_VERSION
from mathbode.schema.compiled import load_schema

from .site_fixtures import score, site, submissions


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def subs(reference, tmp_path_factory):
    return submissions(reference, tmp_path_factory.mktemp("subs"))


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(mathbode, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "names, extra",
    [
        (["exact"], ()),  # with the six figures, PNG
        (["noisy-0", "noisy-3", "never-compliant", "sequential", "chirp-step-only"], ("--bootstrap", "200")),
        (["noisy-1", "chirp-step-only"], ("--figure-format", "svg")),
    ],
    ids=["one-png", "five-with-intervals-and-tests", "svg"],
)
def test_report_rewrites_the_folder_byte_for_byte_from_its_results_documents(subs, tmp_path, names, extra):
    written = score([subs[n] for n in names], tmp_path / "R", *extra)
    before = _files(written)
    assert any(name.endswith("results.json") for name in before)
    for name in names:  # the submissions are not needed (nor the reference)
        subs[name].rename(subs[name].with_suffix(".away"))
    try:
        kept = ("results.json", "comparisons.json", ".mathbode-written.json")
        for name in [n for n in before if not n.endswith(kept)]:
            (written / name).unlink()  # what `report` must make again
        code, output = _run("report", str(written))
    finally:
        for name in names:
            subs[name].with_suffix(".away").rename(subs[name])
    assert code == 0, output
    after = _files(written)
    assert after.keys() == before.keys()
    assert [n for n in before if before[n] != after[n]] == []


def test_the_document_follows_its_schema_in_full(subs, tmp_path):
    written = score([subs["noisy-2"]], tmp_path / "R", "--bootstrap", "200", "--no-plots")
    document = json.loads((written / "results.json").read_text())
    Draft202012Validator(load_schema("results.schema.json")).validate(document)
    assert document["format"] == "mathbode-results" and document["version"] == RESULTS_VERSION
    assert document["scores"] == json.loads((written / "scores.json").read_text())
    # The drill-down: the 64 answers of every mid-band sweep (4 and 8 cycles) against the truth.
    sweeps = {t["sweep"]["frequency_cycles"] for t in document["traces"]}
    assert sweeps == {4.0, 8.0} and all(len(t["answer"]) == len(t["truth"]) == 64 for t in document["traces"])


def _rewrite(folder: Path, change) -> None:
    """Change the results document, and the folder's ownership record with it (as if mathbode wrote it)."""
    path = folder / "results.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    record = folder / ".mathbode-written.json"
    owned = json.loads(record.read_text())
    owned["files"]["results.json"] = hashlib.sha256(path.read_bytes()).hexdigest()
    record.write_text(json.dumps(owned))


def test_another_version_is_refused_with_what_to_do(subs, tmp_path):
    written = score([subs["exact"]], tmp_path / "R", "--no-plots")
    _rewrite(written, lambda d: d.update(version=RESULTS_VERSION + 1))
    code, output = _run("report", str(written))
    assert code == 2
    assert f"results version {RESULTS_VERSION + 1}, and this mathbode reads version {RESULTS_VERSION}" in output
    assert "score the submissions again with this version" in output
    code, output = _run("site", str(written), "-o", str(tmp_path / "site"))
    assert code == 2 and "results version" in output


def test_an_older_version_is_upgraded(subs, tmp_path, monkeypatch):
    written = score([subs["exact"]], tmp_path / "R", "--no-plots")
    expected = (written / "report.md").read_bytes()
    _rewrite(written, lambda d: d.update(version=0, renamed=d.pop("step_curves")))

    def upgrade(document):
        document = dict(document)
        document["step_curves"] = document.pop("renamed")
        return {**document, "version": 1}

    monkeypatch.setitem(results_module.UPGRADES, 0, upgrade)
    code, output = _run("report", str(written))
    assert code == 0, output
    assert (written / "report.md").read_bytes() == expected
    assert json.loads((written / "results.json").read_text())["version"] == RESULTS_VERSION


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("format"), 'not a MathBode results document (no "format": "mathbode-results")'),
        (lambda d: d["traces"][3]["answer"].__setitem__(40, "12.5"), "at traces/3/answer: a value that is neither"),
        (lambda d: d["scores"].pop("label"), "at scores: 'label' is a required property"),
    ],
    ids=["not-a-document", "text-among-the-answers", "no-label"],
)
def test_a_damaged_document_is_refused_naming_where(subs, tmp_path, change, message):
    written = score([subs["exact"]], tmp_path / "R", "--no-plots")
    _rewrite(written, change)
    code, output = _run("report", str(written))
    assert code == 2 and message in output, output


def test_a_folder_without_results_documents_is_refused(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "scores.json").write_text("{}")
    code, output = _run("report", str(tmp_path / "old"))
    assert code == 2 and "no results.json in it or in its subfolders" in output


def test_the_site_is_the_same_bytes_each_time_and_from_several_folders(subs, tmp_path):
    one = score([subs["exact"]], tmp_path / "R1", "--no-plots")
    two = score([subs["noisy-0"], subs["chirp-step-only"]], tmp_path / "R2", "--no-plots")
    first = _files(site([one, two], tmp_path / "S"))
    shutil.rmtree(tmp_path / "S")
    again = _files(site([one, two], tmp_path / "S"))
    assert first == again
    assert {"index.html", "submissions/exact.html", "submissions/noisy-0.html", "sweeps/chirp-step-only.html"} <= set(
        first
    )
    assert first["data/exact/results.json"] == (one / "results.json").read_bytes()
    pages = [text for name, text in first.items() if name.endswith(".html")]
    assert not any(b'src="http' in text or b'href="http' in text.replace(b"https://plotly.com/", b"") for text in pages)


def _ranked(core: float, interval: tuple[float, float] | None):
    from types import SimpleNamespace

    extra = {"intervals": {"overall": {"mb_core": list(interval)}}} if interval else {}
    return SimpleNamespace(overall={"mb_core": core}, extra=extra)


def test_ranks_share_a_place_when_intervals_overlap():
    from mathbode.evaluator.presentation.site import ranks

    # 0.95 and 0.93 overlap; 0.80's interval lies below both; 0.78 overlaps 0.80 only.
    members = [
        _ranked(0.95, (0.93, 0.97)),
        _ranked(0.93, (0.90, 0.96)),
        _ranked(0.80, (0.75, 0.85)),
        _ranked(0.78, (0.70, 0.84)),
    ]
    assert ranks(members) == [(1, True), (1, True), (3, True), (3, True)]
    # Without intervals: ties only where the scores are equal; n/a last.
    plain = [_ranked(0.9, None), _ranked(0.9, None), _ranked(0.7, None), _ranked(float("nan"), None)]
    assert ranks(plain) == [(1, True), (1, True), (3, False), (4, False)]


def test_json_safe_writes_null_for_every_number_that_is_not_finite():
    import math

    import numpy as np

    from mathbode.evaluator.results import json_safe

    given = {
        "plain": [1.0, math.nan, -math.inf, -0.0, 3, None, "nan"],
        "numpy": [np.float64("nan"), np.float64(2.5), np.float64("inf")],
        "nested": [(math.nan, [math.inf, 1.5]), {"x": math.nan}],
        "top": math.inf,
    }
    assert json_safe(given) == {
        "plain": [1.0, None, None, -0.0, 3, None, "nan"],
        "numpy": [None, 2.5, None],
        "nested": [[None, [None, 1.5]], {"x": None}],
        "top": None,
    }
