"""Read and validate a submission: predictions JSONL, one object per line.

`read_submission` returns the lines that can be scored (as columns, `Answers`) together with the
report, so the scorer reads a file once; `validate_submission` is the report alone. A block of
lines Arrow's reader proves clean goes straight to columns; any other block is read line by line
by Python's reader, which names every problem (see `_read_arrow_block`).
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
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.json as pajson

from mathbode.core.arrow_columns import all_finite, validity
from mathbode.core.arrow_compute import as_float64, dictionary_codes
from mathbode.core.errors import UsageError

from .answers import Answers, Prediction
from .arrow_guard import MAX_ARROW_BRACKETS
from .json_schemas import load_schema
from .keys import canonical_row_ids, canonical_row_position, coverage, format_key, row_key
from .layout import layout
from .report import Report
from .row_id_predictions import PARQUET_MAGIC, read_row_id_parquet
from .universe import Universe, is_family_name, other_release_hint, universe_of

if TYPE_CHECKING:
    from .compiled import CompiledSchema, SchemaError

SCHEMA = "predictions.schema.json"
GZIP_MAGIC = b"\x1f\x8b"
#: `meta` fields that change what a score means; one value per file (see the runner's options).
CONDITIONS = ("answer_format", "prompting", "protocol", "history", "run_in", "dedupe", "split")
#: The condition that says which split a line answered (`mathbode.schema.splits`): a string on
#: every line of a file, or on none.
SPLIT = "split"
#: Stands for "no meta.split" among the splits a file's lines name (sorts with them by line).
_NO_SPLIT: Any = type("_NoSplit", (), {"__repr__": lambda self: "no meta.split"})()


@dataclass
class Submission:
    path: Path
    #: The valid lines, as columns (see `Answers`).
    answers: Answers = field(default_factory=lambda: Answers.of([]))
    model: str | None = None
    #: How the answers were obtained, from the lines' `meta` (`answer_format`, `prompting`), when stated.
    conditions: dict[str, str] = field(default_factory=dict)
    report: Report = field(default_factory=lambda: Report("", "submission"))
    #: The families it may name and the row ids its answers count in (a reference's; default the canonical five).
    universe: Universe = field(default_factory=lambda: universe_of(None))

    @property
    def predictions(self) -> list[Prediction]:
        """The valid lines as objects, in file order."""
        return self.answers.predictions()


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


def _with_hint(field: str, obj: dict[str, Any], found: str, universe: Universe) -> str:
    """A misspelt family gets the "did you mean" the build command gives; a well-named family of
    another release, with no --reference, how to give its release."""
    if field != "family" or not isinstance(obj.get(field), str):
        return found
    close = _closest_family(obj[field], universe)
    if close:
        return f"{found} (did you mean {close!r}?)"
    if universe.is_canonical and is_family_name(obj[field]):
        return f"{found} ({other_release_hint(obj[field])})"
    return found


@lru_cache(maxsize=1024)  # a file repeats its misspelling on every line
def _closest_family(value: str, universe: Universe) -> str | None:
    close = difflib.get_close_matches(value[:200], universe.families, n=1, cutoff=0.6)
    return close[0] if close else None


def _line_errors(obj: dict[str, Any], universe: Universe) -> list[SchemaError]:
    """The schema's errors of a line, and a family the universe lacks said as the schema says a
    value outside its `enum` (the schema itself allows any well-named family: releases differ)."""
    from .compiled import SchemaError

    errors = [e for e in _schema().errors(obj) if not (e.field == "family" and e.keyword == "pattern")]
    family = obj.get("family")
    if not isinstance(family, str) or family in universe.families or any(e.field == "family" for e in errors):
        return errors
    error = SchemaError("family", universe.enum_text(), _found(family), "enum")
    names = list(obj)
    after = [i for i, e in enumerate(errors) if e.field in obj and names.index(e.field) > names.index("family")]
    errors.insert(after[0] if after else len(errors), error)
    return errors


def _found(value: str) -> str:
    from .compiled import _found as found

    return found(value)


def read_submission(path: str | Path, universe: Universe | None = None) -> Submission:
    """Parse and check a submission; every problem lands in `submission.report`. Its families are
    those of `universe` (a reference's; default, the canonical five)."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file. Give the path of a predictions .jsonl file.")
    if path.is_dir():
        raise UsageError(f"{path}: is a folder, not a predictions file.")
    report = Report(str(path), "submission")
    sub = Submission(path, report=report, universe=universe_of(universe))
    try:
        with open(path, "rb") as probe:
            head = probe.read(4)
        if head == PARQUET_MAGIC:
            sub.answers, sub.model = read_row_id_parquet(path.read_bytes(), report, sub.universe)
            _summarize(report, sub, lines=len(sub.answers))
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


def max_submission_lines(universe: Universe | None = None) -> int:
    """The most lines a submission is read to: twice the split's rows (a line per row, say a blank
    line after each); past that a file is not a submission and reading stops."""
    universe = universe_of(universe)
    # A release of --questions N holds N problems a family: its rows, not the layout's.
    return 2 * len(universe.families) * max(layout().rows_per_family, universe.layout.rows_per_family)


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


#: Lines decoded and checked together: at most this many, from one read of READ_BYTES (and the
#: line the read ended in). A block that is clean end to end is read by Arrow as columns; a block
#: with any problem is read line by line, which gives every message in file order. Memory stays
#: bounded by a block, however large the file or its lines.
BLOCK_LINES = 8192


@dataclass
class _FileState:
    """What the reader carries from line to line and block to block."""

    sub: Submission
    known_fields: frozenset[str]
    #: Per row_id, the line that answered it (0: none yet).
    first_line: np.ndarray
    #: The answers so far, a part per block (file order).
    parts: list[Answers] = field(default_factory=list)
    #: Lines of the block being read one by one.
    pending: list[Prediction] = field(default_factory=list)
    models: dict[str, int] = field(default_factory=dict)
    seen_conditions: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Extra fields per key set (a file repeats one shape on every line).
    extras: dict[frozenset[str], list[str]] = field(default_factory=dict)
    #: The first line that records no split (0: every line so far names one, or none does).
    no_split_line: int = 0

    def extra_fields(self, obj: dict[str, Any]) -> list[str]:
        shape = frozenset(obj)
        found = self.extras.get(shape)
        if found is None:
            found = self.extras[shape] = sorted(shape - self.known_fields)
        return found


def _read_lines(stream: io.BufferedIOBase, sub: Submission) -> None:
    report = sub.report
    rows = sub.universe.num_rows
    state = _FileState(sub, frozenset(load_schema(SCHEMA)["properties"]), np.zeros(rows, dtype=np.int64))
    lineno = 0
    content = False
    max_lines = max_submission_lines(sub.universe)
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
        for start in range(0, len(lines), BLOCK_LINES):
            _read_block(lineno + start + 1, lines[start : start + BLOCK_LINES], state)
        lineno += len(lines)
        if lineno >= max_lines:
            break
    sub.answers = Answers.concat(state.parts) if state.parts else Answers.of([], sub.universe)

    splits = state.seen_conditions.get(SPLIT)
    if splits and state.no_split_line:
        # A file some of whose lines say no split was put together from two sources (a run and a
        # hand-written file, say): which split those lines answered cannot be known.
        splits[_NO_SPLIT] = state.no_split_line
    for name, values in state.seen_conditions.items():
        if len(values) > 1:
            ordered = sorted(values.items(), key=lambda vn: vn[1])
            listed = ", ".join(f"{v if v is _NO_SPLIT else repr(v)} (first on line {n})" for v, n in ordered)
            report.error("conditions", "file", f"meta.{name}", "the same on every line", listed)
        sub.conditions[name] = min((n, v) for v, n in values.items() if v is not _NO_SPLIT)[1]
    if len(state.models) > 1:
        names = ", ".join(f"{m!r} (first on line {n})" for m, n in state.models.items())
        report.error("model", "file", "model", "the same model on every line", names)
    sub.model = next(iter(state.models), None)
    if not content:  # nothing but blank lines: one message, not a warning per line
        sub.report = report = Report(str(sub.path), "submission")
        report.error("empty", "file", "", "one JSON object per line", "an empty file")
        return
    _summarize(report, sub, lineno)


def _read_block(first: int, lines: list[bytes | None], state: _FileState) -> None:
    """Lines `first`, `first + 1`, ...: as columns if clean, else (any problem or warning) one by one."""
    answers = _read_arrow_block(first, lines, state) if ARROW_BLOCKS else None
    if answers is None:
        for lineno, raw in enumerate(lines, start=first):
            _read_line(lineno, raw, state)
        answers = Answers.of(state.pending, state.sub.universe)
        state.pending = []
    state.parts.append(answers)


#: A block is parsed on this thread, as one piece. Arrow's thread pool split a FULL file's 2 MB
#: blocks in two 1 MB halves and gained nothing on 2 cores: measured, the file read in 160 ms
#: instead of 220 (medians of 6), and the reference's parquet files read next took 15 ms instead
#: of 15-200; one piece instead of two saves a further 10-15 % of the parse (no chunks to join).
def _one_piece(size: int) -> pajson.ReadOptions:
    return pajson.ReadOptions(use_threads=False, block_size=min(max(size + 1, 1 << 20), 1 << 30))


#: Whether clean blocks are read by Arrow (off: every line by Python's reader; the tests compare the two).
ARROW_BLOCKS = True


def _read_arrow_block(first: int, block: list[bytes | None], state: _FileState) -> Answers | None:
    """A block's answers, read by Arrow's JSON reader, if the block is clean; None (nothing
    recorded) if any line has a problem or a warning, for the line-by-line reader to name.

    Arrow parses faster than Python's `json` but accepts what JSON does not (NaN, Infinity),
    cannot tell a null from an absent field, and reads `-0` as a float: a block counts as clean
    only where the two readers agree. No `\\u` escape of a surrogate (Python's reader refuses a
    lone one), no integer -0, every number finite (NaN and Infinity read as numbers too), valid
    UTF-8, one object per line, only the schema's fields, a key of the split on every line, each
    seen once.
    Where a field that may be absent or null reads as null, whether the line has it is read from
    the line's bytes (`"name":` is in the line exactly where the field is). A key of the split
    satisfies every rule the schema has for key fields (a test checks every key of the split), so
    the other fields' rules are checked here, as columns.
    """
    if None in block:
        return None  # a line over MAX_LINE_BYTES
    lines: list[bytes] = block  # type: ignore[assignment]
    data = b"\n".join(lines)
    starts = _line_starts(lines)
    if not _arrow_may_read(data, starts):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if (b"\\u" in data and _SURROGATE_ESCAPE.search(data)) or (b"-0" in data and _MINUS_ZERO.search(data)):
        return None
    try:
        table = pajson.read_json(io.BytesIO(data), read_options=_one_piece(len(data)))
    except (pa.ArrowException, ValueError):
        return None
    n = len(lines)
    names = set(table.column_names)
    if table.num_rows != n or not names <= state.known_fields or not set(layout().key) <= names:
        return None  # an extra field (a warning), a field missing, two objects on a line
    if not all(_KINDS[f.name](f.type) for f in table.schema):
        return None  # a value of a type the field may not have (a list, an object, true)
    try:
        columns = {name: table.column(name).combine_chunks() for name in table.column_names}
    except pa.ArrowException:  # pyarrow has failed here on some nested columns: Python's reader decides
        return None
    if not all(map(all_finite, columns.values())):
        return None  # Arrow reads an integer beyond the float range as infinity; Python keeps it exact
    meta = columns.get("meta")
    if meta is not None and pa.types.is_struct(meta.type):
        inner = [meta.type.field(i).name for i in range(meta.type.num_fields)]
        if any('"' in name or name in state.known_fields for name in inner):
            return None  # a meta field named like a top-level one would be counted as one
    valid = {name: _valid(columns.get(name), n) for name in _MAYBE_ABSENT}
    found = {name: _present(lines, columns.get(name), valid[name], name) for name in _MAYBE_ABSENT}
    has = {name: mask for name, mask in found.items() if mask is not None}
    if len(has) != len(found):
        return None
    if not (has["frequency_cycles"].all() and has["phase_deg"].all()):
        return None  # required (null allowed)
    if (has["response"] == has["prediction"]).any():
        return None  # exactly one of the two
    for name in ("response", "model", "meta"):
        if (has[name] & ~valid[name]).any():
            return None  # null where the schema wants a string or an object
    model = columns.get("model")
    if model is not None and pa.types.is_string(model.type) and _any_empty(model):
        return None  # an empty model name
    records_split = _records_split(meta)
    if records_split is None:
        return None  # a meta.split missing on some lines or not a string: named line by line
    rows = canonical_row_ids(columns, state.sub.universe)
    if rows is None or (rows < 0).any() or state.first_line[rows].any():
        return None  # a key not of the split, or seen in an earlier block
    numbers = np.arange(first, first + n, dtype=np.int64)
    state.first_line[rows] = numbers
    if not np.array_equal(state.first_line[rows], numbers):  # a later line of a key overwrote an earlier one
        state.first_line[rows] = 0
        return None
    if not records_split:
        state.no_split_line = state.no_split_line or first
    if model is not None:
        for value, line in _first_lines(model, numbers):
            state.models.setdefault(value, line)
    if meta is not None and pa.types.is_struct(meta.type):
        for name in CONDITIONS:
            index = meta.type.get_field_index(name)
            if index >= 0 and pa.types.is_string(meta.type.field(index).type):
                for value, line in _first_lines(meta.field(index), numbers):
                    state.seen_conditions.setdefault(name, {}).setdefault(value, line)
    response = columns.get("response")
    prediction = columns.get("prediction")
    return Answers(
        row=rows,
        line=numbers,
        response=response.to_pylist() if response is not None else [None] * n,
        prediction=(
            # An integer beyond 2^53 rounds to the nearest float, as Python's float() rounds it.
            np.asarray(as_float64(prediction).to_numpy(zero_copy_only=False), dtype=np.float64)
            if prediction is not None and not pa.types.is_null(prediction.type)
            else np.full(n, np.nan)
        ),
        has_response=has["response"],
        universe=state.sub.universe,
    )


def _any_empty(column: pa.StringArray) -> bool:
    """Whether a non-null string of the column is empty (its end offset equals its start)."""
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32, count=len(column) + 1, offset=4 * column.offset)
    return bool(((offsets[1:] == offsets[:-1]) & validity(column).astype(bool)).any())


