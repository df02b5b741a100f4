"""No command pays for an import it does not use (issue #41, section 4), and what is loaded ahead
gives the numbers it gave before.

Each check runs in a fresh interpreter: what a command imports is per process."""

from __future__ import annotations

import json

import pytest

from mathbode.cli.main import SUBCOMMANDS
from mathbode.evaluator.results import json_safe
from mathbode.evaluator.scorer.scoring import score
from mathbode.schema import read_submission

from .conftest import fresh_python


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
    return json.loads(fresh_python(code).strip().splitlines()[-1])


def test_score_without_intervals_never_loads_scipy(smoke, tmp_path):
    found = _modules_after(
        ["score", str(smoke), "--no-plots", "--bootstrap", "0", "--out", str(tmp_path / "r")], ["scipy.special"]
    )
    assert found == {"scipy.special": False}


def test_score_loads_only_the_t_ufuncs_and_its_intervals_are_the_scorers_own(reference, smoke, tmp_path):
    """The CLI's intervals take scipy's t quantiles from its compiled ufuncs module alone (not
    scipy.special's package, 0.25-0.6 s of imports), and they are, to the bit, those of the scorer
    called in this process with scipy.special imported in full."""
    import scipy.special  # noqa: F401 (this process's scorer takes the ufuncs through the package)

    argv = ["score", str(smoke), "--no-plots", "--json", "--out", str(tmp_path / "r")]
    found = _modules_after(argv, ["scipy.special", "scipy.special._ufuncs", "scipy._lib._array_api"])
    assert found == {"scipy.special": False, "scipy.special._ufuncs": True, "scipy._lib._array_api": False}
    code = f"""
        import sys
        from mathbode.cli import launch
        sys.argv = ["mathbode", *{argv!r}]
        launch.mathbode()
        """
    (printed,) = json.loads(fresh_python(code))
    sub = read_submission(smoke)
    direct = score(sub.answers, reference, printed["label"], sub.model, resamples=1000)
    intervals = json.loads(json.dumps(json_safe(direct.extra["intervals"])))
    assert printed["intervals"] == intervals
    assert printed["intervals"]["families"]["linear_solve"]["mb_core"] is not None


def test_score_never_loads_pyarrows_compute_wrappers(smoke, tmp_path):
    """Scoring calls Arrow's kernels through `core.arrow_compute` (20-45 ms of imports saved), and
    no Arrow method on its path imports the wrappers behind its back."""
    argv = ["score", str(smoke), "--no-plots", "--out", str(tmp_path / "r")]
    found = _modules_after(argv, ["pyarrow._compute", "pyarrow.compute", "numpy.ma", "pandas"])
    assert found == {"pyarrow._compute": True, "pyarrow.compute": False, "numpy.ma": False, "pandas": False}


def test_a_run_without_score_never_loads_the_scorer(tmp_path):
    argv = ["run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "p.jsonl"), "--dry-run"]
    argv += ["--preset", "SMOKE"]
    found = _modules_after(argv, ["mathbode.evaluator", "scipy.special", "jsonschema"])
    assert found == {"mathbode.evaluator": False, "scipy.special": False, "jsonschema": False}


def test_the_canonical_build_never_loads_the_release_reader(tmp_path):
    """The reader and its schema checks are for reading a release back (a split's overlaps):
    the canonical build writes one and never reads it; nor does it need MathBode-Extended's
    families, the GAP kernels, or pyarrow's compute functions (40 ms of imports)."""
    argv = ["build", "--families", "all", "--out", str(tmp_path / "dist"), "-q"]
    unused = ["mathbode.schema.dataset", "mathbode.schema.compiled", "mathbode.builder.families.extended"]
    unused += ["mathbode.builder.families.kernels", "pyarrow.compute", "pyarrow.dataset", "pandas.core"]
    found = _modules_after(argv, unused)
    assert found == dict.fromkeys(unused, False)
    assert (tmp_path / "dist" / "MANIFEST.json").is_file()


#: What a command loads for its work, never for its help: the model client (openai, aiohttp: 0.4-0.5 s),
#: sympy (0.3-0.5 s), jsonschema, scipy, matplotlib, the Hub's library.
HEAVY = ["openai", "aiohttp", "sympy", "jsonschema", "scipy", "matplotlib", "huggingface_hub"]


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_help_loads_nothing_heavy(command):
    found = _modules_after([command, "--help"], HEAVY)
    assert [name for name, loaded in found.items() if loaded] == []
