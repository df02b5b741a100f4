"""Hostile family files and plugins (issue 40, sections 5 and 6): answers too big to prove,
constants and templates of any size, fields of the wrong type, bad draws, and modules that loop,
sleep, exit or interrupt when imported. Each ends in a message naming the family (or the file,
or the plugin) and what to change, within a bound, never a traceback or a hang.

The family check is exercised through the command in a subprocess (what a user runs) with a
wall-clock timeout well above the bounds, so a regression to a hang fails instead of blocking.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import time
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from mathbode.builder.families import get_family
from mathbode.builder.families.check import check_family, precheck
from mathbode.builder.families.draws import Draw
from mathbode.builder.families.files import families_from_file
from mathbode.builder.families.plugins import GROUP, load_plugins
from mathbode.builder.release import build_release
from mathbode.builder.splits import SplitPlan
from mathbode.core.errors import UsageError

#: A valid family file (the guide's shape), with its answer, constants and template as holes.
FAMILY_FILE = """
import sympy as sp
from mathbode.builder.families import Draw, Family, Variant

p, a = sp.symbols("p a")
FAMILY = Family(
    name={name},
    version="1.0.0",
    title="Hostile",
    summary="A family a hostile campaign wrote.",
    parameter=p,
    parameter_meaning="the value p",
    answer={answer},
    p_range=("1", "3"),
    p0="2",
    decimals=3,
    variants={variants},
    template={template},
    draws={draws},
)
"""
GOOD = {
    "name": '"hostile"',
    "answer": "a * p",
    "variants": '(Variant({"a": "2"}), Variant({"a": "3"}), Variant({"a": "5"}))',
    "template": '"A crate holds {a} kg per box. How many kg do {p} boxes hold?"',
    "draws": '{"a": Draw("1", "9", "1")}',
}
#: What a command may take at most here: the bounds are seconds; this catches a hang.
WALL = 90


def family_file(tmp_path: Path, **holes: str) -> Path:
    path = tmp_path / "hostile_family.py"
    path.write_text(FAMILY_FILE.format(**{**GOOD, **holes}), encoding="utf-8")
    return path


def in_process(path: Path) -> list:
    """The families of a family file imported here, in the test's own process: how a build meets
    a family's bad data once it has come back from the child as data."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_hostile_in_process", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return [module.FAMILY]


def mathbode(*args: str, cwd: Path | None = None) -> tuple[int, str, float]:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mathbode", *args], capture_output=True, text=True, timeout=WALL, cwd=cwd
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - start


def test_the_good_family_file_fails_only_for_its_pin(tmp_path):
    (family,) = families_from_file(family_file(tmp_path))
    assert [f.code for f in check_family(family).problems] == ["unpinned"]


ANSWERS = {
    "power 10**5": ("p**10**5", "[size] the answer: it raises to an integer power above 100"),
    "power 10**18": ("p**10**18", "[size] the answer: it raises to an integer power above 100"),
    "sin of 10**5000 p": ("sp.sin(10**5000 * p)", "[size] the answer: it holds a number of more than 100 digits"),
    "20,000-term sum": ("sp.Add(*([sp.sin(p)] * 20000), evaluate=False)", "[size] the answer: it has more than 2,000"),
}


@pytest.mark.parametrize("case", list(ANSWERS), ids=list(ANSWERS))
def test_an_answer_too_big_to_prove_is_a_finding_not_a_hang(tmp_path, case):
    answer, said = ANSWERS[case]
    code, out, seconds = mathbode("family", "check", str(family_file(tmp_path, answer=answer)))
    assert code == 1 and "Traceback" not in out and "MemoryError" not in out
    assert "FAIL hostile" in out and said in out
    assert seconds < 30


def test_a_triple_exponential_is_decided_within_the_bound(tmp_path):
    code, out, seconds = mathbode("family", "check", str(family_file(tmp_path, answer="sp.exp(sp.exp(sp.exp(p)))")))
    assert code == 1 and "Traceback" not in out
    # exp(exp(exp(3))) is about 10**(10**8): far past the answer format's bound, said as such.
    assert "FAIL hostile" in out and ("[magnitude]" in out or "[domain]" in out)
    assert seconds < 30


