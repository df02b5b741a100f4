"""The stateless protocol as a batch job: OpenAI Batch API input files, and their results read back
into a submission (`mathbode batch write` / `mathbode batch read`).

A batch input file is JSON Lines, one request a line: `custom_id`, `method` (POST), `url`
(/v1/chat/completions) and `body`, the request body exactly as `mathbode run` sends it
(`completions.request_body`). OpenAI's Batch API and `vllm run-batch` both read it. A file holds at
most 50,000 requests and 200 MB (OpenAI's limits for a batch input file), so a larger batch is
split into named parts, `requests-001.jsonl`, `requests-002.jsonl`, ...

`custom_id` names the row it asks, readably (`linear_solve/q0/sinusoid/a0.5/f4/p0/t12`, unique in
a release); with `--dedupe` one request asks a distinct prompt for every row that has it, named by
its first row and the number of others (`.../t0+15`). The manifest beside the files
(`manifest.json`) lists every row with the `custom_id` that answers it, the request parameters
and the conditions, and the reference (name and content hash): reading needs nothing else.

The results (the output file, the error file, in any order, split or not) are one JSON object a
line: `custom_id`, `response` (`status_code`, `body`: the chat completion) and `error`. A request
that failed (an error, a status other than 200, a body that is not a chat completion) or that no
file answers is a line with `prediction: null` and the reason in its `meta.failed`: never a row
silently missing. A result this batch did not ask for, or a second result for one request, is an
error naming its file and line: nothing is written.

The sequential protocol is not a batch job: each step's request carries the model's answers to
the steps before it, which exist only once those are answered.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mathbode.core.atomic import atomic_text_file, json_line, read_text_file
from mathbode.core.digests import file_sha256
from mathbode.core.errors import UsageError
from mathbode.core.version import __version__
from mathbode.schema.drives import MULTITONE_SIGNALS
from mathbode.schema.parsing import parse_response
from mathbode.schema.selection import KEY_FIELDS, key_fields

from .completions import NotACompletion, completion_fields, request_body, unicode_text
from .config import SEQUENTIAL, STATELESS, RunConfig
from .formats import unwrap

ENDPOINT = "/v1/chat/completions"
#: OpenAI's limits for one batch input file: 50,000 requests, 200 MB (read as 200,000,000 bytes,
#: the smaller of the two readings of MB).
MAX_REQUESTS = 50_000
MAX_BYTES = 200_000_000
MANIFEST = "manifest.json"
#: A manifest lists every row of the batch (about 150 bytes each: 47,040 rows of the canonical
#: release are 7 MB); a larger file is not one.
MAX_MANIFEST_BYTES = 512 << 20
FORMAT = "mathbode-batch"
#: The failed results a read names one by one (the rest are counted).
SHOWN = 5


class BatchError(UsageError):
    """A batch that cannot be written, or results that are not this batch's."""


SEQUENTIAL_REFUSAL = (
    "--protocol sequential is not a batch job: each step of a sweep is asked after the model's own answers to "
    "the steps before it, and those answers exist only once the earlier requests are answered, so the requests "
    "cannot all be written before the run. Run it live with `mathbode run --protocol sequential` against a "
    "server (vLLM or SGLang behind one URL; with prefix caching a conversation's history is computed once, see "
    'docs/running.md, "Batch APIs and vLLM"), or batch the stateless protocol.'
)


def custom_id(row: dict[str, Any]) -> str:
    """A row's readable id, unique in a release: `linear_solve/q0/sinusoid/a0.5/f4/p0/t12`
    (a chirp's or step's sweep has no frequency or phase of its own; a multi-tone sweep is named by
    its realization and period, which its `phase_deg` and `frequency_cycles` hold: `.../multisine/a1/r3/n1/t12`)."""
    parts = [str(row["family"]), f"q{row['question_id']}", str(row["signal_type"]), f"a{row['amplitude_scale']:g}"]
    if row["signal_type"] == "sinusoid":
        parts += [f"f{row['frequency_cycles']:g}", f"p{row['phase_deg']:g}"]
    elif row["signal_type"] in MULTITONE_SIGNALS:
        parts += [f"r{row['phase_deg']:g}", f"n{row['frequency_cycles']:g}"]
    parts.append(f"t{row['time_step']}")
    return "/".join(parts)


