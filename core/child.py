"""Code we did not write, run in a child process that the parent bounds from outside.

The child runs `python -m MODULE` in a session of its own (its own process group): the parent
writes the request (JSON) to its stdin and reads its answer, newline-delimited JSON messages, from
a pipe the child inherits; the child's stdout and stderr go nowhere. Where this process may fork
(`forking.can_fork`: Linux, one thread), the child is a fork of it that runs MODULE as its main,
sharing what is loaded (Python, sympy, numpy: about a second and a half a fresh interpreter
spends importing them); elsewhere a fresh interpreter. Every bound is kept by the parent or by
the kernel, never by the child's goodwill:

- wall clock: at the deadline the whole process group gets SIGKILL, which no handler, blocked
  signal or disarmed timer in the child can delay;
- memory: the child caps its address space (RLIMIT_AS, soft and hard: what it holds when it
  starts plus `memory_bytes`) before any code we did not write runs; a process cannot raise its
  own hard limit again;
- size of the answer: a child that sends more than `max_bytes` is killed.

What the child does to itself (exit with any code, from any thread; close its descriptors; crash
on a signal) ends only the child: the parent reads it as the child's fate, a sentence the caller
reports, never the command's exit code or output. Messages are plain JSON (numbers, text, lists,
objects): nothing the child sends can become an object that runs code in the parent.
"""

from __future__ import annotations

import json
import os
import resource
import runpy
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from .forking import can_fork

#: Descriptors above this are not looked for when a forked child closes the parent's.
_MAX_FD = 65536
#: What a child may send in all: far above a plugin's declarations (kilobytes each).
MAX_ANSWER_BYTES = 64 * 2**20
#: The child's own start (Python and the modules it imports before its first step) runs our code,
#: not the code it is asked to run: it gets this long, or the step's bound if longer, however
#: short the step's bound (a loaded machine starts Python and sympy in seconds, not one).
START_SECONDS = 30.0
#: A child that has closed its answer pipe (or sent its last message) gets this long to exit by
#: itself, so that its own exit code can be reported, before it is killed.
EXIT_GRACE_SECONDS = 1.0


