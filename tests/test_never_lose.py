"""Never lose a user's file, never corrupt an answer (issue #32): what a second hostile campaign
found. Races are driven by hooks at the moment they matter, never by sleeping."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.builder import resolve_families
from mathbode.builder.oracle import baseline_lines
from mathbode.builder.release import build_release
from mathbode.cli.baseline import main as baseline_cli
from mathbode.cli.build import main as build_cli
from mathbode.cli.convert import main as convert_cli
from mathbode.cli.prompts import main as prompts_cli
from mathbode.cli.run import main as run_cli
from mathbode.cli.score import main as score_cli
from mathbode.core import atomic
from mathbode.core.atomic import OWNERSHIP_FILE
from mathbode.core.errors import UsageError
from mathbode.runner.journal import OutputLock
from mathbode.schema.keys import row_key
from mathbode.schema.selection import select_rows


@pytest.fixture
def stub(truth_stub):
    return truth_stub


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
        a.write_bytes(b"")  # the first run's journal, just opened
        result = _run(stub, "-o", b, "--limit", "3")
    assert result.exit_code == 2
    assert f"Error: -o {b}: another mathbode run (process {os.getpid()}) is writing it." in result.output
    assert a.read_bytes() == b"" and stub.requests == 0


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
    truth = {row_key(line): line["response"] for line in baseline_lines(rows)}
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    # By key: the runner writes each answer as it completes, in whatever order the requests finish.
    written = {row_key(line): line["response"] for line in lines}
    assert len(lines) == len(written) == 64
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


# Items 2, 5, 6, 7, 9: output folders.


def _score(*args):
    return CliRunner().invoke(score_cli, [str(a) for a in args])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _hidden_leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture(params=["exchange", "two-renames"])
def swap_kind(request, monkeypatch):
    if request.param == "two-renames":
        monkeypatch.setenv("MATHBODE_NO_EXCHANGE", "1")
    return request.param


def test_a_file_saved_into_a_report_folder_while_scoring_is_kept(smoke, tmp_path, monkeypatch, swap_kind):
    out = tmp_path / "rep"
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    before = _snapshot(out)
    monkeypatch.setattr(atomic, "_before_swap", lambda: (out / "notes.txt").write_bytes(b"mine\n"))
    result = _score(smoke, "--out", out, "--no-plots")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: --out {out}: holds files mathbode did not write (notes.txt); it changed while mathbode was "
        "writing, and nothing was replaced. Move your files out of the folder and run the command again."
    )
    assert _snapshot(out) == {**before, "notes.txt": b"mine\n"}
    assert _hidden_leftovers(tmp_path) == []


def test_a_file_saved_into_a_release_folder_while_building_is_kept(tmp_path, monkeypatch, swap_kind):
    out = tmp_path / "dist"
    build_release(resolve_families("linear_solve"), out)
    before = _snapshot(out)
    monkeypatch.setattr(atomic, "_before_swap", lambda: (out / "data" / "notes.txt").write_bytes(b"mine\n"))
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out), "-q"])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: --out {out}: holds files mathbode did not write (data/notes.txt); it changed while mathbode was "
        "writing, and nothing was replaced. Move your files out of the folder and run the command again.\n"
    )
    assert _snapshot(out) == {**before, "data/notes.txt": b"mine\n"}
    assert _hidden_leftovers(tmp_path) == []


def test_a_file_saved_in_the_instant_of_the_swap_puts_the_old_folder_back(smoke, tmp_path, monkeypatch, swap_kind):
    out = tmp_path / "rep"
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    before = _snapshot(out)
    monkeypatch.setattr(atomic, "_after_swap", lambda old: (old / "notes.txt").write_bytes(b"mine\n"))
    result = _score(smoke, "--out", out, "--no-plots")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: --out {out}: files were saved into it while mathbode was writing (notes.txt); nothing was "
        "replaced. Move them out of the folder and run the command again."
    )
    assert _snapshot(out) == {**before, "notes.txt": b"mine\n"}
    assert _hidden_leftovers(tmp_path) == []


def test_replacing_deletes_only_the_files_the_record_lists(smoke, tmp_path, monkeypatch, swap_kind):
    out = tmp_path / "rep"
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    removed = []
    real_remove = atomic._remove_written
    monkeypatch.setattr(
        atomic, "_remove_written", lambda old, listed, *a: removed.append(set(listed)) or real_remove(old, listed, *a)
    )
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    assert removed == [set(json.loads((out / OWNERSHIP_FILE).read_text())["files"])]
    assert _hidden_leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["score", "build"])
def test_a_symlinked_out_is_refused_before_anything_changes(smoke, tmp_path, command):
    elsewhere = tmp_path / "elsewhere"
    target = elsewhere / "myreport"
    target.mkdir(parents=True)
    (target / "mine.txt").write_bytes(b"mine\n")
    link = tmp_path / "rep"
    link.symlink_to(target)
    if command == "score":
        result = _score(smoke, "--out", link, "--no-plots")
    else:
        result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(link), "-q"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: --out {link}: is a symbolic link (to {target}); mathbode replaces the folder whole and will not "
        "replace your link. Give the folder it points to, or another --out."
    )
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["myreport"] and _snapshot(target) == {"mine.txt": b"mine\n"}


def _loops(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "self").symlink_to("self")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    return {"self": tmp_path / "self", "a-b-a": tmp_path / "a"}


LOOP = "a loop of symbolic links (a link that leads back to itself); give a real file or folder."


@pytest.mark.parametrize("shape", ["self", "a-b-a"])
@pytest.mark.parametrize(
    "command",
    ["score --out", "build --out", "prompts -o", "baseline -o", "convert log", "convert -o", "run -o", "run --report"],
)
def test_a_symlink_loop_is_a_message_naming_it(smoke, tmp_path, command, shape):
    loop = _loops(tmp_path)[shape]
    log = tmp_path / "samples_x.jsonl"
    log.write_text("")
    run = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--preset", "SMOKE"]
    folder = (
        f"--out {loop}: is a symbolic link (to {os.readlink(loop)}); mathbode replaces the folder whole and "
        "will not replace your link. Give the folder it points to, or another --out."
    )
    cases = {
        "score --out": (score_cli, [str(smoke), "--out", str(loop), "--no-plots"], folder),
        "build --out": (build_cli, ["--families", "linear_solve", "--out", str(loop), "-q"], folder),
        "prompts -o": (prompts_cli, ["-o", str(loop)], f"-o {loop}: {LOOP}"),
        "baseline -o": (baseline_cli, ["--preset", "SMOKE", "-o", str(loop)], f"-o {loop}: {LOOP}"),
        "convert log": (convert_cli, [str(loop), "-o", str(tmp_path / "c.jsonl")], f"{loop}: {LOOP}"),
        "convert -o": (convert_cli, [str(log), "-o", str(loop)], f"-o {loop}: {LOOP}"),
        "run -o": (run_cli, [*run, "-o", str(loop)], f"-o {loop}: {LOOP}"),
        "run --report": (
            run_cli,
            [*run, "-o", str(tmp_path / "p.jsonl"), "--score", "--report", str(loop)],
            f"--report {loop}: {LOOP}",
        ),
    }
    cli, argv, said = cases[command]
    result = CliRunner().invoke(cli, argv, env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == f"Error: {said}"
    assert os.path.islink(loop) and not (tmp_path / "p.jsonl").exists()


def _report_folder(tmp_path: Path, record: Path | None = None) -> Path:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").write_bytes(b"my report\n")
    return out


def test_a_deeply_nested_ownership_record_is_not_a_crash(smoke, tmp_path):
    out = _report_folder(tmp_path)
    (out / OWNERSHIP_FILE).write_text("[" * 200_000)
    before = _snapshot(out)
    result = _score(smoke, "--out", out, "--no-plots")
    assert isinstance(result.exception, SystemExit) and result.exit_code == 2
    assert result.output == (
        f"Error: --out {out}: the folder is not empty and mathbode did not write it (no readable {OWNERSHIP_FILE} "
        "listing its files); refusing to replace it. Choose another --out, or empty the folder yourself.\n"
    )
    assert _snapshot(out) == before


def test_a_huge_ownership_record_is_not_read(smoke, tmp_path):
    out = _report_folder(tmp_path)
    (out / OWNERSHIP_FILE).write_bytes(b" " * (atomic.MAX_RECORD_BYTES + 1) + b"{}")
    result = _score(smoke, "--out", out, "--no-plots")
    assert result.exit_code == 2 and "no readable .mathbode-written.json" in result.output


def test_a_deeply_nested_manifest_a_record_lists_is_not_a_crash(tmp_path):
    from mathbode.core.digests import file_sha256

    out = tmp_path / "dist"
    build_release(resolve_families("linear_solve"), out)
    (out / "MANIFEST.json").write_text('{"families": ' + "[" * 100_000)
    record = json.loads((out / OWNERSHIP_FILE).read_text())
    record["files"]["MANIFEST.json"] = file_sha256(out / "MANIFEST.json")
    (out / OWNERSHIP_FILE).write_text(json.dumps(record))
    result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out), "-q"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0  # the record proves the folder ours: replaced, never a RecursionError
    assert list(json.loads((out / "MANIFEST.json").read_text())["families"]) == ["linear_solve"]


@pytest.fixture
def alarm():
    """Fail, instead of hanging the suite, if the test blocks (a FIFO read waits for a writer forever)."""
    import signal

    class Hung(BaseException):  # not an OSError: no handler of the code under test may take it for one
        pass

    def hung(signum, frame):
        raise Hung("blocked reading a FIFO")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("command", ["score", "build", "run --report"])
def test_an_ownership_record_that_is_a_fifo_does_not_hang(smoke, tmp_path, alarm, command):
    out = _report_folder(tmp_path)
    os.mkfifo(out / OWNERSHIP_FILE)
    if command == "score":
        result = _score(smoke, "--out", out, "--no-plots")
    elif command == "build":
        result = CliRunner().invoke(build_cli, ["--families", "linear_solve", "--out", str(out), "-q"])
    else:
        argv = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "p.jsonl")]
        result = CliRunner().invoke(run_cli, [*argv, "--score", "--report", str(out)], env={"OPENAI_API_KEY": None})
    option = "--report" if command == "run --report" else "--out"
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        f"Error: {option} {out}: the folder is not empty and mathbode did not write it (no readable "
        f"{OWNERSHIP_FILE} listing its files); refusing to replace it. Choose another {option}, or empty the "
        "folder yourself."
    )
    assert (out / "report.md").read_bytes() == b"my report\n"


# Item 11 and 13: a resume keeps only lines the validator accepts, and a sweep's answers are a prefix.


def _lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write_lines(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))  # json.dumps writes NaN as NaN


RESUME = (
    "the file cannot be resumed (a resume keeps only lines the validator accepts). Fix or remove the line, or "
    "use --overwrite to start again."
)


@pytest.mark.parametrize(
    "tamper, said",
    [
        ("time_step 64", "line 6: time_step: expected a number <= 63, found 64"),
        (
            "chirp frequency_cycles abc",
            'line 3: frequency_cycles: expected a JSON number or null, found string "abc"',
        ),
        (
            "model",
            "file: model: expected the same model on every line, found 'truth' (first on line 1), 'other' "
            "(first on line 4)",
        ),
        ("NaN in meta", "line 2: expected finite numbers (use null for no answer), found NaN"),
    ],
    ids=["time-step-64", "chirp-frequency-abc", "model-changed", "nan-in-meta"],
)
@pytest.mark.parametrize("protocol", ["stateless", "sequential"])
def test_a_resume_refuses_a_line_the_validator_refuses(truth_stub, tmp_path, tamper, said, protocol):
    output = tmp_path / "p.jsonl"
    preset = ["--preset", "CHIRP_STEP"] if tamper.startswith("chirp") else []
    assert _run(truth_stub, "-o", output, "--limit", "5", "--protocol", protocol, *preset).exit_code == 0
    lines = _lines_of(output)
    if tamper == "time_step 64":
        lines.append({**lines[0], "time_step": 64})
    elif tamper.startswith("chirp"):
        assert lines[2]["signal_type"] == "chirp"
        lines[2]["frequency_cycles"] = "abc"
    elif tamper == "model":
        lines[3]["model"] = "other"
    else:
        lines[1]["meta"]["latency_s"] = float("nan")
    _write_lines(output, lines)
    before = output.read_bytes()
    result = _run(truth_stub, "-o", output, "--protocol", protocol, *preset)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == f"Error: {output}, {said}; {RESUME}"
    assert output.read_bytes() == before


def test_a_sequential_sweep_with_a_gap_is_refused_naming_file_line_and_step(stub, tmp_path):
    from mathbode.schema.keys import format_key, row_key

    output = tmp_path / "p.jsonl"
    assert _run(stub, "-o", output, "--limit", "12", "--protocol", "sequential").exit_code == 0
    lines = _lines_of(output)
    assert [line["time_step"] for line in lines] == list(range(12))
    del lines[10]  # step 11 stays, two beyond the answered prefix 0..9
    _write_lines(output, lines)
    before, asked = output.read_bytes(), stub.requests
    result = _run(stub, "-o", output, "--protocol", "sequential")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"Error: {output}, line 11: step 11 of sweep {format_key(row_key(lines[10]))} is answered but step 10 is "
        "not; a sequential sweep's answers must be its first steps, in order (its conversation is replayed as it "
        "was asked), so the file cannot be resumed. Remove that sweep's lines after step 10, or use --overwrite "
        "to start again."
    )
    assert output.read_bytes() == before and stub.requests == asked + 1  # the model list only: no step asked


def test_a_sequential_step_answered_with_a_prediction_is_named_as_answered(stub, tmp_path):
    from mathbode.schema.keys import format_key, row_key

    output = tmp_path / "p.jsonl"
    assert _run(stub, "-o", output, "--limit", "5", "--protocol", "sequential").exit_code == 0
    lines = _lines_of(output)
    del lines[2]["response"]
    lines[2]["prediction"] = 1.5
    _write_lines(output, lines)
    before = output.read_bytes()
    result = _run(stub, "-o", output, "--protocol", "sequential")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"Error: {output}, line 3: step 2 of sweep {format_key(row_key(lines[2]))} is answered with a prediction, "
        "not a response; a sequential resume replays the model's own text as the conversation, so the file cannot "
        "be resumed. Use --overwrite to start again."
    )
    assert "which is not answered" not in result.output and output.read_bytes() == before


def test_a_clean_sequential_resume_still_continues(stub, tmp_path):
    output = tmp_path / "p.jsonl"
    assert _run(stub, "-o", output, "--limit", "5", "--protocol", "sequential").exit_code == 0
    assert _run(stub, "-o", output, "--limit", "5", "--protocol", "sequential").exit_code == 0
    assert [line["time_step"] for line in _lines_of(output)] == list(range(10))


# Items 8, 10 and 13: `mathbode convert` refuses what a submission cannot carry, and is bounded.


def _convert(*args):
    return CliRunner().invoke(convert_cli, [str(a) for a in args])


def _lm_eval_lines(reference, n: int = 3, **changes) -> list[dict]:
    rows = [r for r in reference.table.to_pylist() if r["family"] == "linear_solve"][:n]
    return [
        {"doc_id": i, "doc": row, "resps": [[f"[answer_start] {row['ground_truth']:.6f} [answer_end]"]]}
        for i, row in enumerate(rows)
    ]


def _samples_file(tmp_path: Path, samples: list[dict], name: str = "samples_t_2026-01-01T00-00-00.0.jsonl") -> Path:
    path = tmp_path / name
    # ensure_ascii: a lone surrogate is written as its \u escape, as a JSON writer of Python does
    path.write_text("".join(json.dumps(s, allow_nan=True) + "\n" for s in samples))
    return path


UNWRITABLE = "a submission cannot carry it (the validator refuses it). Nothing was written."


@pytest.mark.parametrize(
    "where, tamper, said",
    [
        (
            "response",
            lambda s: s.update(resps=[["[answer_start] 1.0\udcff [answer_end]"]]),
            "response: expected text without lone surrogates (\\ud800-\\udfff), found a lone surrogate",
        ),
        (
            "key field",
            lambda s: s["doc"].update(family="linear_solve\ud800"),
            "family: expected text without lone surrogates (\\ud800-\\udfff), found a lone surrogate",
        ),
        (
            "doc_id NaN",
            lambda s: s.update(doc_id=float("nan")),
            "meta.doc_id: expected finite numbers (use null for no answer), found NaN",
        ),
        (
            "doc_id Infinity",
            lambda s: s.update(doc_id=float("inf")),
            "meta.doc_id: expected finite numbers (use null for no answer), found Infinity",
        ),
        (
            "nested in a key field",
            lambda s: s["doc"].update(question_id=[0, float("nan")]),
            "question_id[1]: expected finite numbers (use null for no answer), found NaN",
        ),
    ],
    ids=["surrogate-response", "surrogate-key", "nan-doc-id", "inf-doc-id", "nan-nested-key"],
)
def test_convert_refuses_text_a_submission_cannot_carry_with_its_place(reference, tmp_path, where, tamper, said):
    samples = _lm_eval_lines(reference)
    tamper(samples[1])
    log = _samples_file(tmp_path, samples)
    before = log.read_bytes()
    result = _convert(log, "-o", tmp_path / "p.jsonl")
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == f"Error: {log} line 2: {said}; {UNWRITABLE}"
    assert not (tmp_path / "p.jsonl").exists() and log.read_bytes() == before


def test_convert_refuses_a_model_name_that_is_not_text(reference, tmp_path):
    log = _samples_file(tmp_path, _lm_eval_lines(reference))
    result = _convert(log, "-o", tmp_path / "p.jsonl", "--model", "m\udcff")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: --model 'm\\udcff': expected text without lone surrogates (\\ud800-\\udfff), found a lone surrogate."
    )
    assert not (tmp_path / "p.jsonl").exists()


def test_convert_stops_at_the_lines_validate_reads(reference, tmp_path, monkeypatch):
    from mathbode.integrations import convert
    from mathbode.schema.submission import max_submission_lines

    assert convert.MAX_LINES == max_submission_lines() == 94_080  # the bound validate keeps
    monkeypatch.setattr(convert, "MAX_LINES", 2)
    log = _samples_file(tmp_path, _lm_eval_lines(reference))
    result = _convert(log, "-o", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {log} line 3: more than 2 lines, more than the samples of a MathBode task; not read."
    )


def test_convert_stops_at_the_rows_a_submission_has_across_logs(reference, tmp_path, monkeypatch):
    from mathbode.integrations import convert

    monkeypatch.setattr(convert, "MAX_LINES", 3)
    samples = _lm_eval_lines(reference, 4)
    first = _samples_file(tmp_path, samples[:2], "samples_a_1.jsonl")
    second = _samples_file(tmp_path, samples[2:], "samples_b_1.jsonl")
    result = _convert(first, second, "-o", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {second} line 2: more than 3 rows in the logs (a submission has at most one line per row of the "
        "split, read to twice that); not the logs of one MathBode run. Nothing was written."
    )


def test_convert_refuses_a_line_longer_than_validate_reads(reference, tmp_path, monkeypatch):
    from mathbode.integrations import convert
    from mathbode.schema.submission import MAX_LINE_BYTES

    assert convert.MAX_SAMPLE_BYTES == MAX_LINE_BYTES
    monkeypatch.setattr(convert, "MAX_SAMPLE_BYTES", 1000)
    samples = _lm_eval_lines(reference)
    samples[1]["padding"] = "x" * 2000
    log = _samples_file(tmp_path, samples)
    result = _convert(log, "-o", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {log} line 2: longer than 1,000 bytes, more than a sample of a MathBode row; not read."
    )


def test_an_eval_entry_that_inflates_past_the_bound_is_not_read(tmp_path, monkeypatch):
    import zipfile

    pytest.importorskip("inspect_ai")
    log = tmp_path / "bomb.eval"
    with zipfile.ZipFile(log, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        archive.writestr("samples/1_epoch_1.json", b"\0" * (64 << 20 | 1))
    assert log.stat().st_size < 1 << 20
    result = _convert(log, "-o", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {log}: entry samples/1_epoch_1.json inflates to 67,108,865 bytes, more than a sample of a "
        "MathBode row (67,108,864); not read."
    )


def test_an_eval_of_endless_entries_is_not_read(tmp_path, monkeypatch):
    import zipfile

    pytest.importorskip("inspect_ai")
    from mathbode.integrations import convert

    assert convert.MAX_LOG_ENTRIES == 94_080 + 1_000
    monkeypatch.setattr(convert, "MAX_LOG_ENTRIES", 10)
    log = tmp_path / "many.eval"
    with zipfile.ZipFile(log, "w") as archive:
        for i in range(11):
            archive.writestr(f"samples/{i}_epoch_1.json", "{}")
    result = _convert(log, "-o", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {log}: 11 entries, more than a log of MathBode rows holds (10); not read."
    )


def _inspect_log(reference, tmp_path: Path, n: int = 3):
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from mathbode.schema.selection import key_fields

    rows = [r for r in reference.table.to_pylist() if r["family"] == "linear_solve"][:n]
    samples = [Sample(input=r["prompt"], target="x", id=i, metadata=key_fields(r)) for i, r in enumerate(rows)]

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content="[answer_start] 1.000000 [answer_end]")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=answer)
    (log,) = inspect_eval(
        Task(dataset=samples, solver=generate()), model=model, log_dir=str(tmp_path), display="none", log_realtime=False
    )
    return log


def test_an_inspect_json_log_whose_header_omits_its_samples_converts_them(reference, tmp_path):
    from inspect_ai.log import write_eval_log

    log = _inspect_log(reference, tmp_path / "logs")
    path = tmp_path / "log.json"
    write_eval_log(log, str(path), format="json")
    document = json.loads(path.read_text())
    document["eval"]["dataset"]["sample_ids"] = [0]  # the header lists one sample of the three
    path.write_text(json.dumps(document))
    result = _convert(path, "-o", tmp_path / "p.jsonl")
    assert result.exit_code == 0, result.output
    assert "log.json: 3 samples, 3 rows" in result.output
    assert "no MathBode rows" not in result.output and len(_lines_of(tmp_path / "p.jsonl")) == 3


@pytest.mark.parametrize("field", ["response", "metadata"])
@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_an_inspect_log_with_a_lone_surrogate_is_refused_with_its_sample(reference, tmp_path, field, fmt):
    import zipfile

    from inspect_ai.log import write_eval_log

    log = _inspect_log(reference, tmp_path / "logs")
    path = tmp_path / f"log.{fmt}"
    write_eval_log(log, str(path), format=fmt)

    def tamper(sample: dict) -> str:
        if field == "response":
            sample["output"]["choices"][0]["message"]["content"] = "[answer_start] 1\udcff [answer_end]"
            sample["output"]["completion"] = "[answer_start] 1\udcff [answer_end]"
            return "response"
        sample["metadata"]["signal_type"] = "sinusoid\udcff"
        return "signal_type"

    if fmt == "json":
        document = json.loads(path.read_text())
        said = tamper(document["samples"][1])
        path.write_text(json.dumps(document))
    else:
        with zipfile.ZipFile(path) as archive:
            entries = {name: archive.read(name) for name in archive.namelist()}
        sample = json.loads(entries["samples/1_epoch_1.json"])
        said = tamper(sample)
        entries["samples/1_epoch_1.json"] = json.dumps(sample).encode()
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in entries.items():
                archive.writestr(name, data)
    result = _convert(path, "-o", tmp_path / "p.jsonl")
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2
    if fmt == "eval":
        assert result.output.splitlines()[-1] == (
            f"Error: {path} sample 1 (epoch 1): {said}: expected text without lone surrogates (\\ud800-\\udfff), "
            f"found a lone surrogate; {UNWRITABLE}"
        )
    else:  # inspect's own reader of a .json log refuses the text first, naming the file
        assert result.output.splitlines()[-1].startswith(
            f"Error: {path}: not a readable inspect-ai log (ValueError: lone leading surrogate"
        )
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("kind", ["fifo", "dangling link"])
def test_run_writes_only_a_regular_file(stub, tmp_path, alarm, kind):
    output = tmp_path / "p.jsonl"
    if kind == "fifo":
        os.mkfifo(output)
    else:
        output.symlink_to(tmp_path / "elsewhere.jsonl")
    result = _run(stub, "-o", output, "--limit", "3")
    assert result.exit_code == 2
    assert result.output == (
        f"Error: -o {output}: is not a regular file (a device, pipe or socket, or a link to nothing); give a file "
        "to write.\n"
    )
    assert not (tmp_path / "elsewhere.jsonl").exists() and stub.requests == 0


def test_a_report_file_edited_while_scoring_is_kept(smoke, tmp_path, monkeypatch):
    out = tmp_path / "rep"
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    monkeypatch.setattr(atomic, "_before_swap", lambda: (out / "report.md").write_bytes(b"my edits\n"))
    result = _score(smoke, "--out", out, "--no-plots")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: --out {out}: holds files changed since mathbode wrote them (report.md); it changed while mathbode "
        "was writing, and nothing was replaced. Move your files out of the folder and run the command again."
    )
    assert (out / "report.md").read_bytes() == b"my edits\n" and _hidden_leftovers(tmp_path) == []


def test_a_record_naming_files_outside_its_folder_deletes_nothing_outside(smoke, tmp_path):
    from mathbode.core.digests import file_sha256

    out = tmp_path / "rep"
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"precious\n")
    record = json.loads((out / OWNERSHIP_FILE).read_text())
    record["files"]["../precious.txt"] = record["files"][str(outside)] = file_sha256(outside)
    (out / OWNERSHIP_FILE).write_text(json.dumps(record))
    assert _score(smoke, "--out", out, "--no-plots").exit_code == 0
    assert outside.read_bytes() == b"precious\n"


def test_a_file_put_at_the_locks_name_during_a_run_is_not_deleted(tmp_path):
    lock = tmp_path / ".p.jsonl.lock"
    with OutputLock(tmp_path / "p.jsonl"):
        lock.unlink()
        lock.write_bytes(b"mine\n")
    assert lock.read_bytes() == b"mine\n"