def test_a_check_that_runs_past_its_time_limit_fails_naming_the_family(tmp_path, monkeypatch):
    # A check made slow on purpose (its answers step waits 60 s), so that the bound, not the
    # machine's speed, decides: a legal but slow family finished within 1 s on a quiet machine.
    from click.testing import CliRunner

    from mathbode.builder.families import check
    from mathbode.cli.family import main as family_cli

    monkeypatch.setattr(check, "_answers", lambda family, report, *options: time.sleep(60))
    start = time.monotonic()
    result = CliRunner().invoke(family_cli, ["check", "--time-limit", "1", str(family_file(tmp_path))])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "[time] the check of hostile ran past 1 s" in result.output and "--time-limit" in result.output
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(
    "holes, said",
    [
        ({"variants": '(Variant({"a": "7" * 2**20}), Variant({"a": "3"}), Variant({"a": "5"}))'}, "1,048,576 char"),
        ({"variants": '(Variant({"a": "1e400"}), Variant({"a": "3"}), Variant({"a": "5"}))'}, "1e400 is outside"),
        ({"variants": '(Variant({"a": 10**5000}), Variant({"a": "3"}), Variant({"a": "5"}))'}, "an integer of 16610"),
        ({"template": '"{a} {p} " + "x" * 10**5'}, "template holds 100,008 characters, more than 4,000"),
        ({"variants": '({"a": "2"}, {"a": "3"}, {"a": "5"})'}, "variants must be a tuple of Variant"),
        ({"name": "42"}, "name is a int, not text"),
    ],
    ids=["constant-1MB", "constant-1e400", "constant-huge-int", "template-1e5", "variants-dicts", "name-int"],
)
def test_a_definition_of_the_wrong_size_or_type_is_a_clear_finding(tmp_path, holes, said):
    code, out, _ = mathbode("family", "check", str(family_file(tmp_path, **holes)))
    assert code == 1 and "Traceback" not in out and said in out, out


@pytest.mark.parametrize(
    "draws, said",
    [
        ('{"a": Draw("9", "1", "1")}', "give low <= high, a step > 0"),
        ('{"a": Draw("1", "9", "0")}', "give low <= high, a step > 0"),
        ('{"a": Draw("NaN", "9", "1")}', "'NaN' is not a finite decimal"),
        ('{"a": Draw("0", "1e15", "1e-15")}', "the grid holds 1e+30 values, more than 1,000,000"),
        ('{"b": Draw("1", "9", "1")}', "draws gives no Draw for a"),
    ],
    ids=["low-above-high", "step-0", "nan", "grid-1e30", "wrong-name"],
)
def test_bad_draws_fail_at_family_check_and_refuse_a_seed_cleanly(tmp_path, draws, said):
    path = family_file(tmp_path, draws=draws)
    code, out, _ = mathbode("family", "check", str(path))
    assert code == 1 and "Traceback" not in out and "[draws]" in out and said in out, out
    with pytest.raises(UsageError, match="family 'hostile' fails its check: .*draws"):
        families_from_file(path)  # never rebuilt in the parent from the child's data
    (family,) = in_process(path)
    with pytest.raises(UsageError, match="family 'hostile' fails its check: .*draws"):
        build_release([family], tmp_path / "split", split=SplitPlan("s1"))
    assert not (tmp_path / "split").exists()


def test_build_refuses_a_family_too_big_to_prove_before_making_any_row(tmp_path):
    (family,) = in_process(family_file(tmp_path, answer="p**10**18"))
    assert [f.code for f in precheck(family)] == ["size"]
    start = time.monotonic()
    with pytest.raises(UsageError, match="it raises to an integer power above 100"):
        build_release([family], tmp_path / "out")
    assert time.monotonic() - start < 5


def test_a_sum_sympy_takes_minutes_to_build_is_stopped_at_the_import_bound(tmp_path):
    # sympy folds p/1 + p/2 + ... term by term: minutes for 20,000 terms, before any check runs.
    path = family_file(tmp_path, answer="sp.Add(*[p / k for k in range(1, 20001)])")
    start = time.monotonic()
    with pytest.raises(UsageError, match="importing it ran past 2 s and was killed"):
        families_from_file(path, seconds=2)
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    "body, said",
    [
        ("while True:\n    pass", "importing it ran past 2 s and was killed"),
        ("import time\ntime.sleep(3600)", "importing it ran past 2 s and was killed"),
        ("import sys\nsys.exit(3)", "fails to import: SystemExit: 3"),
        ("raise KeyboardInterrupt", "fails to import: KeyboardInterrupt"),
        ("class Boom(BaseException):\n    pass\nraise Boom('at import')", "fails to import: Boom: at import"),
        ("while True:\n    try:\n        pass\n    except Exception:\n        pass", "ran past 2 s"),
    ],
    ids=["loop", "sleep", "sys-exit", "keyboard-interrupt", "base-exception", "loop-catching-exception"],
)
def test_a_family_file_that_loops_or_exits_at_import_is_a_message(tmp_path, body, said):
    path = tmp_path / "bad.py"
    path.write_text(body + "\n", encoding="utf-8")
    start = time.monotonic()
    with pytest.raises(UsageError) as caught:
        families_from_file(path, seconds=2)
    assert time.monotonic() - start < 10
    assert str(caught.value).startswith(str(path)) and said in str(caught.value)