def _records_split(meta: pa.Array | None) -> bool | None:
    """True when the block's `meta.split` is a string on every line, False when no line has one;
    None otherwise (some lines without, or not a string), for the line-by-line reader to name."""
    index = meta.type.get_field_index(SPLIT) if meta is not None and pa.types.is_struct(meta.type) else -1
    if index < 0:
        return False
    assert meta is not None
    column = meta.field(index)
    if pa.types.is_string(column.type) and meta.null_count == 0 and column.null_count == 0:
        return True
    return None


def _line_starts(lines: list[bytes]) -> np.ndarray:
    """Where each line begins in the lines joined by newlines, and (last) where the text ends + 1."""
    starts = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lines), np.int64, len(lines)) + 1, out=starts[1:])
    return starts


def _arrow_may_read(data: bytes, starts: np.ndarray) -> bool:
    """`arrow_guard.arrow_line_problem` of every line, column-wise: each line an object from its
    first byte to its last (a carriage return aside), no line with more brackets than Arrow's
    reader may recurse into."""
    if len(data) == 0:
        return False
    text = np.frombuffer(data, dtype=np.uint8)
    first, last = starts[:-1], starts[1:] - 2
    if (last < first).any():
        return False  # an empty line
    last = last - (text[last] == ord("\r"))
    if (last < first).any() or (text[first] != ord("{")).any() or (text[last] != ord("}")).any():
        return False
    brackets = np.flatnonzero((text == ord("{")) | (text == ord("[")))
    per_line = np.bincount(np.searchsorted(starts, brackets, side="right") - 1, minlength=len(first))
    return bool(per_line.max() <= MAX_ARROW_BRACKETS)


