"""A plugin is bounded from outside its own process (issue 49, section 3, and its section 4 cases).

Each hostile plugin is a module with a package's metadata (a `.dist-info` folder naming its
entry point in `mathbode.families`) on PYTHONPATH, so the command finds it as it finds an
installed package, and each command runs in a subprocess, as a user runs it, with a short bound
per plugin (MATHBODE_PLUGIN_SECONDS=2) and a wall-clock timeout far above it: a plugin that could
still hang the command fails the test instead of blocking the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

#: A command's wall clock here: one child's start (sympy, seconds on a loaded machine), the
#: plugin's 2 s, and room to spare.
WALL = 90

#: A good family a hostile module defines after its hostile part, with its title, summary and
#: template as holes.
FAMILY = """
import sympy as sp
from mathbode.builder.families import Family, Variant

p, a = sp.symbols("p a")
FAMILIES = (
    Family(
        name="orbit",
        version="1.0.0",
        title={title!r},
        summary={summary!r},
        parameter=p,
        parameter_meaning="the value p",
        answer=a * p,
        p_range=("1", "3"),
        p0="2",
        decimals=3,
        variants=(Variant({{"a": "2"}}), Variant({{"a": "3"}}), Variant({{"a": "5"}})),
        template={template!r},
    ),
)
"""


def family(title: str = "Orbit", summary: str = "A hostile plugin's family.", template: str = "") -> str:
    template = template or "A crate holds {a} kg per box. How many kg do {p} boxes hold?"
    return FAMILY.format(title=title, summary=summary, template=template)


def install(root: Path, namespace: str, body: str) -> None:
    """A module `hostile_NAMESPACE` with the metadata of an installed package declaring it as the
    plugin `namespace` (importlib.metadata finds it on the path, as pip leaves it)."""
    module = f"hostile_{namespace}"
    (root / f"{module}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[mathbode.families]\n{namespace} = {module}\n", encoding="utf-8")


def mathbode(root: Path, *args: str, **env: str) -> tuple[int, str, str, float]:
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mathbode", *args],
        capture_output=True,
        text=True,
        timeout=WALL,
        cwd=root,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), *pythonpath]),
            "MATHBODE_PLUGIN_SECONDS": "2",
            **env,
        },
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


LOOPS_PAST_SIGALRM = {
    "ignores-sigalrm": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n",
    "own-handler": "import signal\nsignal.signal(signal.SIGALRM, lambda *_: None)\n",
    "disarms-timer": "import signal\nsignal.setitimer(signal.ITIMER_REAL, 0)\n",
    "blocks-signal": "import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n",
}


@pytest.mark.parametrize("case", list(LOOPS_PAST_SIGALRM))
def test_a_plugin_that_switches_off_the_alarm_and_loops_is_killed_at_its_bound(tmp_path, case):
    install(tmp_path, "looper", LOOPS_PAST_SIGALRM[case] + "while True:\n    pass\n")
    install(tmp_path, "good", family())
    code, out, err, seconds = mathbode(tmp_path, "families")
    assert code == 0 and "Traceback" not in err
    assert "plugin 'looper' (hostile_looper 1.0): cannot be loaded: its import ran past 2 s and was killed" in err
    assert "good.orbit 1.0.0  [plugin; hostile_good 1.0]" in out and "linear_solve" in out
    assert seconds < 60


def test_a_family_files_thread_that_exits_the_process_cannot_pass_a_failing_family(tmp_path):
    # The family fails (it is not pinned); a thread of the file calls os._exit(0) a second after
    # import. The file's code runs in a child that has answered (or died, said) by then.
    path = tmp_path / "orbit.py"
    path.write_text(
        "import os, threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(1), os._exit(0))).start()\n" + family(),
        encoding="utf-8",
    )
    code, out, err, _ = mathbode(tmp_path, "family", "check", str(path))
    assert code != 0, out + err
    assert "FAIL orbit" in out and "[unpinned]" in out or "exited with code 0 before it answered" in err


def test_a_family_file_that_exits_the_process_at_import_is_a_failure_said(tmp_path):
    path = tmp_path / "orbit.py"
    path.write_text("import os\nos._exit(0)\n", encoding="utf-8")
    code, out, err, _ = mathbode(tmp_path, "family", "check", str(path))
    assert code == 2 and "Traceback" not in err
    assert f"{path}: importing it exited with code 0 before it answered; nothing of it was checked" in err


@pytest.mark.parametrize("exit_code", [0, 3])
def test_a_plugin_exiting_at_import_is_its_problem_not_the_commands_exit(tmp_path, exit_code):
    install(tmp_path, "quitter", f"import os\nos._exit({exit_code})\n")
    code, out, err, _ = mathbode(tmp_path, "families")
    assert code == 0 and "linear_solve" in out
    assert f"plugin 'quitter' (hostile_quitter 1.0): cannot be loaded: its import exited with code {exit_code}" in err


def test_a_plugin_that_closes_standard_output_leaves_the_commands_output_alone(tmp_path):
    install(tmp_path, "closer", "import os\nos.close(1)\nos.close(2)\n" + family())
    code, out, err, _ = mathbode(tmp_path, "families", "--json")
    assert code == 0 and "Bad file descriptor" not in err, err
    names = [json.loads(line)["name"] for line in out.splitlines()]
    assert "closer.orbit" in names and "linear_solve" in names


def test_a_plugin_that_closes_its_answer_pipe_is_said_to(tmp_path):
    # It closes every descriptor the child holds beyond the standard three, then waits.
    install(tmp_path, "deaf", "import os, time\nos.closerange(3, 1024)\ntime.sleep(3600)\n")
    code, out, err, seconds = mathbode(tmp_path, "families")
    assert code == 0 and "linear_solve" in out
    assert "plugin 'deaf' (hostile_deaf 1.0): cannot be loaded: its import closed its answer pipe" in err
    assert seconds < 60


def test_a_plugin_threads_recursion_error_prints_no_traceback(tmp_path):
    body = (
        "import threading\n\ndef down(n):\n    return down(n + 1)\n\nthreading.Thread(target=down, args=(0,)).start()\n"
    )
    install(tmp_path, "deep", body + family())
    code, out, err, _ = mathbode(tmp_path, "families")
    assert code == 0 and "deep.orbit" in out
    assert "Traceback" not in out + err and "RecursionError" not in out + err


def test_a_plugin_past_its_memory_bound_is_a_problem(tmp_path):
    # 3 GiB of zeros: no page is touched (calloc), so without a bound it would load, quietly.
    install(tmp_path, "hungry", "HOARD = bytearray(3 * 2**30)\n" + family())
    code, out, err, _ = mathbode(tmp_path, "families", MATHBODE_PLUGIN_MEMORY_MB="1024")
    assert code == 0 and "linear_solve" in out and "hungry.orbit" not in out
    said = "plugin 'hungry' (hostile_hungry 1.0): cannot be loaded: MemoryError (past the child's bound of 1,024 MiB"
    assert said in err


def test_a_plugin_forking_a_process_that_waits_forever_cannot_hang_the_command(tmp_path):
    install(tmp_path, "forker", "import os, time\nif os.fork() == 0:\n    time.sleep(3600)\n" + family())
    code, out, err, seconds = mathbode(tmp_path, "families", "forker.*")
    assert code == 0 and "forker.orbit" in out, err
    assert seconds < 60


@pytest.mark.parametrize(
    "body, said",
    [
        ("FAMILIES = 5\n", "fails to import: TypeError: FAMILIES is a int: make it a tuple of Family(...)"),
        (
            "def __getattr__(name):\n    raise RuntimeError('no attribute for you')\n",
            "fails to import: RuntimeError: no attribute for you",
        ),
    ],
    ids=["FAMILIES-int", "module-getattr-raises"],
)
def test_a_family_file_whose_declaration_cannot_be_read_is_a_message(tmp_path, body, said):
    path = tmp_path / "odd.py"
    path.write_text(body, encoding="utf-8")
    code, out, err, _ = mathbode(tmp_path, "family", "check", str(path))
    assert code == 2 and "Traceback" not in out + err
    assert said in err


PADDED = "A crate holds {a} kg per box. How many kg do {p:>50000000} boxes hold?"


def test_a_template_padding_p_to_50_million_characters_fails_its_check_before_any_row(tmp_path):
    install(tmp_path, "pad", family(template=PADDED))
    code, out, err, _ = mathbode(tmp_path, "build", "--families", "pad.orbit", "--out", "out", "-q")
    assert code == 2 and "Traceback" not in err and "MemoryError" not in err
    assert "[template] the template formats {p:>50000000}: write {p} and {name} plain" in err
    assert not (tmp_path / "out").exists()
    path = tmp_path / "padded.py"
    path.write_text(family(template=PADDED), encoding="utf-8")
    code, out, err, _ = mathbode(tmp_path, "family", "check", str(path))
    assert code == 1 and "FAIL orbit" in out and "[template] the template formats {p:>50000000}" in out


TERMINAL_CONTROL = {
    "osc-8-link": ("\x1b]8;;https://evil.example\x1b\\Orbit\x1b]8;;\x1b\\", "A family."),
    "rtl-override": ("Orbit \u202eevil", "A family."),
    "osc-title": ("Orbit", "A family.\x1b]0;pwned\x07"),
}


@pytest.mark.parametrize("case", list(TERMINAL_CONTROL))
def test_a_plugin_familys_text_is_printed_escaped(tmp_path, case):
    title, summary = TERMINAL_CONTROL[case]
    install(tmp_path, "loud", family(title=title, summary=summary))
    code, out, err, _ = mathbode(tmp_path, "families", "loud.*")
    assert code == 0, err
    assert not any(c in out for c in "\x1b\x07\u202e"), out
    assert "\\x1b" in out or "\\u202e" in out
    code, out, _, _ = mathbode(tmp_path, "families", "loud.*", "--json")
    assert code == 0 and not any(c in out for c in "\x1b\x07\u202e")
    facts = json.loads(out)
    assert (facts["title"], facts["summary"]) == (title, summary)  # escaped for the terminal, not changed


@pytest.mark.parametrize("start", ["forked", "fresh interpreter"])
def test_either_start_loads_a_plugin_and_says_each_fate(tmp_path, start):
    """The two ways a child starts (`mathbode.core.child`): forked from the command where it has one
    thread, else a fresh interpreter (a thread kept alive forces the second). Run in an interpreter
    of its own: a test worker may hold other tests' threads, which would make every start fresh."""
    from .conftest import fresh_python

    bodies = {"good": family(), "looper": LOOPS_PAST_SIGALRM["blocks-signal"] + "while True:\n    pass\n"}
    bodies["quitter"] = "import os\nos._exit(3)\n"
    for name, body in bodies.items():
        (tmp_path / f"hostile_{name}.py").write_text(body, encoding="utf-8")
    program = f"""
        import json, sys, threading, time
        sys.path.insert(0, {str(tmp_path)!r})
        from importlib.metadata import EntryPoint
        from mathbode.builder.families.plugins import GROUP, load_plugins
        from mathbode.core.forking import can_fork

        stop = threading.Event()
        waiter = threading.Thread(target=stop.wait)
        if {start == "fresh interpreter"!r}:
            waiter.start()
        forked = can_fork()
        began = time.monotonic()
        plugins = load_plugins([EntryPoint(n, "hostile_" + n, GROUP) for n in {list(bodies)!r}], seconds=2)
        took = time.monotonic() - began
        stop.set()
        said = {{p.namespace: p.message for p in plugins.problems}}
        print(json.dumps({{"forked": forked, "took": took, "families": list(plugins.families), "said": said}}))
    """
    found = json.loads(fresh_python(program).splitlines()[-1])
    assert found["forked"] == (start == "forked")
    assert found["took"] < 60
    assert found["families"] == ["good.orbit"]
    said = found["said"]
    assert said["looper"].startswith("cannot be loaded: its import ran past 2 s and was killed")
    assert said["quitter"].startswith("cannot be loaded: its import exited with code 3 before it answered")
