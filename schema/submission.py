"""Read and validate a submission: predictions JSONL, one object per line.

`read_submission` returns the lines that can be scored together with the report, so the
scorer reads a file once; `validate_submission` is the report alone.
"""

from __future__ import annotations

import difflib
import gzip
import io
import json
import math
import re
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, NamedTuple

import pyarrow as pa
import pyarrow.json as pajson

from mathbode.core.arrow_columns import all_finite
from mathbode.core.errors import UsageError

from .arrow_guard import arrow_line_problem
from .compiled import MISSING, CompiledSchema, compiled
from .keys import RowKey, canonical_keys, canonical_sweep_set, coverage, format_key, row_key, row_keys
from .layout import layout
from .report import Report
from .row_id_predictions import PARQUET_MAGIC, read_row_id_parquet

SCHEMA = "predictions.schema.json"
GZIP_MAGIC = b"\x1f\x8b"
#: `meta` fields that change what a score means; one value per file (see the runner's options).
CONDITIONS = ("answer_format", "prompting", "protocol", "history", "dedupe")


class Prediction(NamedTuple):
    """One valid line of a submission (a NamedTuple: tens of thousands are made per file)."""

    #: The normalized row key (see `keys.row_key`).
    key: RowKey
    #: 1-based line number in the file.
    line: int
    #: The raw model text, when the line gave `response`.
    response: str | None
    #: The number, when the line gave `prediction` (None = no answer).
    prediction: float | None
    #: Whether the line gave `response` (parse it) or `prediction` (use it).
    has_response: bool


