"""A framework's log as a MathBode submission (`mathbode convert`).

Reads inspect-ai logs (`.eval`, or `.json` as `inspect log convert` writes them) and
lm-evaluation-harness sample files (`samples_*.jsonl`, written by `lm_eval --log_samples`). A
sample is a MathBode row when it carries the seven key fields by name: an inspect sample in its
metadata, an lm-eval sample in its `doc` (every dataset column). Logs of any task that carries
them convert, not only MathBode's own tasks; other fields are ignored. Each row's raw completion
becomes `response` (parsed by the scorer, exactly as a `mathbode run` answer is); a sample with
no completion (an error, a cancelled sample) is a line with `prediction: null`, a row asked and
not answered. A sequential MathBode sample (a whole sweep) gives a line per step.
"""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from mathbode.core.errors import UsageError
from mathbode.schema.reference import BUILDER_SOURCE
from mathbode.schema.selection import KEY_FIELDS
from mathbode.schema.submission import CONDITIONS, MAX_LINE_BYTES, max_submission_lines

from .records import REFERENCE_COLUMN, SPLIT_COLUMN, STEPS, key_of

INSPECT, LM_EVAL = "inspect-ai", "lm-evaluation-harness"

# The bounds `validate` keeps, kept here too: a log is read no further than the submission it
# becomes could be. A sample (an .eval entry, an lm-eval line) of a MathBode row is kilobytes; a
# sequential sweep's, a few megabytes.
#: The largest sample read: a samples line, or an .eval entry once inflated.
MAX_SAMPLE_BYTES = MAX_LINE_BYTES
#: Entries an .eval archive may hold: a sample per line of the largest submission, and the
#: header, summaries and journal beside them.
MAX_LOG_ENTRIES = max_submission_lines() + 1_000
#: Lines written in all: a submission's most.
MAX_LINES = max_submission_lines()