def test_the_users_ctrl_c_during_a_family_files_import_still_stops_the_command(tmp_path):
    # A file that raises KeyboardInterrupt itself is its own problem (above): its child is in a
    # session of its own, so the terminal's Ctrl-C reaches the command, which stops (and kills the
    # child) as Ctrl-C always does. In an interpreter of its own, as a command is: a test worker's
    # signal state is what earlier tests left (a SIGINT held or ignored there never arrives).
    from .conftest import fresh_python

    path = tmp_path / "slow.py"
    path.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    said = fresh_python(
        f"""
        import os, signal, threading, time
        from mathbode.builder.families.files import families_from_file

        # A command started from a shell handles Ctrl-C; a test worker's children inherit its
        # SIGINT ignored, so this interpreter takes Python's own handler back first.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            families_from_file({str(path)!r}, seconds=30)
            print("returned")
        except KeyboardInterrupt:
            print(f"stopped after {{time.monotonic() - start:.1f}} s")
        """
    )
    assert said.startswith("stopped after ") and float(said.split()[2]) < 10, said


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    made: list[str] = []

    def make(name: str, body: str) -> EntryPoint:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")
        made.append(name)
        return EntryPoint(name=name.removeprefix("hostile_"), value=name, group=GROUP)

    yield make
    for name in made:
        sys.modules.pop(name, None)


PLUGIN_BODIES = {
    "loops": ("while True:\n    pass\n", "its import ran past 2 s"),
    "sleeps": ("import time\ntime.sleep(3600)\n", "its import ran past 2 s"),
    "exits": ("import sys\nsys.exit(0)\n", "its import raised SystemExit(0)"),
    "interrupts": ("raise KeyboardInterrupt('at import')\n", "its import raised KeyboardInterrupt(at import)"),
    "base": ("raise BaseException('mine')\n", "its import raised BaseException(mine)"),
    "nameless": (
        FAMILY_FILE.format(**{**GOOD, "name": "42"}) + "FAMILIES = (FAMILY,)\n",
        "cannot be loaded: TypeError",
    ),
}


def test_plugins_that_loop_sleep_exit_or_interrupt_are_problems_and_the_good_one_loads(plugin_dir):
    points = [plugin_dir(f"hostile_{name}", body) for name, (body, _) in PLUGIN_BODIES.items()]
    good = plugin_dir("hostile_good", FAMILY_FILE.format(**GOOD) + "FAMILIES = (FAMILY,)\n")
    start = time.monotonic()
    plugins = load_plugins([*points, good], seconds=2)
    assert time.monotonic() - start < 20  # two bounded imports of 2 s, the rest at once
    assert list(plugins.families) == ["good.hostile"]
    said = {p.namespace: p.message for p in plugins.problems}
    assert sorted(said) == sorted(PLUGIN_BODIES)
    for name, (_, expected) in PLUGIN_BODIES.items():
        assert expected in said[name], said[name]
        assert len(said[name]) < 400


def test_families_names_a_plugin_family_whose_answer_cannot_be_printed_without_a_traceback(plugin_dir, monkeypatch):
    from click.testing import CliRunner

    from mathbode.builder import families as registry
    from mathbode.cli.families import main

    body = FAMILY_FILE.format(**{**GOOD, "answer": "sp.sin(10**5000 * p)"}) + "FAMILIES = (FAMILY,)\n"
    point = plugin_dir("hostile_big", body)
    monkeypatch.setattr(registry, "plugins", lambda: load_plugins([point], seconds=5))
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    said = (
        "its family 'big.hostile' fails its check and is left out: [size] the answer: it holds a number of more "
        "than 100 digits"
    )
    assert said in result.output and "linear_solve" in result.output


def test_a_namespaced_plugin_checked_without_namespace_is_told_to_pass_it(tmp_path, monkeypatch):
    from mathbode.builder.families import check as family_check
    from mathbode.builder.families.plugins import namespaced

    path = family_file(tmp_path)
    (bare,) = families_from_file(path)
    installed = check_family(namespaced(bare, "acme", "acme-families 1.0.0")).facts["content hash"]
    pinned = dataclasses.replace(bare, pins={"1.0.0": installed})
    monkeypatch.setattr(family_check, "installed_namespaces", lambda: ["zeta", "acme"])
    (problem,) = check_family(pinned).problems
    assert problem.code == "pin-namespace"
    assert "the rows match it under the plugin's namespace 'acme', and nothing changed" in problem.message
    assert "`mathbode family check --namespace acme FILE.py`" in problem.message
    assert "bump" not in problem.message.replace("do not bump", "")


def test_family_check_calls_its_range_facts_enclosures():
    report = check_family(get_family("linear_solve"))
    assert report.passed
    (key,) = [k for k in report.facts if k.startswith("answer enclosure")]
    assert key == "answer enclosure on the range (contains every value; not tight)"
    assert not any(k.startswith("answer bounds") for k in report.facts)


def test_draw_is_importable_where_the_guide_says():
    from mathbode.builder.families import Draw as FromRegistry

    assert FromRegistry is Draw
    assert Draw("1", "20", "1").values() == 20
    assert get_family("linear_solve").draws["b"] == Draw("1", "20", "1")  # the canonical draws, attached