@dataclass
class Request:
    custom_id: str
    prompt: str
    rows: list[dict[str, Any]]


def plan(rows: list[dict[str, Any]], config: RunConfig) -> list[Request]:
    """The requests of a batch: one per row, or with `dedupe` one per distinct prompt."""
    if config.protocol == SEQUENTIAL:
        raise BatchError(SEQUENTIAL_REFUSAL)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["prompt"] if config.dedupe else custom_id(row), []).append(row)
    requests = []
    for group in groups.values():
        name = custom_id(group[0]) + (f"+{len(group) - 1}" if len(group) > 1 else "")
        requests.append(Request(name, group[0]["prompt"], group))
    # Without dedupe a request is one row: two rows under one id would get one answer between them.
    if len({r.custom_id for r in requests}) != len(requests) or (
        not config.dedupe and any(len(r.rows) > 1 for r in requests)
    ):
        raise BatchError("two rows of the selection have the same custom_id; is a row of the reference repeated?")
    return requests


@dataclass
class Part:
    """One input file of a batch."""

    name: str
    requests: int
    bytes: int
    sha256: str


@dataclass
class Written:
    folder: Path
    parts: list[Part]
    requests: int
    rows: int

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST


def _lines(requests: list[Request], config: RunConfig) -> list[bytes]:
    return [
        json_line(
            {"custom_id": r.custom_id, "method": "POST", "url": ENDPOINT, "body": request_body(config, r.prompt)}
        ).encode("utf-8")
        for r in requests
    ]


def split(lines: list[bytes], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES) -> list[list[bytes]]:
    """The lines in files of at most `max_requests` lines and `max_bytes` bytes each, in order."""
    parts: list[list[bytes]] = [[]]
    size = 0
    for number, line in enumerate(lines, start=1):
        if len(line) > max_bytes:
            raise BatchError(f"request {number} alone is {len(line):,} bytes, more than --max-bytes {max_bytes:,}.")
        if len(parts[-1]) >= max_requests or size + len(line) > max_bytes:
            parts.append([])
            size = 0
        parts[-1].append(line)
        size += len(line)
    return parts


def part_names(count: int) -> list[str]:
    return ["requests.jsonl"] if count == 1 else [f"requests-{n:03d}.jsonl" for n in range(1, count + 1)]