def _present(lines: list[bytes], column: pa.Array | None, valid: np.ndarray, name: str) -> np.ndarray | None:
    """Which lines have field `name` (None: a line Python's reader refuses). Where Arrow read a
    value, the line has it; where it read null, the line has it if `"name":` is in the line (a
    field twice is an error of Arrow's reader), or, in a line with a `\\u` escape (a name may be
    spelt with one), if Python's reader finds it."""
    if column is None or valid.all():
        return valid if column is None else np.ones(len(lines), dtype=bool)
    has = valid.copy()
    search = _field_pattern(name).search
    for i in np.flatnonzero(~valid).tolist():
        if b"\\u" in lines[i]:
            try:
                has[i] = name in _DECODER.decode(lines[i].decode("utf-8"))
            except (ValueError, RecursionError):
                return None
        else:
            has[i] = search(lines[i]) is not None
    return has


@lru_cache(maxsize=None)
def _field_pattern(name: str) -> re.Pattern[bytes]:
    # A quoted name followed by a colon is a key: inside a string a quote is escaped.
    return re.compile(re.escape(f'"{name}"'.encode()) + rb"\s*:")


def _valid(column: pa.Array | None, n: int) -> np.ndarray:
    """Where the column holds a value (not null), as booleans; nowhere for an absent column."""
    if column is None or pa.types.is_null(column.type):  # a column of nulls has no validity bitmap
        return np.zeros(n, dtype=bool)
    return validity(column).astype(bool)


