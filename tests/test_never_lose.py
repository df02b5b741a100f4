"""Never lose a user's file, never corrupt an answer (issue #32): what a second hostile campaign
found. Races are driven by hooks at the moment they matter, never by sleeping."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder.oracle import baseline_lines
from mathbode.cli.run import main as run_cli
from mathbode.core.errors import UsageError
from mathbode.runner.journal import OutputLock
from mathbode.schema.selection import select_rows

from .fixtures.stub_openai import StubOpenAI


@pytest.fixture
def stub(reference):
    rows = select_rows(reference.table, "SMOKE")
    answers = {r["prompt"]: line["response"] for r, line in zip(rows, baseline_lines(rows), strict=True)}
    server = StubOpenAI(answers).start()
    yield server
    server.stop()


def _run(server, *args, env=None):
    argv = ["--base-url", server.base_url, "--model", "truth", *[str(a) for a in args]]
    return CliRunner().invoke(run_cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None, **(env or {})})


# Item 1 and 13: a lock file is never opened through a link, nor read or written unless regular.


def test_a_symlinked_lock_never_touches_the_file_it_points_to(stub, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    (tmp_path / ".p.jsonl.lock").symlink_to(victim)
    result = _run(stub, "-o", tmp_path / "p.jsonl", "--limit", "3")
    assert result.exit_code == 2
    assert result.output == (
        f"Error: -o {tmp_path / 'p.jsonl'}: the lock file {tmp_path / '.p.jsonl.lock'} is a symbolic link; "
        "mathbode will not write through it. Remove it, or choose another -o.\n"
    )
    assert victim.read_bytes() == b"precious\n" and stub.requests == 0
    assert (tmp_path / ".p.jsonl.lock").is_symlink()


def test_a_hard_linked_lock_is_not_emptied(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    os.link(victim, tmp_path / ".p.jsonl.lock")
    with pytest.raises(UsageError) as refused:
        with OutputLock(tmp_path / "p.jsonl"):
            pass
    assert "the lock file" in str(refused.value) and "has 2 names (a hard link to another file)" in str(refused.value)
    assert victim.read_bytes() == b"precious\n"


def test_a_users_file_under_the_locks_name_is_not_emptied(tmp_path):
    (tmp_path / ".p.jsonl.lock").write_bytes(b"my notes\n")
    with pytest.raises(UsageError) as refused:
        with OutputLock(tmp_path / "p.jsonl"):
            pass
    assert str(refused.value).endswith(
        "holds something other than a process id; mathbode will not write through it. Remove it, or choose another -o."
    )
    assert (tmp_path / ".p.jsonl.lock").read_bytes() == b"my notes\n"


def test_a_stale_lock_of_a_dead_run_is_taken(tmp_path):
    (tmp_path / ".p.jsonl.lock").write_bytes(b"999999\n")
    with OutputLock(tmp_path / "p.jsonl"):
        assert (tmp_path / ".p.jsonl.lock").read_text() == f"{os.getpid()}\n"
    assert not (tmp_path / ".p.jsonl.lock").exists()


@pytest.mark.parametrize("kind", ["fifo", "devnull"])
def test_a_lock_that_is_a_fifo_or_a_link_to_dev_null_is_named(stub, tmp_path, kind):
    lock = tmp_path / ".p.jsonl.lock"
    if kind == "fifo":
        os.mkfifo(lock)
        why = "is not a regular file (a device, pipe or socket)"
    else:
        lock.symlink_to("/dev/null")
        why = "is a symbolic link"
    result = _run(stub, "-o", tmp_path / "p.jsonl", "--limit", "3")
    assert result.exit_code == 2
    assert result.output == (
        f"Error: -o {tmp_path / 'p.jsonl'}: the lock file {lock} {why}; mathbode will not write through it. "
        "Remove it, or choose another -o.\n"
    )
    assert "Invalid argument" not in result.output


# Item 4: the lock belongs to the file, not to the name given.


def test_a_symbolic_link_to_the_output_takes_the_same_lock(stub, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    b.symlink_to(a.name)
    with OutputLock(a):
        result = _run(stub, "-o", b, "--limit", "3")
    assert result.exit_code == 2
    assert f"Error: -o {b}: another mathbode run (process {os.getpid()}) is writing it." in result.output
    assert not a.exists() and stub.requests == 0


def test_a_hard_link_to_the_output_is_refused(stub, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert _run(stub, "-o", a, "--limit", "5").exit_code == 0
    before = a.read_bytes()
    os.link(a, b)
    with OutputLock(a):
        result = _run(stub, "-o", b, "--limit", "5")
    assert result.exit_code == 2
    assert result.output == (
        f"Error: -o {b}: another mathbode run is writing this file under another name (a hard or symbolic link "
        "to it). Wait for it to finish, or choose another -o.\n"
    )
    assert a.read_bytes() == before


def test_a_file_created_by_the_run_is_locked_under_its_other_names(stub, tmp_path):
    """The first run creates the file, then a hard link is made: the first run's lock covers it."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with OutputLock(a) as lock:
        a.write_bytes(b"")
        lock.hold_output()
        os.link(a, b)
        with pytest.raises(UsageError, match="under another name"):
            with OutputLock(b):
                pass


