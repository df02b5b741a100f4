"""No command pays for an import it does not use (issue #41, section 4), and what is loaded ahead
gives the numbers it gave before.

Each check runs in a fresh interpreter: what a command imports is per process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from mathbode.evaluator.results import json_safe
from mathbode.evaluator.scorer.scoring import score
from mathbode.schema import read_submission


def _modules_after(argv: list[str], modules: list[str]) -> dict[str, bool]:
    """Run `mathbode ARGV` in a fresh Python; which of `modules` it imported (its stdout last)."""
    code = f"""
        import json, sys
        from mathbode.cli import launch
        sys.argv = ["mathbode", *{argv!r}]
        try:
            launch.mathbode()
        except SystemExit as stop:
            assert stop.code in (0, None), stop.code
        print(json.dumps({{m: m in sys.modules for m in {modules!r}}}))
        """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_score_without_intervals_never_loads_scipy(smoke, tmp_path):
    found = _modules_after(
        ["score", str(smoke), "--no-plots", "--bootstrap", "0", "--out", str(tmp_path / "r")], ["scipy.special"]
    )
    assert found == {"scipy.special": False}


def test_score_loads_the_t_quantiles_ahead_and_its_intervals_are_the_scorers_own(reference, smoke, tmp_path):
    """The CLI starts scipy.special's import on a thread while it reads the file; the intervals
    it prints are, to the bit, those of the scorer called in this process (scipy imported
    when the first t quantile is asked for)."""
    argv = ["score", str(smoke), "--no-plots", "--json", "--out", str(tmp_path / "r")]
    code = f"""
        import sys, threading
        from mathbode.cli import launch
        import mathbode.evaluator.scorer.uncertainty as uncertainty
        started = []
        real = uncertainty.start_loading_t_distribution
        def spy():
            thread = real()
            started.append(thread.name)
            return thread
        uncertainty.start_loading_t_distribution = spy
        import mathbode.cli.score as score_cli
        score_cli.start_loading_t_distribution = spy
        sys.argv = ["mathbode", *{argv!r}]
        try:
            launch.mathbode()
        except SystemExit as stop:
            assert stop.code in (0, None), stop.code
        print(started, file=sys.stderr)
        """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "['load-scipy.special']" in proc.stderr
    (printed,) = json.loads(proc.stdout)
    sub = read_submission(smoke)
    direct = score(sub.answers, reference, printed["label"], sub.model, resamples=1000)
    intervals = json.loads(json.dumps(json_safe(direct.extra["intervals"])))
    assert printed["intervals"] == intervals
    assert printed["intervals"]["families"]["linear_solve"]["mb_core"] is not None


def test_a_run_without_score_never_loads_the_scorer(tmp_path):
    argv = ["run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "p.jsonl"), "--dry-run"]
    argv += ["--preset", "SMOKE"]
    found = _modules_after(argv, ["mathbode.evaluator", "scipy.special", "jsonschema"])
    assert found == {"mathbode.evaluator": False, "scipy.special": False, "jsonschema": False}


def test_the_canonical_build_never_loads_the_release_reader(tmp_path):
    """The reader and its schema checks are for reading a release back (a split's overlaps):
    the canonical build writes one and never reads it."""
    argv = ["build", "--families", "all", "--out", str(tmp_path / "dist"), "-q"]
    found = _modules_after(argv, ["mathbode.schema.dataset", "mathbode.schema.compiled"])
    assert found == {"mathbode.schema.dataset": False, "mathbode.schema.compiled": False}
    assert (tmp_path / "dist" / "MANIFEST.json").is_file()