def write(
    rows: list[dict[str, Any]],
    config: RunConfig,
    folder: Path,
    context: dict[str, Any],
    overwrite: bool = False,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> Written:
    """Write the batch of `rows` into `folder`: its input files and its manifest."""
    if max_requests < 1 or max_bytes < 1:
        raise BatchError("--max-requests and --max-bytes must be at least 1.")
    requests = plan(rows, config)
    chunks = split(_lines(requests, config), max_requests, max_bytes)
    if folder.exists() and not folder.is_dir():
        raise BatchError(f"-o {folder}: is a file; give a folder for the batch's files.")
    present = sorted(p.name for p in folder.glob("requests*.jsonl"))
    present += [MANIFEST] if os.path.lexists(folder / MANIFEST) else []
    if present and not overwrite:
        raise BatchError(
            f"-o {folder}: already holds a batch ({', '.join(present[:3])}). Give another folder, or --overwrite."
        )
    replaced = _written_by_us(folder) if present else []
    folder.mkdir(parents=True, exist_ok=True)
    for old in replaced:
        old.unlink()  # a batch split in 3 parts, rewritten in 2, must not leave a third behind
    parts = []
    for name, chunk in zip(part_names(len(chunks)), chunks, strict=True):
        data = b"".join(chunk)
        with atomic_text_file(folder / name) as stream:
            stream.write(data.decode("utf-8"))
        parts.append(Part(name, len(chunk), len(data), "sha256:" + hashlib.sha256(data).hexdigest()))
    ids = {id(row): r.custom_id for r in requests for row in r.rows}
    manifest = {
        "format": FORMAT,
        "package": "mathbode",
        "version": __version__,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "endpoint": ENDPOINT,
        "parameters": config.answer_parameters(),
        "conditions": config.conditions(),
        **context,
        "limits": {"max_requests": max_requests, "max_bytes": max_bytes},
        "files": [vars(p) for p in parts],
        "requests": len(requests),
        "rows": [{"custom_id": ids[id(row)], **key_fields(row)} for row in rows],
    }
    with atomic_text_file(folder / MANIFEST) as stream:
        stream.write(json.dumps(manifest, indent=1, allow_nan=False) + "\n")  # strict JSON, as every file we write
    return Written(folder, parts, len(requests), len(rows))


def _written_by_us(folder: Path) -> list[Path]:
    """The request files in `folder` that its manifest proves a batch of ours wrote (each listed
    with its sha256, unchanged): the only files `--overwrite` may replace. A request file it does
    not prove (no manifest of ours, not listed, changed since) is refused by name, nothing touched."""
    files = sorted(folder.glob("requests*.jsonl"))

    def refuse(why: str) -> BatchError:
        return BatchError(
            f"-o {folder}: {why}; --overwrite replaces only the files of a batch `mathbode batch write` wrote. "
            "Move them away, or give another folder. Nothing was written."
        )

    try:
        listed = Manifest.open(folder).listed_files()
    except BatchError:
        if not files:
            raise refuse(f"holds a {MANIFEST} that is not a batch's (or cannot be read)") from None
        names = ", ".join(p.name for p in files[:3])
        raise refuse(f"holds {names} beside no {MANIFEST} of a batch (or an unreadable one)") from None
    for path in files:
        if path.is_symlink() or not path.is_file():
            raise refuse(f"{path.name} is not a regular file")
        if path.name not in listed:
            raise refuse(f"{path.name} is not one of the files its {MANIFEST} lists")
        if "sha256:" + file_sha256(path) != listed[path.name]:
            raise refuse(f"{path.name} was changed since the batch was written (its sha256 is not its {MANIFEST}'s)")
    return files


# -- reading ----------------------------------------------------------------------------------
#: What `batch write` records in a manifest's `parameters`, by type: a field of another type (or a
#: protocol other than stateless) is not a manifest it wrote. A field absent takes its default.
_NONE = type(None)
PARAMETER_TYPES: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "base_url": (str, _NONE),
    "temperature": (int, float),
    "max_tokens": (int, _NONE),
    "seed": (int, _NONE),
    "system_prompt": (str, _NONE),
    "constrain_format": (str, _NONE),
    "one_shot": (bool,),
    "instruction_as_system": (bool,),
    "protocol": (str,),
    "history": (int, _NONE),
    "dedupe": (bool,),
    "run_in": (int,),
}
_KIND = {str: "text", int: "a number", bool: "true or false", _NONE: "null"}


