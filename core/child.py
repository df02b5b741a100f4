"""Code we did not write, run in a child process that the parent bounds from outside.

The parent starts `python -m MODULE` in a session of its own (its own process group), writes the
request (JSON) to its stdin and reads its answer, newline-delimited JSON messages, from a pipe
the child inherits; the child's stdout and stderr go nowhere. Every bound is kept by the parent
or by the kernel, never by the child's goodwill:

- wall clock: at the deadline the whole process group gets SIGKILL, which no handler, blocked
  signal or disarmed timer in the child can delay;
- memory: the child caps its address space (RLIMIT_AS, soft and hard) before any code we did not
  write runs; a process cannot raise its own hard limit again;
- size of the answer: a child that sends more than `max_bytes` is killed.

What the child does to itself (exit with any code, from any thread; close its descriptors; crash
on a signal) ends only the child: the parent reads it as the child's fate, a sentence the caller
reports, never the command's exit code or output. Messages are plain JSON (numbers, text, lists,
objects): nothing the child sends can become an object that runs code in the parent.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

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
    """Run `python -m module` on `request`. The child has `START_SECONDS` for its start, and
    `step_seconds` for each of at most `steps` steps (a message {"step": N} with a new N starts the
    next one's clock); whatever happens, this returns within START_SECONDS + steps * step_seconds
    and a second."""
    read_fd, write_fd = os.pipe()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", module, str(write_fd), str(memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write_fd,),
            start_new_session=True,  # its own process group: one SIGKILL ends it and what it forked
            env=env,
        )
    finally:
        os.close(write_fd)
    run = ChildRun()
    try:
        _converse(child, read_fd, json.dumps(request).encode(), run, step_seconds, steps, max_bytes)
    except BaseException:  # Ctrl-C (or a bug of ours): the child goes at once, with what it started
        _kill_group(child.pid)
        child.wait()
        raise
    finally:
        os.close(read_fd)
    _end(child, run)
    return run


def _converse(
    child: subprocess.Popen[bytes],
    read_fd: int,
    request: bytes,
    run: ChildRun,
    step_seconds: float,
    steps: int,
    max_bytes: int,
) -> None:
    assert child.stdin is not None
    os.set_blocking(child.stdin.fileno(), False)  # a child that never reads its request cannot block us
    selector = selectors.DefaultSelector()
    selector.register(read_fd, selectors.EVENT_READ)
    selector.register(child.stdin, selectors.EVENT_WRITE)
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
                if key.fileobj is child.stdin:
                    try:
                        pending = pending[os.write(child.stdin.fileno(), pending) :]
                    except OSError:  # the child closed its stdin or died: its fate says which
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(child.stdin)
                        child.stdin.close()
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
        if child.stdin and not child.stdin.closed:
            child.stdin.close()


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _end(child: subprocess.Popen[bytes], run: ChildRun) -> None:
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
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    request = json.loads(sys.stdin.buffer.read())

    def send(message: dict[str, Any]) -> None:
        data = memoryview((json.dumps(message, allow_nan=False) + "\n").encode())
        while data:
            data = data[os.write(answer_fd, data) :]

    work(request, send)
    send({"done": True})
    os._exit(0)
