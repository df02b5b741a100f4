"""The files a run and a batch read and write are input too (issue 40, section 4): `batch read -o`
never writes onto the batch's own files or a user's record, result files that are a pipe or a
device are refused (never read as a file), completions of another model are said, a hostile
tokenizer is a message; a run-in journal is replaced only when proved ours, and a resume after a
torn or tampered one reports what it replays.

Each case failed before the fix: a file overwritten, a hang or MemoryError, silence, a traceback."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from mathbode.cli.batch import main as batch_cli
from mathbode.cli.run import main as run_cli
from mathbode.runner.run import record_path
from mathbode.runner.run_in import run_in_path

ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}
ANSWER = "[answer_start] 1.000000 [answer_end]"


@pytest.fixture(scope="module")
def batch_folder(tmp_path_factory) -> Path:
    """A SMOKE batch of one family, deduplicated (a few dozen requests)."""
    folder = tmp_path_factory.mktemp("batch") / "b"
    argv = ["write", "--model", "org/model-a", "--families", "linear_solve", "--dedupe", "-o", str(folder)]
    result = CliRunner().invoke(batch_cli, argv, env=ENV)
    assert result.exit_code == 0, result.output
    return folder


def _results(batch_folder: Path, path: Path, model: str = "org/model-a", every: int = 1) -> Path:
    """The batch answered in the Batch API's output format, each completion naming `model` (every `every`-th)."""
    lines = []
    for n, raw in enumerate((batch_folder / "requests.jsonl").read_text().splitlines()):
        request = json.loads(raw)
        named = model if n % every == 0 else request["body"]["model"]
        body = {"model": named, "choices": [{"message": {"content": ANSWER}, "finish_reason": "stop"}]}
        lines.append({"custom_id": request["custom_id"], "response": {"status_code": 200, "body": body}, "error": None})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _read(batch_folder: Path, output: Path, *results: Path, extra: tuple[str, ...] = ()):
    argv = ["read", str(batch_folder), *map(str, results), "-o", str(output), *extra]
    return CliRunner().invoke(batch_cli, argv, env=ENV)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("name", ["manifest.json", "requests.jsonl", "manifest"])
def test_batch_read_never_writes_onto_the_batch_s_own_files(batch_folder, tmp_path, name):
    """`-o manifest.json` (or `-o manifest`, whose record is manifest.batch.json: harmless; and
    `-o requests.jsonl`) replaced the batch's files, with --overwrite or without."""
    results = _results(batch_folder, tmp_path / "out.jsonl")
    before = _snapshot(batch_folder)
    target = batch_folder / name
    got = _read(batch_folder, target, results, extra=("--overwrite",))
    if name == "manifest":  # its record is manifest.batch.json, not one of the batch's files
        assert got.exit_code == 0, got.output
        (batch_folder / "manifest").unlink()
        (batch_folder / "manifest.batch.json").unlink()
    else:
        assert got.exit_code == 2, got.output
        what = "the batch's manifest" if name == "manifest.json" else "one of the batch's request files"
        assert f"-o {target}: is {what}; it would be overwritten. Give another -o." in got.output
    assert _snapshot(batch_folder) == before


def test_batch_read_keeps_a_user_s_record_file_without_overwrite(batch_folder, tmp_path):
    results = _results(batch_folder, tmp_path / "out.jsonl")
    mine = tmp_path / "P.batch.json"
    mine.write_text("my notes\n")
    got = _read(batch_folder, tmp_path / "P.jsonl", results)
    assert got.exit_code == 2
    assert f"its record {mine} exists and would be replaced. Give another -o, or --overwrite" in got.output
    assert mine.read_text() == "my notes\n" and not (tmp_path / "P.jsonl").exists()
    again = _read(batch_folder, tmp_path / "P.jsonl", results, extra=("--overwrite",))
    assert again.exit_code == 0, again.output
    assert json.loads(mine.read_text())["source"] == "batch"