def _first_lines(column: pa.Array, lines: np.ndarray) -> list[tuple[Any, int]]:
    """Each distinct non-null string of the column and the first line it is on, in file order."""
    codes, dictionary = dictionary_codes(column)
    distinct, first = np.unique(codes, return_index=True)
    values = dictionary.to_pylist()
    return sorted(
        ((values[c], int(lines[i])) for c, i in zip(distinct, first, strict=True) if c >= 0), key=lambda vf: vf[1]
    )


def _flat(kind: pa.StructType) -> bool:
    return all(any(is_kind(kind.field(i).type) for is_kind in _SCALAR_TYPES) for i in range(kind.num_fields))


#: Fields a line may leave out or give as null: their presence is read from the line's bytes.
_MAYBE_ABSENT = ("frequency_cycles", "phase_deg", "response", "prediction", "model", "meta")
_SCALAR_TYPES = (pa.types.is_string, pa.types.is_int64, pa.types.is_float64, pa.types.is_null, pa.types.is_boolean)


def _number(kind: pa.DataType) -> bool:
    return pa.types.is_int64(kind) or pa.types.is_float64(kind)


#: The Arrow types each field's column may have in a block read by Arrow (others: line by line).
_KINDS = {
    "family": pa.types.is_string,
    "signal_type": pa.types.is_string,
    "question_id": _number,
    "amplitude_scale": _number,
    "time_step": _number,
    "frequency_cycles": lambda kind: _number(kind) or pa.types.is_null(kind),
    "phase_deg": lambda kind: _number(kind) or pa.types.is_null(kind),
    "response": lambda kind: pa.types.is_string(kind) or pa.types.is_null(kind),
    "prediction": lambda kind: _number(kind) or pa.types.is_null(kind),
    "model": lambda kind: pa.types.is_string(kind) or pa.types.is_null(kind),
    # Flat, as the runner writes it: Python's reader refuses deep nesting that Arrow's reads.
    "meta": lambda kind: pa.types.is_null(kind) or (pa.types.is_struct(kind) and _flat(kind)),
}
#: A `\\u` escape of a UTF-16 surrogate: Python's reader reports a lone one, Arrow's need not.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
#: An integer -0, which Arrow reads as the float -0.0 and Python as the integer 0.
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