@dataclass
class Converted:
    """A submission's lines, made from one or more logs, and what the reader should know."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    #: Where each line came from ("LOG line N", "LOG sample ID"), for a message about it.
    sources: list[str] = field(default_factory=list)
    #: The model, when the logs name one (every line carries it).
    models: set[str] = field(default_factory=set)
    #: Per log: samples read, rows written, rows with no answer, samples skipped (and why).
    notes: list[str] = field(default_factory=list)
    #: Per log that says it: the reference its task read (its provenance: `source`, `split`, ...).
    references: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def reference(self) -> dict[str, Any] | None:
        """The reference the logs recorded (the first log's; `convert_logs` refuses logs of two splits)."""
        return next(iter(self.references.values()), None)

    def add(self, line: dict[str, Any], source: str) -> None:
        if len(self.lines) >= MAX_LINES:
            raise UsageError(
                f"{source}: more than {MAX_LINES:,} rows in the logs (a submission has at most one line per row of "
                "the split, read to twice that); not the logs of one MathBode run. Nothing was written."
            )
        self.lines.append(line)
        self.sources.append(source)


def log_kind(path: Path) -> str:
    """Which framework wrote `path`, from its name (and, for `.json`, its first bytes)."""
    name = path.name
    if name.endswith(".eval"):
        return INSPECT
    if name.endswith(".jsonl"):
        return LM_EVAL
    if name.endswith(".json"):
        if name.startswith("results_"):
            raise UsageError(
                f"{path}: an lm-evaluation-harness results file holds no answers; give its samples_*.jsonl "
                "(run lm_eval with --log_samples)."
            )
        return INSPECT
    raise UsageError(
        f"{path}: not a log this command reads. Give an inspect-ai log (.eval or .json) or an "
        "lm-evaluation-harness samples_*.jsonl."
    )


def _has_key(fields: Any) -> bool:
    return isinstance(fields, dict) and all(name in fields for name in KEY_FIELDS)


def _line(fields: dict[str, Any], response: Any, model: str | None, meta: dict[str, Any]) -> dict[str, Any]:
    line = key_of(fields)
    if isinstance(response, str):
        line["response"] = response
    else:
        line["prediction"] = None
    if model:
        line["model"] = model
    line["meta"] = meta
    return line


#: The sample fields convert never reads: inspect skips parsing them (most of a sample's bytes).
UNREAD_FIELDS = {"messages", "events", "store", "attachments"}
#: An .eval archive that inflates to at most this is read in one pass; a larger one sample by
#: sample (bounded memory, but about 25 ms a sample in inspect's reader: 36 s for 1,280 samples).
WHOLE_READ_BYTES = 1 << 30


def _check_archive(path: Path) -> int:
    """Refuse an .eval archive (a zip) beyond what a MathBode log can hold before inspect reads
    it: a 2 MB file whose one entry inflates to gigabytes, or an archive of endless entries.
    Returns the bytes its entries inflate to."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return 0  # not a zip: inspect's own reader names the problem
    if len(entries) > MAX_LOG_ENTRIES:
        raise UsageError(
            f"{path}: {len(entries):,} entries, more than a log of MathBode rows holds ({MAX_LOG_ENTRIES:,}); not read."
        )
    for entry in entries:
        if entry.file_size > MAX_SAMPLE_BYTES:
            raise UsageError(
                f"{path}: entry {entry.filename} inflates to {entry.file_size:,} bytes, more than a sample of a "
                f"MathBode row ({MAX_SAMPLE_BYTES:,}); not read."
            )
    return sum(entry.file_size for entry in entries)


def _inspect_samples(path: Path) -> tuple[str | None, dict[str, Any], Iterator[Any], Any]:
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        raise UsageError(
            f"{path}: reading an inspect-ai log needs inspect-ai. Install it with: pip install 'mathbode[inspect]'"
        ) from None
    inflated = _check_archive(path) if path.name.endswith(".eval") else 0
    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception as err:  # inspect raises many kinds for a file that is not its log
        raise UsageError(f"{path}: not a readable inspect-ai log ({type(err).__name__}: {err})") from None
    model = header.eval.model
    how = {k: str(v) for k, v in (header.eval.metadata or {}).items() if k in CONDITIONS}
    recorded = (header.eval.metadata or {}).get("reference")  # MathBode's tasks record their reference
    sent = _sent_temperature(path, header)
    if sent is None or (sent != UNKNOWN and sent > 0):
        how["decoding"] = "not greedy"
    if path.name.endswith(".json") or inflated <= WHOLE_READ_BYTES:
        # A .json log is one document: its samples are read as they are in it (going by the
        # header's sample_ids skipped the samples it does not list, and then said the log had no
        # MathBode rows). An .eval archive of at most WHOLE_READ_BYTES is read in one pass too:
        # inspect's per-sample reader starts an event loop for every sample.
        try:
            full = read_eval_log(str(path), exclude_fields=UNREAD_FIELDS)
        except Exception as err:
            if path.name.endswith(".json"):
                raise UsageError(f"{path}: not a readable inspect-ai log ({type(err).__name__}: {err})") from None
            # The fast reader refuses some text that inspect's plain one reads (a lone surrogate):
            # read sample by sample then, so the check below names the sample and the field.
            return model, how, read_eval_log_samples(str(path), all_samples_required=False), recorded
        # In the dataset's order, as the per-sample reader gives them (the archive holds them in
        # the order they finished): the same log converts to the same bytes either way.
        order = {sample_id: n for n, sample_id in enumerate(header.eval.dataset.sample_ids or [])}
        ranked = sorted(full.samples or [], key=lambda x: (order.get(x.id, len(order)), x.epoch))
        return model, how, iter(ranked), recorded
    return model, how, read_eval_log_samples(str(path), all_samples_required=False), recorded


#: The temperature a log's first request carried, when the log does not say (no request recorded).
UNKNOWN = -1.0


def _sent_temperature(path: Path, header: Any) -> float | None:
    """The temperature the first model request of the log carried, as sent (None: none was sent);
    UNKNOWN when the log keeps no request. The log's own generate settings may say 0.0 while the
    provider dropped it: inspect's `openai/` provider deletes `temperature` for a model it takes
    for a reasoning model, and the server then samples."""
    from inspect_ai.log import read_eval_log_sample

    ids = header.eval.dataset.sample_ids or []
    try:
        sample = read_eval_log_sample(str(path), ids[0], 1) if ids else None
    except Exception:
        return UNKNOWN
    for event in (sample.events if sample else None) or []:
        call = getattr(event, "call", None)
        if getattr(event, "event", None) == "model" and call is not None and isinstance(call.request, dict):
            value = call.request.get("temperature")
            return float(value) if isinstance(value, (int, float)) else None
    return UNKNOWN


def _convert_inspect(path: Path, epoch: int, out: Converted, model: str | None) -> None:
    logged_model, how, samples, recorded = _inspect_samples(path)
    if isinstance(recorded, dict):
        out.references[path.name] = recorded
    if how.pop("decoding", None):
        out.notes.append(
            f"{path.name}: its requests were sent without temperature 0 (inspect's openai/ provider drops it for a "
            "model it takes for a reasoning model): the answers were sampled, not greedy. Run again with "
            "--model openai-api/NAME/MODEL (NAME_BASE_URL, NAME_API_KEY) to keep the task's temperature 0."
        )
    model = model or logged_model
    read = skipped = other_epochs = unanswered = 0
    before = len(out.lines)
    try:
        for sample in samples:
            read += 1
            if sample.epoch != epoch:
                other_epochs += 1
                continue
            meta_base = {"source": INSPECT, "log": path.name, "sample_id": sample.id, "epoch": sample.epoch, **how}
            source = f"{path} sample {sample.id!r} (epoch {sample.epoch})"
            metadata = sample.metadata or {}
            if isinstance(metadata.get(STEPS), list):  # a sequential sweep: a line per step asked
                for step in metadata[STEPS]:
                    if not _has_key(step):
                        continue
                    unanswered += not isinstance(step.get("response"), str)
                    out.add(_line(step, step.get("response"), model, meta_base), source)
                continue
            if not _has_key(metadata):
                skipped += 1
                continue
            completion = sample.output.completion if sample.output and not sample.error else None
            unanswered += completion is None
            out.add(_line(metadata, completion, model, meta_base), source)
    except UsageError:
        raise
    except Exception as err:
        raise UsageError(f"{path}: a sample could not be read ({type(err).__name__}: {err})") from None
    if model and len(out.lines) > before:  # a log that answered nothing (a failed eval) names no model
        out.models.add(model)
    _note(out, path, read, len(out.lines) - before, unanswered, skipped, other_epochs, epoch)


def _results_model(path: Path) -> str | None:
    """The model named in the results file lm-eval wrote beside a samples file (same timestamp)."""
    stamp = path.stem.rsplit("_", 1)[-1]
    results = path.with_name(f"results_{stamp}.json")
    try:
        document = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    name = document.get("model_name") if isinstance(document, dict) else None
    return name if isinstance(name, str) and name else None


def _lm_eval_response(sample: dict[str, Any]) -> str | None:
    """The raw generated text: the first response of the first request (`resps`), not the
    filtered one, so the scorer's parser sees what the model wrote."""
    resps = sample.get("resps")
    while isinstance(resps, list) and resps:
        resps = resps[0]
    return resps if isinstance(resps, str) else None


def _convert_lm_eval(path: Path, out: Converted, model: str | None) -> None:
    model = model or _results_model(path)
    read = skipped = unanswered = 0
    before = len(out.lines)
    try:
        stream = path.open("rb")
    except OSError as err:
        raise UsageError(f"{path}: cannot be read ({err.strerror})") from None
    with stream:
        lineno = 0
        # Each line read to at most MAX_SAMPLE_BYTES, and no more lines than a submission has:
        # a file of 3 M lines was held whole (2.6 GB) until the validator refused it.
        while raw := stream.readline(MAX_SAMPLE_BYTES + 1):
            lineno += 1
            if len(raw) > MAX_SAMPLE_BYTES:
                raise UsageError(
                    f"{path} line {lineno}: longer than {MAX_SAMPLE_BYTES:,} bytes, more than a sample of a MathBode "
                    "row; not read."
                )
            if lineno > MAX_LINES:
                raise UsageError(
                    f"{path} line {lineno:,}: more than {MAX_LINES:,} lines, more than the samples of a MathBode "
                    "task; not read."
                )
            if not raw.strip():
                continue
            read += 1
            try:
                sample = json.loads(raw)  # lm-eval writes bare NaN, which Python's json reads
            except (ValueError, RecursionError):
                raise UsageError(f"{path} line {lineno}: not a JSON object; is this an lm-eval samples file?") from None
            doc = sample.get("doc") if isinstance(sample, dict) else None
            if not isinstance(doc, dict) or not _has_key(doc):
                skipped += 1
                continue
            response = _lm_eval_response(sample)
            unanswered += response is None
            meta = {"source": LM_EVAL, "log": path.name, "doc_id": sample.get("doc_id")}
            split = doc.get(SPLIT_COLUMN)
            if isinstance(split, str) and split:  # MathBode's task files record it in every doc
                meta["split"] = split
                spec = doc.get(REFERENCE_COLUMN)
                out.references.setdefault(
                    path.name, {"source": spec if isinstance(spec, str) and spec else BUILDER_SOURCE, "split": split}
                )
            out.add(_line(doc, response, model, meta), f"{path} line {lineno}")
    if model:
        out.models.add(model)
    _note(out, path, read, len(out.lines) - before, unanswered, skipped, 0, 1)


def _note(
    out: Converted, path: Path, read: int, rows: int, unanswered: int, skipped: int, other_epochs: int, epoch: int
) -> None:
    parts = [f"{path.name}: {read:,} samples, {rows:,} rows"]
    if unanswered:
        parts.append(f"{unanswered:,} with no answer (written as prediction null)")
    if skipped:
        parts.append(f"{skipped:,} samples skipped: no MathBode key fields ({', '.join(KEY_FIELDS)})")
    if other_epochs:
        parts.append(f"{other_epochs:,} samples of other epochs left out (epoch {epoch} kept; --epoch N picks)")
    out.notes.append("; ".join(parts))


def convert_logs(paths: list[Path], epoch: int = 1, model: str | None = None) -> Converted:
    """Every MathBode row answered in `paths`, as submission lines in the logs' order."""
    if epoch < 1:
        raise UsageError(f"--epoch {epoch}: epochs count from 1.")
    if model is not None and (problem := _unwritable(model)):
        raise UsageError(f"--model {model!r}: expected {problem[1]}, found {problem[2]}.")
    out = Converted()
    for path in paths:
        if not path.is_file():
            raise UsageError(f"{path}: no such file.")
        if log_kind(path) == INSPECT:
            _convert_inspect(path, epoch, out, model)
        else:
            _convert_lm_eval(path, out, model)
    if not out.lines:
        raise UsageError(
            f"no MathBode rows in {', '.join(str(p) for p in paths)}: a sample needs the key fields "
            f"{', '.join(KEY_FIELDS)} in its metadata (inspect) or doc (lm-eval)."
        )
    splits = {name: str(found.get("split")) for name, found in out.references.items()}
    if len(set(splits.values())) > 1:
        listed = ", ".join(f"{name} answered {split}" for name, split in splits.items())
        raise UsageError(
            f"the logs answer different splits ({listed}); a submission answers one. Convert each split's logs "
            "separately."
        )
    if len(out.models) > 1:
        raise UsageError(
            f"the logs answer with {len(out.models)} models ({', '.join(sorted(out.models))}); a submission is "
            "one model's answers. Convert each model's logs separately (--model renames the model on every line; "
            "it does not pick one)."
        )
    _number_safe(out.lines)
    for line, source in zip(out.lines, out.sources, strict=True):
        if problem := _unwritable(line):
            where, expected, found = problem
            raise UsageError(
                f"{source}: {where}: expected {expected}, found {found}; a submission cannot carry it (the validator "
                "refuses it). Nothing was written."
            )
    return out


def _unwritable(value: Any) -> tuple[str, str, str] | None:
    """(where, expected, found) for the first value a submission cannot carry: a string with a
    lone surrogate (no UTF-8 for it), a number that is NaN or infinite (not JSON). The words are
    the validator's. Walked with a stack: a log's value may be nested deeper than recursion goes."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and any("\ud800" <= ch <= "\udfff" for ch in item):
                return where or "text", "text without lone surrogates (\\ud800-\\udfff)", "a lone surrogate"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return where or "number", "finite numbers (use null for no answer)", json.dumps(item)
        elif isinstance(item, dict):
            for name, inner in reversed(list(item.items())):
                if isinstance(name, str) and (found := _unwritable(name)):
                    return f"{where}.{name!r}" if where else repr(name), found[1], found[2]
                stack.append((f"{where}.{name}" if where else str(name), inner))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", inner) for i, inner in reversed(list(enumerate(item))))
    return None


def _number_safe(lines: list[dict[str, Any]]) -> None:
    """A float key field stored as NaN (lm-eval writes a chirp row's missing `frequency_cycles` as
    NaN) becomes null, as the dataset has it."""
    for line in lines:
        for name in KEY_FIELDS:
            value = line[name]
            if isinstance(value, float) and not math.isfinite(value):
                line[name] = None