def test_a_fifo_or_a_device_as_results_is_refused_not_read(batch_folder, tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.update(got=_read(batch_folder, tmp_path / "a.jsonl", fifo)))
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():  # today: blocked on the pipe forever; free it so the test can end
        with open(fifo, "w"):
            pass
        worker.join(timeout=60)
        pytest.fail("batch read hung on a FIFO")
    got = outcome["got"]
    assert got.exit_code == 2
    assert f"{fifo}: not a regular file (a pipe, device or socket); give the batch's output or error file" in (
        got.output
    )
    zero = _read(batch_folder, tmp_path / "b.jsonl", Path("/dev/zero"))
    assert zero.exit_code == 2 and "/dev/zero: not a regular file" in zero.output
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "b.jsonl").exists()


def test_completions_naming_another_model_are_said(batch_folder, tmp_path):
    results = _results(batch_folder, tmp_path / "out.jsonl", model="org/model-b", every=2)
    requests = len((batch_folder / "requests.jsonl").read_text().splitlines())
    got = _read(batch_folder, tmp_path / "P.jsonl", results)
    assert got.exit_code == 0, got.output
    named = (requests + 1) // 2
    assert (
        f"Warning: {named:,} of the {requests:,} completions name another model than the batch's 'org/model-a': "
        f"'org/model-b' ({named:,})."
    ) in got.output
    # A dated snapshot of the model asked (how OpenAI names what answered) is the same model.
    snapshot = _results(batch_folder, tmp_path / "snap.jsonl", model="org/model-a-2024-07-18")
    quiet = _read(batch_folder, tmp_path / "Q.jsonl", snapshot)
    assert quiet.exit_code == 0 and "Warning" not in quiet.output


# -- issue 49, section 4: what a batch's files may hold ----------------------------------------------
def test_a_lone_surrogate_in_an_error_or_a_finish_reason_is_written_as_its_escape(batch_folder, tmp_path):
    """Valid JSON text that UTF-8 cannot hold: before, `UnicodeEncodeError` writing the submission."""
    results = _results(batch_folder, tmp_path / "out.jsonl")
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    lines[0] = {**lines[0], "response": {"status_code": 500}, "error": {"code": "x", "message": "bad \ud800 news"}}
    lines[1]["response"]["body"]["choices"][0]["finish_reason"] = "st\udc80op"
    results.write_text("".join(json.dumps(x) + "\n" for x in lines))  # the surrogates as \\u escapes
    got = _read(batch_folder, tmp_path / "P.jsonl", results)
    assert got.exit_code == 0, got.output
    written: dict = {}
    for line in map(json.loads, (tmp_path / "P.jsonl").read_text().splitlines()):
        written.setdefault(line["meta"]["batch"]["custom_id"], line)  # a request's first row holds its meta
    assert written[lines[0]["custom_id"]]["meta"]["failed"] == "500: x bad \\ud800 news"
    assert written[lines[1]["custom_id"]]["meta"]["finish_reason"] == "st\\udc80op"
    assert f"{results}:1: {lines[0]['custom_id']}: 500: x bad \\ud800 news" in got.output