def _note_conditions(meta: Any, lineno: int, state: _FileState) -> bool:
    """Note the line's conditions; False (an error reported) when its `meta.split` is not a string:
    a split the scorer cannot compare must not let the file pass as one that records none."""
    if not isinstance(meta, dict) or SPLIT not in meta:
        state.no_split_line = state.no_split_line or lineno
    elif not isinstance(meta[SPLIT], str):
        state.sub.report.error(
            "schema",
            f"line {lineno}",
            f"meta.{SPLIT}",
            "a string: the prompts hash of the split the line answered, as `mathbode run` writes it",
            _KIND.get(type(meta[SPLIT]), "a JSON object"),
        )
        return False
    if not isinstance(meta, dict):
        return True
    for name in CONDITIONS:
        value = meta.get(name)
        if isinstance(value, str):
            state.seen_conditions.setdefault(name, {}).setdefault(value, lineno)
    return True


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
    universe = state.sub.universe
    errors = _line_errors(obj, universe)
    for e in errors:
        report.error("schema", f"line {lineno}", e.field, e.expected, _with_hint(e.field, obj, e.found, universe))
    for extra in state.extra_fields(obj):
        _warn_extra_field(report, lineno, extra)
    if errors:
        return
    key = row_key(obj)
    row = canonical_row_position(universe).get(key)
    if row is None:
        report.error("unknown-key", f"line {lineno}", "", "the key of a row of the canonical split", format_key(key))
        return
    if state.first_line[row]:
        report.error(
            "duplicate-key",
            f"line {lineno}",
            "",
            "each row key once",
            f"{format_key(key)} again (first on line {state.first_line[row]})",
        )
        return
    state.first_line[row] = lineno
    if "model" in obj:
        state.models.setdefault(obj["model"], lineno)
    if not _note_conditions(obj.get("meta"), lineno, state):
        return
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
    state.pending.append(Prediction(key, lineno, obj.get("response"), number, has_response="response" in obj))


@lru_cache(maxsize=1)
def _schema() -> CompiledSchema:
    """The compiled schema, for lines read one by one (a clean file never needs it, nor jsonschema)."""
    from .compiled import compiled

    return compiled(SCHEMA)


def _summarize(report: Report, sub: Submission, lines: int) -> None:
    cov = coverage(sub.answers.row, sub.universe)
    report.summary.update(
        lines=lines,
        predictions=len(sub.answers),
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


def validate_lines(data: bytes, name: str, universe: Universe | None = None) -> Report:
    """The report of submission lines held in memory (`name` labels it): the very checks
    `read_submission` makes of a file, for a runner that must keep only lines a validator accepts."""
    sub = Submission(Path(name), report=Report(name, "submission"), universe=universe_of(universe))
    _read_lines(io.BytesIO(data), sub)
    return sub.report


def validate_submission(path: str | Path, universe: Universe | None = None) -> Report:
    """The validation report of a predictions file (its families: those of `universe`)."""
    return read_submission(path, universe).report