@dataclass
class Manifest:
    path: Path
    data: dict[str, Any]

    @classmethod
    def open(cls, where: Path) -> "Manifest":
        path = where / MANIFEST if where.is_dir() else where
        if not os.path.lexists(path):
            raise BatchError(f"{where}: no {MANIFEST}; give the folder `mathbode batch write` wrote (or its manifest).")
        text = read_text_file(path, MAX_MANIFEST_BYTES, "batch manifest")  # a FIFO or /dev/zero: refused
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise BatchError(f"{path}: not a batch manifest ({str(err)[:200] or 'nested too deeply'}).") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("rows"), list):
            raise BatchError(f"{path}: not a batch manifest written by `mathbode batch write`.")
        manifest = cls(path, data)
        manifest.check()
        return manifest

    def _refuse(self, at: str, what: str) -> BatchError:
        return BatchError(
            f"{self.path}: {at}: {what}; not a manifest `mathbode batch write` wrote (was it edited?). "
            "Write the batch again with `mathbode batch write`, or give its own manifest. Nothing was written."
        )

    def check(self) -> None:
        """What reading needs of a manifest, checked before anything is read: its parameters (a
        stateless batch's), its conditions, its rows. Each was a traceback or, for a manifest
        claiming the sequential protocol, a submission labelled sequential though asked stateless."""
        try:  # one pass in C; the walk that names the place only when it fails
            json.dumps(self.data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            try:
                at = _surrogate_at(self.data)
            except RecursionError:
                at = "(nested too deeply to say where)"
            raise self._refuse(at, "text that is not Unicode (a lone surrogate)") from None
        except RecursionError:  # nested as deep as the reader takes, deeper than any manifest of ours
            raise self._refuse("(top)", "nested too deeply") from None
        parameters = self.data.get("parameters")
        if not isinstance(parameters, dict):
            raise self._refuse("parameters", "missing" if parameters is None else "not an object")
        if "model" not in parameters:
            raise self._refuse("parameters.model", "missing")
        for name, types in PARAMETER_TYPES.items():
            value = parameters.get(name, _NONE)
            if value is _NONE:
                continue
            if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
                kinds = " or ".join(_KIND[t] for t in types if t is not float)
                shown = json.dumps(value, default=repr)
                raise self._refuse(f"parameters.{name}", f"{shown[:60]} is not {kinds}")
        conditions = self.data.get("conditions", {})
        if not isinstance(conditions, dict):
            raise self._refuse("conditions", "not an object")
        for at, protocol in (
            ("parameters.protocol", parameters.get("protocol")),
            ("conditions.protocol", conditions.get("protocol")),
        ):
            if protocol not in (None, STATELESS):
                # A batch is never sequential (`plan` refuses it): read as one, its answers would be
                # labelled as a protocol they were not asked by.
                raise BatchError(
                    f"{self.path}: {at} is {protocol!r}, and a batch is asked by the stateless protocol only "
                    "(`mathbode batch write` refuses the sequential one: a step's request needs the answers before "
                    "it). This manifest was edited or is not a batch's; its results are not read as another "
                    "protocol's. Nothing was written."
                )
        for number, row in enumerate(self.data["rows"]):
            if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
                raise self._refuse(f"rows/{number}", "not a row with a custom_id")
            missing = [name for name in KEY_FIELDS if name not in row]
            if missing:
                raise self._refuse(f"rows/{number}", f"no {missing[0]}")

    def listed_files(self) -> dict[str, str]:
        """The request files the manifest lists: name -> sha256 (`sha256:...`)."""
        files = self.data.get("files")
        if not isinstance(files, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("sha256"), str) for f in files
        ):
            raise self._refuse("files", "not a list of files with their sha256")
        return {f["name"]: f["sha256"] for f in files}

    @property
    def config(self) -> RunConfig:
        known = set(RunConfig.ANSWER_FIELDS)
        return RunConfig(**{k: v for k, v in self.data["parameters"].items() if k in known}, split=self.split)

    @property
    def split(self) -> str | None:
        """The split the batch asks (its prompts hash): every line read back records it."""
        for where in ("conditions", "reference"):
            recorded = self.data.get(where)
            value = recorded.get("split") if isinstance(recorded, dict) else None
            if value is not None:
                if not isinstance(value, str):
                    raise BatchError(f"{self.path}: {where}.split is not a string; not a manifest `batch write` wrote.")
                return value or None
        return None


def _surrogate_at(node: Any, at: str = "") -> str:
    """Where in a manifest the first text holding a lone surrogate is (`rows/3/custom_id`)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        place = f"{at}/{key}" if at else str(key)
        if isinstance(key, str) and unicode_text(key) != key:
            return place.encode("utf-8", "backslashreplace").decode("utf-8")
        if isinstance(value, str) and unicode_text(value) != value:
            return place.encode("utf-8", "backslashreplace").decode("utf-8")
        found = _surrogate_at(value, place) if isinstance(value, (dict, list)) else ""
        if found:
            return found
    return ""


@dataclass
class Result:
    """One request's result: its text, or why there is none; and where it was read."""

    where: str | None
    text: str | None = None
    failed: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: The model the completion says answered it (its `model` field), when it says one.
    served: str | None = None