def _edited(batch_folder: Path, tmp_path: Path, change) -> Path:
    folder = tmp_path / "edited"
    folder.mkdir()
    manifest = json.loads((batch_folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def _parameter(name, value):
    return lambda m: m["parameters"].__setitem__(name, value)


NOT_OURS = (
    "; not a manifest `mathbode batch write` wrote (was it edited?). Write the batch again with "
    "`mathbode batch write`, or give its own manifest. Nothing was written."
)
SEQUENTIAL = (
    "is 'sequential', and a batch is asked by the stateless protocol only (`mathbode batch write` refuses the "
    "sequential one: a step's request needs the answers before it). This manifest was edited or is not a batch's; "
    "its results are not read as another protocol's. Nothing was written."
)
MANIFESTS = {
    # before: KeyError, AttributeError, a submission labelled sequential, TypeErrors
    "no parameters": (lambda m: m.pop("parameters"), "parameters: missing" + NOT_OURS),
    "parameters a list": (lambda m: m.__setitem__("parameters", [1]), "parameters: not an object" + NOT_OURS),
    "sequential": (_parameter("protocol", "sequential"), "parameters.protocol " + SEQUENTIAL),
    "conditions say sequential": (
        lambda m: m["conditions"].__setitem__("protocol", "sequential"),
        "conditions.protocol " + SEQUENTIAL,
    ),
    "no model": (lambda m: m["parameters"].pop("model"), "parameters.model: missing" + NOT_OURS),
    "model a number": (_parameter("model", 7), "parameters.model: 7 is not text" + NOT_OURS),
    "dedupe as text": (_parameter("dedupe", "yes"), 'parameters.dedupe: "yes" is not true or false' + NOT_OURS),
    "max_tokens true": (
        _parameter("max_tokens", True),
        "parameters.max_tokens: true is not a number or null" + NOT_OURS,
    ),
    "conditions a list": (lambda m: m.__setitem__("conditions", []), "conditions: not an object" + NOT_OURS),
    "a row without its key": (lambda m: m["rows"][3].pop("time_step"), "rows/3: no time_step" + NOT_OURS),
    "a row of text": (lambda m: m["rows"].__setitem__(0, "x"), "rows/0: not a row with a custom_id" + NOT_OURS),
    "a lone surrogate in a row": (
        lambda m: m["rows"][2].__setitem__("custom_id", "x\ud800"),
        "rows/2/custom_id: text that is not Unicode (a lone surrogate)" + NOT_OURS,
    ),
}


@pytest.mark.parametrize("case", list(MANIFESTS), ids=list(MANIFESTS))
def test_a_manifest_batch_write_never_wrote_is_refused_by_field(batch_folder, tmp_path, case):
    change, said = MANIFESTS[case]
    folder = _edited(batch_folder, tmp_path, change)
    results = _results(batch_folder, tmp_path / "out.jsonl")
    got = _read(folder, tmp_path / "P.jsonl", results)
    assert got.exit_code == 2, got.output
    assert got.output == f"Error: {folder / 'manifest.json'}: {said}\n"
    assert not (tmp_path / "P.jsonl").exists() and not (tmp_path / "P.batch.json").exists()


def test_every_parameter_a_batch_records_has_its_type():
    """A parameter added to the run's answer fields is recorded by `batch write`: reading checks its type too."""
    from mathbode.runner.batch import PARAMETER_TYPES
    from mathbode.runner.config import RunConfig

    assert list(PARAMETER_TYPES) == list(RunConfig.ANSWER_FIELDS)


def _write(folder: Path, *extra: str):
    argv = ["write", "--model", "m", "--families", "linear_solve", "--dedupe", "-o", str(folder), *extra]
    return CliRunner().invoke(batch_cli, argv, env=ENV)


REFUSED = (
    "; --overwrite replaces only the files of a batch `mathbode batch write` wrote. Move them away, or give another "
    "folder. Nothing was written.\n"
)


def test_overwrite_replaces_only_request_files_a_batch_of_ours_wrote(tmp_path):
    """Before: `batch write --overwrite` deleted any requests*.jsonl in the folder."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "requests.jsonl").write_text("my own requests\n")
    got = _write(mine, "--overwrite")
    assert got.exit_code == 2
    assert (
        got.output
        == f"Error: -o {mine}: holds requests.jsonl beside no manifest.json of a batch (or an unreadable one)" + REFUSED
    )
    assert sorted(p.name for p in mine.iterdir()) == ["requests.jsonl"]
    assert (mine / "requests.jsonl").read_text() == "my own requests\n"
    (mine / "requests.jsonl").unlink()
    (mine / "manifest.json").write_text('{"my": "settings"}\n')
    got = _write(mine, "--overwrite")
    assert got.output == f"Error: -o {mine}: holds a manifest.json that is not a batch's (or cannot be read)" + REFUSED
    assert (mine / "manifest.json").read_text() == '{"my": "settings"}\n'
    # A batch of ours, then a file of the user's beside it, then one of its files changed.
    ours = tmp_path / "ours"
    assert _write(ours).exit_code == 0
    assert _write(ours, "--overwrite").exit_code == 0  # its own files, unchanged: replaced
    (ours / "requests-notes.jsonl").write_text("notes\n")
    got = _write(ours, "--overwrite")
    assert (
        got.output
        == f"Error: -o {ours}: requests-notes.jsonl is not one of the files its manifest.json lists" + REFUSED
    )
    (ours / "requests-notes.jsonl").unlink()
    before = (ours / "requests.jsonl").read_bytes()
    (ours / "requests.jsonl").write_bytes(before.replace(b'"m"', b'"mine"', 1))
    got = _write(ours, "--overwrite")
    assert got.output == (
        f"Error: -o {ours}: requests.jsonl was changed since the batch was written (its sha256 is not its "
        "manifest.json's)" + REFUSED
    )
    assert (ours / "requests.jsonl").read_bytes() == before.replace(b'"m"', b'"mine"', 1)


def test_a_tokenizer_whose_pattern_backtracks_is_a_message(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    # Backtracking without end on a prompt's text: the regex engine gives up with a Rust panic.
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex("(.*[a-z]){12}Q"), "isolated")
    tok.save(str(tmp_path / "tokenizer.json"))
    argv = ["write", "--model", "m", "--families", "linear_solve", "-o", str(tmp_path / "b")]
    got = CliRunner().invoke(batch_cli, [*argv, "--tokenizer", str(tmp_path / "tokenizer.json")], env=ENV)
    assert got.exit_code == 2, got.output
    assert got.exception is None or isinstance(got.exception, SystemExit)
    assert "--tokenizer tokenizer.json: failed on a prompt (PanicException:" in got.output
    assert not (tmp_path / "b").exists()  # counted before the batch is written: nothing was


# -- run-in journals ------------------------------------------------------------------------------
def _run(server, out: Path, *args: str, expect: int = 0):
    argv = ["--base-url", server.base_url, "--model", "anchor-0.5", "-o", str(out), "--families", "similar_triangles"]
    argv += ["--protocol", "sequential", "--preset", "SMOKE", "--concurrency", "1", *args]
    result = CliRunner().invoke(run_cli, argv, env=ENV)
    assert result.exit_code == expect, result.output
    return result


@pytest.mark.parametrize("content", ["my own notes", '{"sweep": "mine"}', "x" * 100])
def test_overwrite_keeps_a_run_in_journal_name_holding_a_user_s_file(truth_stub, tmp_path, content):
    """A file at the run-in journal's name without a final newline was emptied by --overwrite: its
    last line was never looked at (a torn line of ours is the start of a record, never whole JSON)."""
    out = tmp_path / "p.jsonl"
    run_in_path(out).write_text(content)
    result = _run(truth_stub, out, "--overwrite", expect=1)
    assert "not a run-in line written by mathbode-run" in result.output and "left as it is" in result.output
    assert run_in_path(out).read_text() == content


def test_a_resume_after_a_torn_run_in_journal_reports_what_it_replays(truth_stub, tmp_path):
    out = tmp_path / "p.jsonl"
    _run(truth_stub, out, "--limit", "70")
    lines = run_in_path(out).read_text().splitlines(keepends=True)
    assert len(lines) == 16
    run_in_path(out).write_text("".join(lines) + lines[-1][:5])  # a kill inside a step's line
    result = _run(truth_stub, out)
    assert "Repaired p.run-in.jsonl: cut off a torn last line (5 bytes); that run-in step is asked again." in (
        result.output
    )
    in_journal = len(run_in_path(out).read_text().splitlines())
    counts = json.loads(record_path(out).read_text())["counts"]
    assert counts["run_in_in_journal"] == in_journal == 16 + counts["run_in_answered"]
    assert f"{counts['run_in_answered']:,} run-in answers (asked before step 0, never scored), 16 replayed" in (
        result.output
    )
    assert f"16 replayed from earlier runs: {in_journal:,} in p.run-in.jsonl." in result.output


def test_a_run_in_line_that_says_it_asked_another_row_is_refused(truth_stub, tmp_path):
    out = tmp_path / "p.jsonl"
    _run(truth_stub, out, "--limit", "70")
    lines = run_in_path(out).read_text().splitlines()
    record = json.loads(lines[3])
    record["asked"]["time_step"] = (record["asked"]["time_step"] + 1) % 64
    lines[3] = json.dumps(record)
    run_in_path(out).write_text("\n".join(lines) + "\n")
    before = out.read_bytes()
    result = _run(truth_stub, out, expect=1)
    assert "p.run-in.jsonl, line 4: says run-in step 3 asked a row this run's run-in does not ask there" in (
        result.output
    )
    assert out.read_bytes() == before
