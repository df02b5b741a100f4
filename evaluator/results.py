"""The results document: everything one submission's scoring found, in one versioned JSON file.

Scoring computes a `Results` (with the per-row correctness a paired test needs, which only the
scorer has); every presentation (the console table, report.md, the CSVs, the figures, the site)
renders from a `Results` read back from this document, never from the scorer's objects, so
`mathbode report` re-renders saved results byte for byte without the submission or the reference.

The document (`results.json`, schema `schema/results.schema.json`):

- `format`, `version`: "mathbode-results" and `RESULTS_VERSION`; another version is refused
  (an older one is upgraded where `UPGRADES` knows how).
- `scores`: exactly what scores.json holds: its head and its sections (`sections.Scores`, each
  section typed; the schema closed on every one of them).
- `tables`: sweeps.csv, frequency_summary.csv, chirp.csv and step.csv as typed columns.
- `step_curves`: per family, the mean normalised step response (the step figure).
- `traces`: the answers against the truth over the 64 steps of each mid-band sinusoid sweep and
  each chirp and step sweep (the site's drill-down).
- `rendering`: the submission's place among those scored together and the figures' format.

JSON has no NaN: a number that is not finite is written as null and read back as NaN, except
where null means "none" (`_NULL_MEANS_NONE`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from math import isfinite
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, cast

import numpy as np

from mathbode.core.atomic import read_text_file
from mathbode.core.errors import UsageError
from mathbode.schema.json_schemas import load_schema

from .sections import HEAD_KEYS, Scores, Sections
from .table import Table

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

#: The headline scores: the paper's two and the calibrated two (docs/scoring.md, "Calibrated scores").
HEADLINE = ("mb_core", "mb_plus", "mb_core_calibrated", "mb_plus_calibrated")
FORMAT = "mathbode-results"
#: The version this package writes and reads; a document of another is upgraded or refused.
RESULTS_VERSION = 1
TABLES = ("sweeps", "summary", "chirp", "step")
#: Keys under which null is a value of its own ("no interval", "no model"), not a NaN.
_NULL_MEANS_NONE = frozenset(
    {
        "model",
        "coverage",
        "preset_rows",
        "wilson_95",
        "intervals",
        "delay_interval",
        "low_pass_a_interval",
        "time_constant_interval",
        "input",
        "found",
        "distortion_detected",
        "mb_core_diff_interval",
        "mb_core_calibrated_diff_interval",
        "delay_diff_interval",
        "p_value",
        "p_value_holm",
        "even_p",
        "odd_p",
        "even_p_holm",
        "odd_p_holm",
    }
)


class ResultsVersionError(UsageError):
    """A results document this package cannot read."""


def json_safe(obj: Any) -> Any:
    """JSON has no NaN or infinity: write null for a number that is not finite."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        # A document's lists are mostly plain floats (100,000 of them in FULL's traces): those are
        # answered here, without a call each.
        return [(v if isfinite(v) else None) if type(v) is float else json_safe(v) for v in obj]
    return obj