# Item 3: redaction never changes an answer that does not hold the credential.


@pytest.mark.parametrize("key", ["0", "1", "a", "e", "[", " ", "EMPTY", "ollama"])
def test_a_placeholder_key_never_rewrites_answers(stub, reference, tmp_path, key):
    result = _run(stub, "-o", tmp_path / "p.jsonl", "--limit", "64", env={"OPENAI_API_KEY": key})
    assert result.exit_code == 0, result.output
    rows = select_rows(reference.table, "SMOKE")[:64]
    truth = [line["response"] for line in baseline_lines(rows)]
    written = [json.loads(line)["response"] for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert written == truth  # byte for byte: 0s, 1s and brackets untouched


def test_the_credential_boundary_is_eight_characters():
    from mathbode.core.redact import MIN_SECRET_CHARS, redact, redact_secret

    assert MIN_SECRET_CHARS == 8
    answer = "[answer_start] 1234567.000000 [answer_end] abcdefgh"
    assert redact_secret(answer, "abcdefg") == answer  # 7 characters: a placeholder, never redacted
    assert redact_secret(answer, "abcdefgh") == "[answer_start] 1234567.000000 [answer_end] [redacted]"
    assert redact_secret(answer, "abcdefghi") == answer  # a credential the answer does not hold
    assert redact_secret(answer, "       0") == answer  # blanks do not make a credential
    # An answer is only ever stripped of the key: no pattern of a message is applied to it.
    assert redact_secret("Bearer of news: hf_abcdefgh", "sk-long-secret") == "Bearer of news: hf_abcdefgh"
    assert redact("error 404 for key 0", "0") == "error 404 for key 0"


# Item 12: the Hub token in use is redacted whatever its form.


def _hub_refusal(message: str):
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    request = httpx2.Request("POST", "https://hub.example/api/datasets/o/r/commit/main")
    response = httpx2.Response(500, request=request, headers={"X-Error-Message": message})
    return HfHubHTTPError(f"500 Server Error: {message}", response=response, server_message=message)


@pytest.mark.parametrize("where", ["HF_TOKEN", "argument"])
def test_a_hub_token_of_any_form_echoed_by_the_hub_is_redacted(monkeypatch, where):
    from mathbode.hub.errors import PublishError, hub_errors

    token = "plain-secret-token"
    monkeypatch.setenv("HF_TOKEN", token if where == "HF_TOKEN" else "")
    with pytest.raises(PublishError) as refused:
        with hub_errors("https://hub.example", "o/r", token=token if where == "argument" else None):
            raise _hub_refusal(f"token {token} is not allowed here")
    assert str(refused.value) == "The Hub refused the request (500): token [redacted] is not allowed here"


def test_a_hub_token_echoed_while_reading_is_redacted(monkeypatch):
    from mathbode.hub.errors import HubError, hub_errors

    monkeypatch.setenv("HF_TOKEN", "corp-token-42-xyz")
    with pytest.raises(HubError) as refused:
        with hub_errors("https://hub.example", "o/r", spec="hub:o/r", revision=None):
            raise _hub_refusal("bad credentials corp-token-42-xyz")
    assert str(refused.value) == "hub:o/r: the Hub refused the download: bad credentials [redacted]."