@dataclass
class Read:
    lines: list[dict[str, Any]]
    requests: int
    answered: int
    compliant: int
    #: custom_id -> (where, reason), in the order read; missing requests have where None.
    failed: dict[str, tuple[str | None, str]]
    manifest: Manifest
    #: Completions whose `model` names another model than the batch's: that name -> how many.
    other_models: dict[str, int] = field(default_factory=dict)

    def other_models_text(self) -> str | None:
        """The warning `batch read` prints when completions name another model, or None."""
        if not self.other_models:
            return None
        asked = self.manifest.config.model
        named = ", ".join(f"{name!r} ({n:,})" for name, n in sorted(self.other_models.items())[:SHOWN])
        total = sum(self.other_models.values())
        return (
            f"Warning: {total:,} of the {self.answered:,} completions name another model than the batch's {asked!r}: "
            f"{named}. The submission is written as {asked!r}'s answers, as the batch asked; if another model "
            "answered, these are not its scores: write the batch again with that --model."
        )

    def counts(self) -> dict[str, int]:
        missing = sum(1 for where, _ in self.failed.values() if where is None)
        return {
            "rows": len(self.lines),
            "requests": self.requests,
            "answered": self.answered,
            "failed": len(self.failed) - missing,
            "missing": missing,
            "compliant_rows": self.compliant,
            "null_rows": sum(1 for line in self.lines if "prediction" in line),
        }

    def failure_lines(self) -> list[str]:
        shown = [f"  {where or 'no result'}: {cid}: {why}" for cid, (where, why) in list(self.failed.items())[:SHOWN]]
        more = len(self.failed) - SHOWN
        return shown + ([f"  ... and {more:,} more (each line's meta.failed says why)"] if more > 0 else [])


def _error_text(error: Any) -> str:
    """An error object (OpenAI's `{code, message}`, vLLM's ErrorResponse `{error: {...}}`, a string)."""
    if isinstance(error, dict):
        nested = error.get("error")
        inner = nested if isinstance(nested, dict) else error
        code, message = inner.get("code"), inner.get("message")
        text = " ".join(str(x) for x in (code, message) if x not in (None, ""))
        return (text or json.dumps(error, ensure_ascii=False))[:300]
    return str(error)[:300]


def _result(record: dict[str, Any], where: str, config: RunConfig) -> Result:
    result = _read_result(record, where, config)
    if result.failed is not None:
        result.failed = unicode_text(result.failed)  # a server's error text may hold a lone surrogate
    return result


def _read_result(record: dict[str, Any], where: str, config: RunConfig) -> Result:
    error, response = record.get("error"), record.get("response")
    if error is not None:
        status = response.get("status_code") if isinstance(response, dict) else None
        prefix = f"{status}: " if isinstance(status, int) else ""
        return Result(where, failed=f"{prefix}{_error_text(error)}")
    if not isinstance(response, dict):
        return Result(where, failed="the result has neither a response nor an error")
    status, body = response.get("status_code"), response.get("body")
    if status != 200:
        reason = _error_text(body) if body is not None else "no body"
        return Result(where, failed=f"{status}: {reason}")
    try:
        text, finish, prompt_tokens, completion_tokens = completion_fields(body)
    except NotACompletion as err:
        return Result(where, failed=f"the response body is not a chat completion: {err}")
    meta = {"finish_reason": finish, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    named = body.get("model") if isinstance(body, dict) else None  # a completion is a dict (checked above)
    served = named if isinstance(named, str) else None
    return Result(where, text=unwrap(config.constrain_format, text), meta=meta, served=served)


# OpenAI answers a model by its dated snapshot: `gpt-4o-mini` is served as `gpt-4o-mini-2024-07-18`.
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}")


