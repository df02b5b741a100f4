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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from mathbode.core.errors import UsageError
from mathbode.schema.selection import KEY_FIELDS
from mathbode.schema.submission import CONDITIONS

from .records import STEPS, key_of

INSPECT, LM_EVAL = "inspect-ai", "lm-evaluation-harness"


@dataclass
class Converted:
    """A submission's lines, made from one or more logs, and what the reader should know."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    #: The model, when the logs name one (every line carries it).
    models: set[str] = field(default_factory=set)
    #: Per log: samples read, rows written, rows with no answer, samples skipped (and why).
    notes: list[str] = field(default_factory=list)


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


def _inspect_samples(path: Path) -> tuple[str | None, dict[str, Any], Iterator[Any]]:
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        raise UsageError(
            f"{path}: reading an inspect-ai log needs inspect-ai. Install it with: pip install 'mathbode[inspect]'"
        ) from None
    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception as err:  # inspect raises many kinds for a file that is not its log
        raise UsageError(f"{path}: not a readable inspect-ai log ({type(err).__name__}: {err})") from None
    model = header.eval.model
    how = {k: str(v) for k, v in (header.eval.metadata or {}).items() if k in CONDITIONS}
    return model, how, read_eval_log_samples(str(path), all_samples_required=False)


def _convert_inspect(path: Path, epoch: int, out: Converted, model: str | None) -> None:
    logged_model, how, samples = _inspect_samples(path)
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
            metadata = sample.metadata or {}
            if isinstance(metadata.get(STEPS), list):  # a sequential sweep: a line per step asked
                for step in metadata[STEPS]:
                    if not _has_key(step):
                        continue
                    unanswered += not isinstance(step.get("response"), str)
                    out.lines.append(_line(step, step.get("response"), model, meta_base))
                continue
            if not _has_key(metadata):
                skipped += 1
                continue
            completion = sample.output.completion if sample.output and not sample.error else None
            unanswered += completion is None
            out.lines.append(_line(metadata, completion, model, meta_base))
    except Exception as err:
        raise UsageError(f"{path}: a sample could not be read ({type(err).__name__}: {err})") from None
    if model:
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
        for lineno, raw in enumerate(stream, start=1):
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
            out.lines.append(_line(doc, response, model, meta))
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
    if len(out.models) > 1:
        raise UsageError(
            f"the logs answer with {len(out.models)} models ({', '.join(sorted(out.models))}); a submission is "
            "one model's answers. Convert each model's logs separately, or name one with --model."
        )
    _number_safe(out.lines)
    return out


def _number_safe(lines: list[dict[str, Any]]) -> None:
    """A float key field stored as NaN (lm-eval writes a chirp row's missing `frequency_cycles` as
    NaN) becomes null, as the dataset has it."""
    for line in lines:
        for name in KEY_FIELDS:
            value = line[name]
            if isinstance(value, float) and not math.isfinite(value):
                line[name] = None