def _nan_for_null(obj: Any, key: str = "") -> Any:
    """The inverse of `json_safe` for the scores: null is NaN, but under `_NULL_MEANS_NONE`."""
    if key in _NULL_MEANS_NONE:
        return obj
    if obj is None:
        return math.nan
    if isinstance(obj, dict):
        return {k: _nan_for_null(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_for_null(v, key) for v in obj]
    return obj


@dataclass
class Results:
    """One submission's results, as the presentations read them."""

    label: str
    model: str | None
    preset: str
    #: sweeps.csv: one row per sinusoid sweep scored.
    sweeps: Table
    #: frequency_summary.csv: per family and frequency.
    summary: Table
    families: dict[str, dict[str, Any]]
    overall: dict[str, Any]
    #: The sections of `scores` after the head (`sections.Sections`: each typed; the scorer's
    #: `SECTIONS` compute them).
    extra: Sections = field(default_factory=lambda: cast(Sections, {}))
    #: How it was scored (package, configuration, reference, parser, preset, time).
    provenance: dict[str, Any] = field(default_factory=dict)
    #: chirp.csv: every window of every chirp sweep answered.
    chirp: Table = field(default_factory=Table, repr=False)
    #: step.csv: every step sweep answered.
    step: Table = field(default_factory=Table, repr=False)
    #: Per family: the mean normalised step response, from 4 steps before the switch.
    step_curves: dict[str, list[float]] = field(default_factory=dict, repr=False)
    #: The drill-down: per mid-band sinusoid sweep and chirp and step sweep, its key, the truth
    #: and the answers (NaN: none compliant) over the 64 steps.
    traces: list[dict[str, Any]] = field(default_factory=list, repr=False)
    #: Per row in scope: whether the answer equals the truth truncated to six decimals. Only the
    #: scorer has it (the paired tests between submissions use it); it is not in the document.
    correct: Mapping[Any, bool] = field(default_factory=dict, repr=False)

    def scores_json(self) -> Scores:
        """The `scores.json` document."""
        # The head's values are typed looser than `Scores` says (the scorer's dicts): the schema
        # test proves what is written.
        return cast(
            Scores,
            {
                "method": self.provenance.get("method", "paper"),
                "preset": self.preset,
                "label": self.label,
                "model": self.model,
                "overall": self.overall,
                "families": self.families,
                **self.extra,
                "provenance": self.provenance,
            },
        )


@dataclass(frozen=True)
class Rendering:
    """How a report shows a submission: its place among those scored together, and its figures."""

    #: 0-based place in the order the files were given.
    position: int = 0
    #: How many submissions were scored together (1: the report folder is this submission's).
    of: int = 1
    #: The figures' format and resolution, or None when drawn without figures (--no-plots).
    figures: dict[str, Any] | None = field(default_factory=lambda: {"format": "png", "dpi": 90})


def _table_json(table: Table) -> dict[str, Any]:
    columns = []
    for name in table.columns:
        values = table[name]
        kind = {"f": "float64", "i": "int64"}.get(values.dtype.kind, "object")
        columns.append({"name": name, "type": kind, "values": json_safe(values.tolist())})
    return {"length": len(table), "columns": columns}


def _table_of(document: dict[str, Any]) -> Table:
    columns: dict[str, np.ndarray] = {}
    for c in document["columns"]:
        if c["type"] == "object":
            array = np.empty(len(c["values"]), dtype=object)
            array[:] = c["values"]
        else:
            values = [math.nan if v is None else v for v in c["values"]]
            array = np.array(values, dtype=np.float64 if c["type"] == "float64" else np.int64)
        columns[c["name"]] = array
    return Table(columns, length=document["length"])


def to_document(r: Results, rendering: Rendering = Rendering()) -> dict[str, Any]:
    """The results document of `r` (JSON-ready: no NaN)."""
    return {
        "format": FORMAT,
        "version": RESULTS_VERSION,
        "scores": json_safe(r.scores_json()),
        "tables": {name: _table_json(getattr(r, name)) for name in TABLES},
        "step_curves": json_safe(r.step_curves),
        "traces": json_safe(r.traces),
        "rendering": {"position": rendering.position, "of": rendering.of, "figures": rendering.figures},
    }


def dumps(document: dict[str, Any]) -> str:
    """The document's text: compact (the traces are most of it), one key order, a final newline."""
    return json.dumps(document, separators=(",", ":"), allow_nan=False, ensure_ascii=False) + "\n"


#: Upgrades from older versions, by the version they read: each returns the next version's document.
UPGRADES: dict[int, Any] = {}


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    # jsonschema (30-50 ms of imports) loads only where a document is read back: scoring writes one.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema("results.schema.json"))


@lru_cache(maxsize=1)
def _sweep_validator() -> Draft202012Validator:
    """Every trace's sweep (the skeleton checks the first few with the document): the schema's own definition."""
    from jsonschema import Draft202012Validator

    definitions = load_schema("results.schema.json")["$defs"]
    return Draft202012Validator({"$ref": "#/$defs/sweep", "$defs": definitions})


#: The long arrays (a FULL document holds about 100,000 numbers): jsonschema takes half a second
#: over them, so it reads their first few and `_check_arrays` the rest.
_SAMPLE = 4


def _skeleton(document: dict[str, Any]) -> dict[str, Any]:
    """The document with each long array cut to its first `_SAMPLE` values, for jsonschema."""
    out = dict(document)
    if isinstance(document.get("traces"), list):
        out["traces"] = [
            {k: v[:_SAMPLE] if k in ("truth", "answer") and isinstance(v, list) else v for k, v in t.items()}
            if isinstance(t, dict)
            else t
            for t in document["traces"][:_SAMPLE]
        ]
    tables = document.get("tables")
    if isinstance(tables, dict):
        out["tables"] = {
            name: {
                **table,
                "columns": [
                    {**c, "values": c["values"][:_SAMPLE]}
                    if isinstance(c, dict) and isinstance(c.get("values"), list)
                    else c
                    for c in table.get("columns", [])
                ],
            }
            if isinstance(table, dict) and isinstance(table.get("columns"), list)
            else table
            for name, table in tables.items()
        }
    return out


def _check_arrays(document: dict[str, Any], where: str) -> None:
    """What the schema says of the long arrays, checked at the speed of a loop."""

    def refuse(at: str, what: str) -> None:
        raise ResultsVersionError(f"{where}: does not follow schema/results.schema.json at {at}: {what}")

    sweep_errors = _sweep_validator()

    number = (int, float)
    first = document["traces"][0] if document["traces"] else {}
    for i, t in enumerate(document["traces"]):
        if not isinstance(t, dict) or t.keys() != first.keys() or not isinstance(t.get("sweep"), dict):
            refuse(f"traces/{i}", "not a trace like the first (id, sweep, truth, answer)")
        if not isinstance(t["id"], str) or not isinstance(t["truth"], list) or not isinstance(t["answer"], list):
            refuse(f"traces/{i}", "an id that is not a text, or truth or answer not a list")
        for error in sweep_errors.iter_errors(t["sweep"]):
            refuse(f"traces/{i}/sweep/{_path(tuple(error.path))}", _short(error.message))
        if len(t["truth"]) != len(t["answer"]):
            refuse(f"traces/{i}", "truth and answer of different lengths")
        if not all(type(v) in number for v in t["truth"]):
            refuse(f"traces/{i}/truth", "a value that is not a number")
        if not all(v is None or type(v) in number for v in t["answer"]):
            refuse(f"traces/{i}/answer", "a value that is neither a number nor null")
    _check_tables(document, refuse)
    _check_multitone(document["scores"].get("multitone"), refuse)
    for name, table in document["tables"].items():
        for c in table["columns"]:
            if len(c["values"]) != table["length"]:
                refuse(f"tables/{name}/{c['name']}", f"{len(c['values'])} values in a table of {table['length']} rows")
            if c["type"] != "object" and not all(v is None or type(v) in number for v in c["values"]):
                refuse(f"tables/{name}/{c['name']}", f"a value that is not a number in a {c['type']} column")


def _check_multitone(section: Any, refuse: Any) -> None:
    """Each family's BLA intervals are one per excited line, at its cycles: the report and the site
    draw them side by side (a list of another length ended `mathbode site` in a zip ValueError)."""
    for family, m in (section or {}).get("families", {}).items():
        excited = [line["cycles"] for line in m["lines"] if line["kind"] == "excited"]
        intervals = [iv["cycles"] for iv in m["bla_intervals"]]
        if intervals != excited:
            refuse(
                f"scores/multitone/families/{family}/bla_intervals",
                f"{len(intervals)} intervals for {len(excited)} excited lines (one per excited line, at its cycles)",
            )


#: The columns each table's renderers read by name (when the table has rows), and which of them
#: hold text; every other column named here holds numbers (null: not measured).
TABLE_COLUMNS = {
    "sweeps": ("family", "question_id", "frequency_cycles", "gain", "phase_err_deg"),
    "summary": (
        "family",
        "frequency_cycles",
        "gain",
        "phase_err_deg",
        "r2",
        "res_acf1",
        "h2_over_h1",
        "compliance",
        "num_sweeps",
    ),
    "chirp": ("family", "frequency_cycles", "gain", "phase_err_deg"),
    "step": ("family",),
}
TEXT_COLUMNS = frozenset({"family", "signal_type"})
_INT64 = (-(2**63), 2**63 - 1)


def _check_tables(document: dict[str, Any], refuse: Any) -> None:
    """Each table's columns typed as their renderers read them: text columns text, number
    columns numbers, int64 columns whole numbers in range and never null (a count)."""
    for name, table in document["tables"].items():
        names = [c["name"] for c in table["columns"]]
        if len(set(names)) < len(names):
            refuse(f"tables/{name}", "two columns of one name")
        if table["length"]:
            missing = [c for c in TABLE_COLUMNS.get(name, ()) if c not in names]
            if missing:
                refuse(f"tables/{name}", f"no column {missing[0]!r}")
        for c in table["columns"]:
            at = f"tables/{name}/{c['name']}"
            if c["type"] == "object":
                if c["name"] in TEXT_COLUMNS or table["length"] == 0:
                    if not all(v is None or isinstance(v, str) for v in c["values"]):
                        refuse(at, "a value that is neither text nor null")
                elif not all(v is None or type(v) in (str, int, float) for v in c["values"]):
                    refuse(at, "a value that is a list or an object")
                if c["name"] in TABLE_COLUMNS.get(name, ()) and c["name"] not in TEXT_COLUMNS and table["length"]:
                    refuse(at, "a column of numbers written as text")
            elif c["name"] in TEXT_COLUMNS:
                refuse(at, f"a column of text written as {c['type']}")
            elif c["type"] == "int64" and not all(type(v) is int and _INT64[0] <= v <= _INT64[1] for v in c["values"]):
                refuse(at, "a value that is not a whole number of 64 bits")


def checked(document: Any, where: str = "results document") -> dict[str, Any]:
    """The document, upgraded to `RESULTS_VERSION` if need be; another format or a newer version is refused."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ResultsVersionError(f'{where}: not a MathBode results document (no "format": "{FORMAT}").')
    version = document.get("version")
    while isinstance(version, int) and version in UPGRADES and version != RESULTS_VERSION:
        document = UPGRADES[version](document)
        version = document.get("version")
    if version != RESULTS_VERSION:
        raise ResultsVersionError(
            f"{where}: results version {version!r}, and this mathbode reads version {RESULTS_VERSION}: "
            "score the submissions again with this version (or render them with the version that wrote them)."
        )
    _check_values(document, where)
    errors = sorted(_validator().iter_errors(_skeleton(document)), key=lambda e: [str(p) for p in e.path])
    if errors:
        first = _innermost(errors[0])
        at = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise ResultsVersionError(
            f"{where}: does not follow schema/results.schema.json at {at}: {_short(first.message)}"
        )
    _check_arrays(document, where)
    return document


def _innermost(error: Any) -> Any:
    """The error that names the field: a value that may be null is a `oneOf`, whose own error says
    only "not valid under any of the given schemas"; the deepest of its branches' errors says which
    field inside it failed, and why (`rendering/figures/dpi: 5000 is greater than the maximum`)."""
    while error.context:
        deepest = max(error.context, key=lambda e: len(e.absolute_path))
        if len(deepest.absolute_path) <= len(error.absolute_path):
            break
        error = deepest
    return error


def _short(message: str, limit: int = 300) -> str:
    """jsonschema's message quotes the value whole (a 70,000-character label): cut to a line."""
    return message if len(message) <= limit else message[:limit] + " ..."


#: A results document is a few MB (a FULL submission's traces are most of it); nested no deeper
#: than 12 levels. Larger or deeper is not a document mathbode wrote, and is not read.
MAX_DOCUMENT_BYTES = 64 << 20
MAX_DEPTH = 32


def _check_values(document: Any, where: str) -> None:
    """What JSON Schema cannot say: no text that is not Unicode (a lone surrogate from a `\\ud800`
    escape, which no file, terminal or page can hold), no integer past the float range (JSON's
    integers have no bound; every renderer reads a number as a float), nesting bounded (`MAX_DEPTH`)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(document, ())]
    while stack:
        node, at = stack.pop()
        if len(at) > MAX_DEPTH:
            raise ResultsVersionError(f"{where}: nested deeper than {MAX_DEPTH} levels at {_path(at[:MAX_DEPTH])}.")
        if isinstance(node, dict):
            for key, value in node.items():
                _check_text(key, at + (key,), where)
                if isinstance(value, (dict, list, str, int)):
                    stack.append((value, at + (key,)))
        elif isinstance(node, list):
            stack.extend(
                (value, at + (i,)) for i, value in enumerate(node) if isinstance(value, (dict, list, str, int))
            )
        elif isinstance(node, str):
            _check_text(node, at, where)
        elif not isinstance(node, bool) and not -_FLOAT_LIMIT < node < _FLOAT_LIMIT:
            raise ResultsVersionError(
                f"{where}: does not follow schema/results.schema.json at {_path(at)}: an integer past the float "
                "range (larger than about 1.8e308), which no renderer can read as a number; mathbode never writes one."
            )


#: The first integer `float()` cannot convert: the largest float (2**1024 - 2**971) and half its
#: last step, which rounds up to 2**1024.
_FLOAT_LIMIT = 2**1024 - 2**970


def _path(at: tuple[Any, ...]) -> str:
    return "/".join(str(p) for p in at) or "(top)"


def _check_text(text: str, at: tuple[Any, ...], where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = _path(at).encode("utf-8", "backslashreplace").decode("utf-8")
        raise ResultsVersionError(
            f"{where}: does not follow schema/results.schema.json at {shown}: text that is not Unicode (a lone "
            "surrogate, written as a \\ud800-style escape); mathbode never writes one."
        ) from None


def from_document(document: dict[str, Any]) -> tuple[Results, Rendering]:
    """A `Results` read back from its document (one `checked`, or just written), and how it is rendered."""
    scores = document["scores"]
    r = Results(
        label=scores["label"],
        model=scores["model"],
        preset=scores["preset"],
        sweeps=_table_of(document["tables"]["sweeps"]),
        summary=_table_of(document["tables"]["summary"]),
        families=_nan_for_null(scores["families"]),
        overall=_nan_for_null(scores["overall"]),
        extra=cast(Sections, {k: _nan_for_null(v, k) for k, v in scores.items() if k not in HEAD_KEYS}),
        provenance=scores["provenance"],
        chirp=_table_of(document["tables"]["chirp"]),
        step=_table_of(document["tables"]["step"]),
        step_curves=_nan_for_null(document["step_curves"]),
        traces=[{**t, "answer": [math.nan if v is None else v for v in t["answer"]]} for t in document["traces"]],
    )
    rendering = document["rendering"]
    return r, Rendering(rendering["position"], rendering["of"], rendering["figures"])


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON has (mathbode writes null for a number that is not finite)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large to be a finite number")
    return value


def load_document(path: Path) -> dict[str, Any]:
    """Read a results.json and check it (upgraded to this version when it is older)."""
    return read_document(path)[0]


def _load_bounded(path: Path, what: str) -> tuple[str, Any]:
    """A saved JSON file's text and value, bounded in size and depth, with finite numbers only."""
    text = read_text_file(path, MAX_DOCUMENT_BYTES, what)
    try:
        return text, json.loads(text, parse_constant=_not_a_number, parse_float=_finite_float)
    except RecursionError:
        raise ResultsVersionError(f"{path}: nested too deeply to be a {what}.") from None
    except ValueError as err:
        raise UsageError(f"{path}: cannot be read as a {what} ({err}).") from None


def read_document(path: Path) -> tuple[dict[str, Any], str]:
    """A results.json checked (upgraded when older), and its text: as saved, or as this version
    writes the upgraded document."""
    text, document = _load_bounded(path, "results document")
    version = document.get("version") if isinstance(document, dict) else None
    document = checked(document, str(path))
    return document, text if version == document["version"] else dumps(document)


@lru_cache(maxsize=1)
def _comparisons_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema("comparisons.schema.json"))


def read_comparisons(path: Path) -> list[dict[str, Any]]:
    """A report folder's comparisons.json (the neighbour tests), checked against its schema
    (`schema/comparisons.schema.json`) under the same bounds as a results document."""
    _, tests = _load_bounded(path, "comparisons file")
    _check_values(tests, str(path))
    errors = sorted(_comparisons_validator().iter_errors(tests), key=lambda e: [str(p) for p in e.path])
    if errors:
        at = _path(tuple(errors[0].path))
        raise ResultsVersionError(
            f"{path}: does not follow schema/comparisons.schema.json at {at}: {_short(errors[0].message)}"
        )
    return tests