def same_model(asked: str, served: str) -> bool:
    """Whether a completion's `model` names the model the batch asked (itself, or a dated snapshot of it)."""
    return served == asked or (served.startswith(asked) and bool(_SNAPSHOT.fullmatch(served[len(asked) :])))


def _short(where: str | None) -> str | None:
    """`/tmp/x/out.jsonl:12` -> `out.jsonl:12` (what a line's meta keeps)."""
    if where is None:
        return None
    path, _, number = where.rpartition(":")
    return f"{Path(path).name}:{number}"


#: The longest result line read: a chat completion's JSON with its answer (OpenAI caps a batch
#: output file's lines far below this); a longer line is not a result, and is not read whole.
MAX_LINE_BYTES = 64 << 20


def _open_file(path: Path) -> Any:
    """`path` opened for reading if it is a regular file: a FIFO would block the read forever and
    /dev/zero would fill the memory, so anything else is refused by name."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise BatchError(f"{path}: cannot be read ({err.strerror}).") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BatchError(
            f"{path}: not a regular file (a pipe, device or socket); give the batch's output or error file itself."
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _records(path: Path) -> Any:
    with _open_file(path) as stream:
        number = 0
        while raw := stream.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise BatchError(
                    f"{path}:{number}: a line of more than {MAX_LINE_BYTES:,} bytes; not a batch output or error file."
                )
            if not raw.strip():
                continue
            where = f"{path}:{number}"  # the messages' place; a line's meta keeps the file's name
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                raise BatchError(f"{where}: not JSON; is this a batch output or error file?") from None
            if not isinstance(record, dict):
                raise BatchError(f"{where}: not a JSON object; is this a batch output or error file?")
            yield where, record


def read(where: Path, results: list[Path]) -> Read:
    """The submission lines of the batch at `where` (a folder or its manifest), from its result
    files (output and error files, any order): every row of the batch, in the manifest's order."""
    manifest = Manifest.open(where)
    config = manifest.config
    rows = manifest.data["rows"]
    expected = {row["custom_id"] for row in rows}
    found: dict[str, Result] = {}
    for path in results:
        for place, record in _records(path):
            cid = record.get("custom_id")
            if not isinstance(cid, str):
                raise BatchError(f"{place}: the result has no custom_id; not a line of a batch output or error file.")
            if cid not in expected:
                raise BatchError(
                    f"{place}: custom_id {cid!r} is not a request of the batch {manifest.path}; are these the results "
                    "of another batch? Nothing was written."
                )
            if cid in found:
                raise BatchError(
                    f"{place}: a second result for custom_id {cid!r} (the first is {found[cid].where}); a request "
                    "has one result. Give each output and error file once. Nothing was written."
                )
            found[cid] = _result(record, place, config)
    conditions = config.conditions()
    lines: list[dict[str, Any]] = []
    seen: set[str] = set()
    failed: dict[str, tuple[str | None, str]] = {}
    answered = compliant = 0
    for row in rows:
        cid = row["custom_id"]
        result = found.get(cid) or Result(None, failed="no result for this request in the files read")
        first = cid not in seen
        seen.add(cid)
        line = {name: row[name] for name in KEY_FIELDS}
        meta: dict[str, Any] = {}
        if result.text is not None:
            line["response"] = result.text
            meta = dict(result.meta) if first else {}
            answered += first
            compliant += not math.isnan(parse_response(result.text))
        else:
            line["prediction"] = None
            meta["failed"] = result.failed
            if first:
                failed[cid] = (result.where, result.failed or "")
        line["model"] = config.model
        meta.update(conditions)
        if config.dedupe:
            meta["shared"] = not first
        meta["batch"] = {"custom_id": cid, "result": _short(result.where)}
        line["meta"] = meta
        lines.append(line)
    others: dict[str, int] = {}
    for result in found.values():
        if result.served is not None and not same_model(config.model, result.served):
            others[result.served] = others.get(result.served, 0) + 1
    return Read(lines, len(expected), answered, compliant, failed, manifest, others)