@dataclass
class Submission:
    path: Path
    predictions: list[Prediction] = field(default_factory=list)
    model: str | None = None
    #: How the answers were obtained, from the lines' `meta` (`answer_format`, `prompting`), when stated.
    conditions: dict[str, str] = field(default_factory=dict)
    report: Report = field(default_factory=lambda: Report("", "submission"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 reads as infinity: as non-finite as the literal Infinity
        raise ValueError(f"{text} is not valid JSON")
    return value


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _DuplicateKey(twice)
    return obj


def _has_lone_surrogate(value: Any) -> bool:
    """Strings JSON can carry (escaped) but UTF-8 cannot: they would break every file written from them.

    Walked with a stack, not by recursion: a line nested several hundred deep is valid JSON here
    and must get its message, not a RecursionError."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and any("\ud800" <= ch <= "\udfff" for ch in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _decode(raw: bytes, lineno: int, report: Report) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        report.error(
            "encoding", f"line {lineno}", "", "UTF-8 text", f"byte 0x{raw[err.start]:02x} at column {err.start + 1}"
        )
        return _BAD
    try:
        obj = _DECODER.decode(text)
    except RecursionError:
        report.error("json", f"line {lineno}", "", "one flat JSON object", "values nested too deeply to read")
        return _BAD
    except _DuplicateKey as err:
        report.error("duplicate-field", f"line {lineno}", str(err), "each field once in an object", "the field twice")
        return _BAD
    except json.JSONDecodeError as err:
        snippet = text.strip()
        snippet = snippet if len(snippet) <= 40 else snippet[:37] + "..."
        report.error("json", f"line {lineno}", "", "one JSON object", f"{err.msg} at column {err.colno}: {snippet!r}")
        return _BAD
    except ValueError as err:
        if "is not valid JSON" in str(err):
            report.error(
                "non-finite",
                f"line {lineno}",
                "",
                "finite numbers (use null for no answer)",
                str(err).split(" is not")[0],
            )
        elif "integer string conversion" in str(err):
            report.error("json", f"line {lineno}", "", "numbers of ordinary size", "an integer of over 4,300 digits")
        else:
            report.error("json", f"line {lineno}", "", "one JSON object", str(err).splitlines()[0][:200])
        return _BAD
    if "\\u" in text and _has_lone_surrogate(obj):
        report.error(
            "encoding", f"line {lineno}", "", "text without lone surrogates (\\ud800-\\udfff)", "a lone surrogate"
        )
        return _BAD
    return obj


_BAD = object()
# One decoder for the whole file; NaN and Infinity literals are not JSON and get a clear error.
_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_no_duplicate_keys
)
_KIND = {
    list: "a JSON array",
    str: "a JSON string",
    int: "a JSON number",
    float: "a JSON number",
    bool: "a JSON boolean",
    type(None): "null",
}


def _with_hint(field: str, obj: dict[str, Any], found: str) -> str:
    """A misspelt family gets the "did you mean" the build command gives."""
    if field != "family" or not isinstance(obj.get(field), str):
        return found
    close = _closest_family(obj[field])
    return f"{found} (did you mean {close!r}?)" if close else found


@lru_cache(maxsize=1024)  # a file repeats its misspelling on every line
def _closest_family(value: str) -> str | None:
    close = difflib.get_close_matches(value[:200], layout().families, n=1, cutoff=0.6)
    return close[0] if close else None


def read_submission(path: str | Path) -> Submission:
    """Parse and check a submission; every problem lands in `submission.report`."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file. Give the path of a predictions .jsonl file.")
    if path.is_dir():
        raise UsageError(f"{path}: is a folder, not a predictions file.")
    report = Report(str(path), "submission")
    sub = Submission(path, report=report)
    try:
        with open(path, "rb") as probe:
            head = probe.read(4)
        if head == PARQUET_MAGIC:
            answers, sub.model = read_row_id_parquet(path.read_bytes(), report)
            sub.predictions = [Prediction._make(a) for a in answers]
            _summarize(report, sub, lines=len(answers))
            return sub
        # Line by line (gzip streamed too): memory stays flat however large the file.
        stream: io.BufferedIOBase = gzip.open(path, "rb") if head[:2] == GZIP_MAGIC else open(path, "rb")
        with stream:
            _read_lines(stream, sub)
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:  # before OSError: BadGzipFile is one
        sub.report.error("gzip", "file", "", "a readable gzip file of JSON Lines", str(err) or type(err).__name__)
    except OSError as err:
        raise UsageError(f"{path}: cannot read ({err.strerror}).") from None
    return sub


#: A prediction line is a few hundred bytes (a long reasoning trace, megabytes); a line beyond
#: this is refused without being held in memory whole.
MAX_LINE_BYTES = 64 << 20


def _line_batches(stream: io.BufferedIOBase) -> Iterator[list[bytes | None]]:
    """The file's lines (without their newline) in batches, a few MB read at a time; None for a line
    over MAX_LINE_BYTES, whose rest is skipped unread."""
    carry = b""
    skipping = False
    while chunk := stream.read(READ_BYTES):
        if skipping:
            cut = chunk.find(b"\n")
            if cut < 0:
                continue
            chunk, skipping = chunk[cut + 1 :], False
        lines: list[bytes | None] = (carry + chunk if carry else chunk).split(b"\n")  # type: ignore[assignment]
        carry = lines.pop()  # type: ignore[assignment]  # the line the next chunk goes on with
        if lines and len(lines[0]) > MAX_LINE_BYTES:  # type: ignore[arg-type]
            lines[0] = None  # only the first can be long: it began in an earlier chunk
        if len(carry) > MAX_LINE_BYTES:
            lines.append(None)
            carry, skipping = b"", True
        if lines:
            yield lines
    if carry:
        yield [carry if len(carry) <= MAX_LINE_BYTES else None]


_NOT_CSV = "JSON Lines: one JSON object per line (this looks like CSV; write each row as a JSON object)"
#: Bytes read from the file at a time.
READ_BYTES = 4 << 20


#: Lines decoded and checked together (at most this many, or this many bytes). A block that is
#: clean end to end is checked column by column; a block with any problem is read again line by
#: line, which gives every message in file order. Memory stays bounded by a block, however large
#: the file or its lines.
BLOCK_LINES = 8192
BLOCK_BYTES = 16 << 20


@dataclass
class _FileState:
    """What the reader carries from line to line and block to block."""

    sub: Submission
    schema: CompiledSchema
    known_fields: frozenset[str]
    #: Every sweep of the split (as tuples: a row key less its time step).
    sweeps: frozenset[tuple[Any, ...]]
    first_line: dict[RowKey, int] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    seen_conditions: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Extra fields per key set (a file repeats one shape on every line).
    extras: dict[frozenset[str], list[str]] = field(default_factory=dict)

    @property
    def universe(self) -> frozenset[RowKey]:
        """Every row key of the split (built on first use: a clean file never needs it)."""
        return canonical_keys()

    def extra_fields(self, obj: dict[str, Any]) -> list[str]:
        shape = frozenset(obj)
        found = self.extras.get(shape)
        if found is None:
            found = self.extras[shape] = sorted(shape - self.known_fields)
        return found


def _read_lines(stream: io.BufferedIOBase, sub: Submission) -> None:
    report = sub.report
    schema = compiled(SCHEMA)
    state = _FileState(sub, schema, frozenset(schema.properties), canonical_sweep_set())
    lineno = 0
    content = False
    block: list[tuple[int, bytes]] = []
    block_bytes = 0
    max_lines = 2 * len(state.sweeps) * layout().time_steps
    for lines in _line_batches(stream):
        if lineno == 0 and lines[0] is not None:
            lines[0] = lines[0].removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark is allowed
        if not content:
            for offset, raw in enumerate(lines, start=lineno + 1):
                if raw is None:
                    content = True
                    break
                head = raw.strip()
                if head:
                    content = True
                    if not head.startswith((b"{", b"[")) and head.count(b",") >= 2:
                        # One message, not one per line: this is a table, not JSON Lines.
                        report.error("csv", f"line {offset}", "", _NOT_CSV, repr(head[:80].decode("utf-8", "replace")))
                        return
                    break
        if lineno + len(lines) > max_lines:
            # A submission has one line per row (say, a blank line after each); past twice the
            # split it is not one (a 1.2 MB gzip of newlines is a billion lines): stop reading.
            report.error(
                "too-long",
                f"line {max_lines + 1:,}",
                "",
                f"at most {max_lines:,} lines (the split has {max_lines // 2:,} rows)",
                "more lines; reading stopped there",
            )
            lines = lines[: max_lines - lineno]
        for raw in lines:  # None marks a line over MAX_LINE_BYTES
            lineno += 1
            block.append((lineno, raw))  # type: ignore[arg-type]
            block_bytes += len(raw) if raw is not None else 0
            if len(block) == BLOCK_LINES or block_bytes >= BLOCK_BYTES:
                _read_block(block, state)
                block, block_bytes = [], 0
        if lineno >= max_lines:
            break
    if block:
        _read_block(block, state)

    for name, values in state.seen_conditions.items():
        if len(values) > 1:
            listed = ", ".join(f"{v!r} (first on line {n})" for v, n in values.items())
            report.error("conditions", "file", f"meta.{name}", "the same on every line", listed)
        sub.conditions[name] = next(iter(values))
    if len(state.models) > 1:
        names = ", ".join(f"{m!r} (first on line {n})" for m, n in state.models.items())
        report.error("model", "file", "model", "the same model on every line", names)
    sub.model = next(iter(state.models), None)
    if not content:  # nothing but blank lines: one message, not a warning per line
        sub.report = report = Report(str(sub.path), "submission")
        report.error("empty", "file", "", "one JSON object per line", "an empty file")
        return
    _summarize(report, sub, lineno)


def _read_block(block: list[tuple[int, bytes]], state: _FileState) -> None:
    for fast in FAST_READERS:
        if fast(block, state):
            return
    for lineno, raw in block:
        _read_line(lineno, raw, state)


def _read_arrow_block(block: list[tuple[int, bytes]], state: _FileState) -> bool:
    """Read a block with Arrow's JSON reader if it is clean; False (nothing recorded) otherwise.

    Arrow parses faster than Python's `json` but accepts what JSON does not (NaN, Infinity),
    cannot tell a null from an absent field, and reads `-0` as a float: this layer proves a
    block clean only where the two readers agree. No escapes `\\u` (a key could be spelt with
    them), no NaN, Infinity or integer -0, valid UTF-8, one object per line; the presence of each
    field that may be absent or null is counted in the line's bytes (a quoted name appears once
    exactly where the field is); the values then go through the same column-wise schema check.
    """
    lines = [raw for _, raw in block]
    if any(raw is None or not raw.strip() for raw in lines):
        return False
    if any(arrow_line_problem(raw) for raw in lines):  # what would crash Arrow's reader, or mislead it
        return False
    data = b"\n".join(lines)  # no None: checked above
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if any(token in data for token in _ARROW_DISAGREES) or (b"-0" in data and _MINUS_ZERO.search(data)):
        return False
    try:
        table = pajson.read_json(io.BytesIO(data))
    except (pa.ArrowException, ValueError):
        return False
    if table.num_rows != len(lines) or not set(table.column_names) <= state.known_fields:
        return False
    columns: dict[str, list[Any]] = {}
    for name in table.column_names:
        column = table.column(name)
        kind = column.type
        if name == "meta":
            # Flat, as the runner writes it: Python's reader refuses deep nesting that Arrow's reads.
            if not (pa.types.is_null(kind) or (pa.types.is_struct(kind) and _flat(kind))):
                return False
        elif not any(is_kind(kind) for is_kind in _SCALAR_TYPES):
            return False  # a list or an object where the schema wants a scalar: the other layers say so
        if name not in _MAYBE_ABSENT and column.null_count:
            return False  # null or absent where a value is required
        columns[name] = column.to_pylist()
    if not all(map(all_finite, table.columns)):
        return False  # Arrow reads an integer beyond the float range as infinity; Python keeps it exact
    for name in _MAYBE_ABSENT:
        values = columns.get(name)
        if values is None or None not in values:
            continue  # no line has the field, or every line has it (a name twice is Arrow's error)
        quoted = f'"{name}"'.encode()
        counts = [line.count(quoted) for line in lines]
        if max(counts) > 1:
            return False
        for i, count in enumerate(counts):
            if not count:
                if values[i] is not None:
                    return False
                values[i] = MISSING
    if any(name not in columns for name in layout().key):
        return False
    if state.schema.suspect_columns(columns):
        return False
    n = len(lines)
    responses = columns.get("response", [MISSING] * n)
    predictions = columns.get("prediction", [MISSING] * n)
    return _record_clean(
        state,
        [lineno for lineno, _ in block],
        columns,
        responses=[None if v is MISSING else v for v in responses],
        values=[None if v is MISSING else v for v in predictions],
        has_response=[v is not MISSING for v in responses],
        models=columns.get("model", [MISSING] * n),
        metas=columns.get("meta", [MISSING] * n),
        blank=[],
        extras=[],
    )


def _read_clean_block(block: list[tuple[int, bytes]], state: _FileState) -> bool:
    """Read a block column by column if it is clean; False (nothing recorded) if it has any problem.

    Clean: every line is a flat object the schema accepts (asked per column, see
    `CompiledSchema.suspect_rows`), with a key of the split seen nowhere before, a finite
    number where a number is. Blank lines and extra fields (warnings) are allowed. Each value
    comes from the same decoder the line-by-line path uses, so both paths read the same numbers.
    """
    numbered: list[int] = []
    texts: list[str] = []
    blank: list[int] = []
    for lineno, raw in block:
        if raw is None:
            return False
        if not raw.strip():
            blank.append(lineno)
            continue
        try:
            texts.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return False
        numbered.append(lineno)
    try:
        objs = [_DECODER.decode(text) for text in texts]
    except (ValueError, RecursionError):  # JSONDecodeError, duplicate fields, NaN, 1e400, 5,000 digits
        return False
    if any(type(obj) is not dict for obj in objs):
        return False
    if any("\\u" in text for text in texts) and any(map(_has_lone_surrogate, objs)):
        return False
    if state.schema.suspect_rows(objs):
        return False
    return _record_clean(
        state,
        numbered,
        {name: [obj[name] for obj in objs] for name in layout().key},
        responses=[obj.get("response") for obj in objs],
        values=[obj.get("prediction") for obj in objs],
        has_response=["response" in obj for obj in objs],
        models=[obj.get("model", MISSING) for obj in objs],
        metas=[obj.get("meta", MISSING) for obj in objs],
        blank=blank,
        extras=[
            (lineno, extra) for lineno, obj in zip(numbered, objs, strict=True) for extra in state.extra_fields(obj)
        ],
    )


def _record_clean(
    state: _FileState,
    numbered: list[int],
    columns: dict[str, list[Any]],
    *,
    responses: list[str | None],
    values: list[Any],
    has_response: list[bool],
    models: list[Any],
    metas: list[Any],
    blank: list[int],
    extras: list[tuple[int, str]],
) -> bool:
    """Record a block whose lines passed the schema, or return False if a key or number is off.

    Checked here, for the whole block: keys of the split, none seen before, numbers finite."""
    try:
        keys = row_keys(columns)
        numbers = [None if v is None else float(v) for v in values]
    except OverflowError:  # an integer beyond the float range: the line-by-line path names it
        return False
    distinct = set(keys)
    if len(distinct) != len(keys) or not state.first_line.keys().isdisjoint(distinct):
        return False
    # Keys of the split: their sweeps are the grid's (the schema bounded the time steps already).
    if not {key[:-1] for key in distinct} <= state.sweeps:
        return False

    # Clean: record it. Warnings in line order, as the line-by-line path gives them.
    report = state.sub.report
    for lineno, extra in sorted([(lineno, "") for lineno in blank] + extras):
        if extra:
            _warn_extra_field(report, lineno, extra)
        else:
            _warn_blank_line(report, lineno)
    state.first_line.update(zip(keys, numbered, strict=True))
    for model, lineno in zip(models, numbered, strict=True):
        if model is not MISSING:
            state.models.setdefault(model, lineno)
    for meta, lineno in zip(metas, numbered, strict=True):
        if meta is not MISSING and meta:
            _note_conditions(meta, lineno, state)
    state.sub.predictions.extend(
        map(Prediction._make, zip(keys, numbered, responses, numbers, has_response, strict=True))
    )
    return True


def _flat(kind: pa.StructType) -> bool:
    return all(any(is_kind(kind.field(i).type) for is_kind in _SCALAR_TYPES) for i in range(kind.num_fields))


#: The fast layers, tried in order on each block; a block none of them proves clean is read line by line.
FAST_READERS = (_read_arrow_block, _read_clean_block)
#: Opening brackets a line may hold for Arrow's reader to be given it (it handled 10,000 deep here).
#: Fields a line may leave out or give as null: their presence is counted in the line's bytes.
_MAYBE_ABSENT = ("frequency_cycles", "phase_deg", "response", "prediction", "model", "meta")
_SCALAR_TYPES = (pa.types.is_string, pa.types.is_int64, pa.types.is_float64, pa.types.is_null, pa.types.is_boolean)
#: Where Arrow's reader and Python's `json` may disagree (see `_read_arrow_block`): substrings
#: (each found by a fast scan) and an integer -0 (Python reads the integer 0).
_ARROW_DISAGREES = (b"NaN", b"Infinity", b"\\u")
_MINUS_ZERO = re.compile(rb"-0\s*[,}\]]")


def _warn_extra_field(report: Report, lineno: int, extra: str) -> None:
    report.warning(
        "unknown-field",
        f"line {lineno}",
        extra,
        "only the fields of predictions.schema.json",
        "an extra field (ignored)",
    )


def _warn_blank_line(report: Report, lineno: int) -> None:
    report.warning("blank-line", f"line {lineno}", "", "one JSON object per line", "a blank line (skipped)")


def _note_conditions(meta: dict[str, Any], lineno: int, state: _FileState) -> None:
    for name in CONDITIONS:
        value = meta.get(name)
        if isinstance(value, str):
            state.seen_conditions.setdefault(name, {}).setdefault(value, lineno)


def _read_line(lineno: int, raw: bytes | None, state: _FileState) -> None:
    """One line, every problem reported in the order the file shows it."""
    report = state.sub.report
    if raw is None:
        report.error("too-long", f"line {lineno}", "", f"a line of at most {MAX_LINE_BYTES:,} bytes", "longer")
        return
    if not raw.strip():
        _warn_blank_line(report, lineno)
        return
    obj = _decode(raw.removesuffix(b"\r"), lineno, report)
    if obj is _BAD:
        return
    if not isinstance(obj, dict):
        found = _KIND.get(type(obj), type(obj).__name__)
        hint = " (JSON Lines: one object per line, not one array)" if isinstance(obj, list) else ""
        report.error("not-object", f"line {lineno}", "", "a JSON object" + hint, found)
        return
    errors = state.schema.errors(obj)
    for e in errors:
        report.error("schema", f"line {lineno}", e.field, e.expected, _with_hint(e.field, obj, e.found))
    for extra in state.extra_fields(obj):
        _warn_extra_field(report, lineno, extra)
    if errors:
        return
    key = row_key(obj)
    if key not in state.universe:
        report.error("unknown-key", f"line {lineno}", "", "the key of a row of the canonical split", format_key(key))
        return
    if key in state.first_line:
        report.error(
            "duplicate-key",
            f"line {lineno}",
            "",
            "each row key once",
            f"{format_key(key)} again (first on line {state.first_line[key]})",
        )
        return
    state.first_line[key] = lineno
    if "model" in obj:
        state.models.setdefault(obj["model"], lineno)
    meta = obj.get("meta")
    if meta:
        _note_conditions(meta, lineno, state)
    value = obj.get("prediction")
    try:
        number = None if value is None else float(value)
    except OverflowError:  # an integer literal beyond the float range
        report.error(
            "non-finite",
            f"line {lineno}",
            "prediction",
            "finite numbers",
            f"an integer of {len(str(value))} digits",
        )
        return
    state.sub.predictions.append(Prediction(key, lineno, obj.get("response"), number, has_response="response" in obj))


def _summarize(report: Report, sub: Submission, lines: int) -> None:
    cov = coverage({p.key for p in sub.predictions})
    report.summary.update(
        lines=lines,
        predictions=len(sub.predictions),
        model=sub.model,
        coverage=cov,
        text=_coverage_text(cov),
    )


def _coverage_text(cov: dict[str, Any]) -> list[str]:
    out = ["coverage by family: " + ", ".join(f"{f} {c['rows']:,}/{c['of']:,}" for f, c in cov["families"].items())]
    out.append("coverage by preset: " + ", ".join(f"{p} {c['rows']:,}/{c['of']:,}" for p, c in cov["presets"].items()))
    complete = ", ".join(cov["presets_complete"]) or "none"
    out.append(f"presets fully covered: {complete}")
    return out


def validate_submission(path: str | Path) -> Report:
    """The validation report of a predictions file."""
    return read_submission(path).report