@dataclass
class ChildRun:
    """What a bounded child did: the messages it sent (each a JSON object, in order), whether it
    finished (sent `{"done": true}`), and otherwise its fate, said as a verb phrase ("exited with
    code 3", "ran past 2 s and was killed") for the caller to put after a subject."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False
    fate: str | None = None
    #: The last step the child announced ({"step": N}) before it finished or met its fate.
    step: int | None = None


def run_bounded(
    module: str,
    request: dict[str, Any],
    *,
    step_seconds: float,
    steps: int,
    memory_bytes: int,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> ChildRun:
    """Run `module` as a child's main (forked, or `python -m module`) on `request`, and read what
    it answers and what became of it. The child has `START_SECONDS` for its start, and
    `step_seconds` for each of at most `steps` steps (a message {"step": N} with a new N starts the
    next one's clock); whatever happens, this returns within START_SECONDS + steps * step_seconds
    and a second."""
    read_fd, write_fd = os.pipe()
    stdin_read, stdin_write = os.pipe()
    argv = [module, str(write_fd), str(memory_bytes)]
    try:
        child = _fork(argv, stdin_read, write_fd) if can_fork() else _spawn(argv, stdin_read, write_fd)
    finally:
        os.close(write_fd)
        os.close(stdin_read)
    run = ChildRun()
    try:
        _converse(stdin_write, read_fd, json.dumps(request).encode(), run, step_seconds, steps, max_bytes)
    except BaseException:  # Ctrl-C (or a bug of ours): the child goes at once, with what it started
        _kill_group(child.pid)
        child.wait()
        raise
    finally:
        os.close(read_fd)
    _end(child, run)
    return run


class _Forked:
    """A forked child, waited for as `subprocess.Popen` is (a negative code: ended by that signal)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def wait(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def _spawn(argv: list[str], stdin_fd: int, answer_fd: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", *argv],
        stdin=stdin_fd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(answer_fd,),
        start_new_session=True,  # its own process group: one SIGKILL ends it and what it forked
        env=env,
    )


def _fork(argv: list[str], stdin_fd: int, answer_fd: int) -> _Forked:
    for stream in (sys.stdout, sys.stderr):  # what we printed is written once, by us
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    pid = os.fork()
    if pid:
        return _Forked(pid)
    try:  # the child: a clean start, then MODULE as its main, as `python -m` would run it
        os.setsid()
        signal.setitimer(signal.ITIMER_REAL, 0)  # a bound of ours armed in the parent is not the child's
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        os.dup2(stdin_fd, 0)
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, 1)
        os.dup2(nowhere, 2)
        # Nothing of the parent's stays open in it (its output files, a lock) but its answer pipe.
        os.closerange(3, answer_fd)
        os.closerange(answer_fd + 1, _MAX_FD)
        sys.argv = argv
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    finally:
        os._exit(70)  # `serve` exits itself; reached only if the module did not serve


def _converse(
    stdin_fd: int,
    read_fd: int,
    request: bytes,
    run: ChildRun,
    step_seconds: float,
    steps: int,
    max_bytes: int,
) -> None:
    os.set_blocking(stdin_fd, False)  # a child that never reads its request cannot block us
    selector = selectors.DefaultSelector()
    selector.register(read_fd, selectors.EVENT_READ)
    selector.register(stdin_fd, selectors.EVENT_WRITE)
    stdin_open = True
    pending, received, buffer = memoryview(request), 0, b""
    deadline, started = time.monotonic() + max(step_seconds, START_SECONDS), 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                run.fate = (
                    f"ran past {step_seconds:g} s and was killed"
                    if started
                    else f"did not start within {max(step_seconds, START_SECONDS):g} s and was killed"
                )
                return
            for key, _ in selector.select(left):
                if key.fileobj == stdin_fd:
                    try:
                        pending = pending[os.write(stdin_fd, pending) :]
                    except OSError:  # the child closed its stdin or died: its fate says which
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(stdin_fd)
                        os.close(stdin_fd)
                        stdin_open = False
                    continue
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    return
                received += len(chunk)
                if received > max_bytes:
                    run.fate = f"sent more than {max_bytes // 2**20} MiB and was killed"
                    return
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    message = _message(line)
                    if message is None:
                        run.fate = "sent something that is not a JSON object and was killed"
                        return
                    if message.get("done") is True:
                        run.finished = True
                        return
                    step = message.get("step")
                    if isinstance(step, int) and not isinstance(step, bool) and step != run.step and started < steps:
                        run.step, started = step, started + 1
                        deadline = time.monotonic() + step_seconds
                        continue
                    run.messages.append(message)
    finally:
        selector.close()
        if stdin_open:
            os.close(stdin_fd)


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _end(child: subprocess.Popen[bytes] | _Forked, run: ChildRun) -> None:
    """Kill what is left of the child's process group and reap the child, reading its own exit
    code first when it exits by itself (its fate, unless it finished)."""
    if run.fate is None:
        exited = _exited_within(child.pid, EXIT_GRACE_SECONDS)
        if not exited and not run.finished:
            run.fate = "closed its answer pipe without answering and was killed"
    # The leader is not reaped yet (waitid's WNOWAIT), so its group id cannot name another group.
    _kill_group(child.pid)
    code = child.wait()
    if run.fate is None and not run.finished:
        run.fate = _said(code)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _exited_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _said(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was ended by {name}"
    return f"exited with code {code} before it answered"


# -- the child's side ----------------------------------------------------------------------
def serve(work: Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], None]) -> NoReturn:
    """The child's main: cap its memory, read the request, let `work(request, send)` answer, say
    done, and exit at once (a thread the child's code started cannot keep it alive)."""
    answer_fd, memory = int(sys.argv[1]), int(sys.argv[2])
    if memory > 0:
        limit = _address_space() + memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with open(0, "rb", closefd=False) as stdin:  # fd 0 itself: `sys.stdin` may be another object (a test's)
        request = json.loads(stdin.read())

    def send(message: dict[str, Any]) -> None:
        data = memoryview((json.dumps(message, allow_nan=False) + "\n").encode())
        while data:
            data = data[os.write(answer_fd, data) :]

    work(request, send)
    send({"done": True})
    os._exit(0)


def _address_space() -> int:
    """The bytes of address space this process holds now (0 where /proc does not say)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0
