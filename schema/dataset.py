"""Validate a MathBode release folder (like dist/) or a single family data file."""

from __future__ import annotations

import json
import math
import os
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.json as pajson
import yaml

from mathbode.core.arrow_columns import all_finite
from mathbode.core.errors import UsageError
from mathbode.core.hashing import combined_hash, content_hash, file_sha256
from mathbode.core.version import __version__

from .arrow_guard import arrow_file_problem
from .compiled import compiled
from .content import TruthRows, check_content, verdict
from .description import FamilyDescriber, canonical_family, check_description, unencodable_path
from .drives import MULTISINE, MULTITONE, MULTITONE_SIGNALS, STANDARD, MultitoneDesign, design_problem
from .keys import RowKey, SweepKey, canonical_family_keys, canonical_sweeps, format_key, row_key, row_keys
from .layout import MAX_QUESTIONS, chosen_design, layout
from .manifest import CARD, MANIFEST, Manifest
from .pairing import check_pairing
from .parquet import read_parquet
from .release_paths import path_problem
from .report import Report
from .split_identity import check_split_identity
from .universe import is_family_name

SCHEMA = "row.schema.json"
MANIFEST_SCHEMA = "manifest.schema.json"
DATA_SUFFIXES = (".parquet", ".jsonl")
#: The card config that serves every family at once.
ALL_CONFIG = "all"


def open_table(path: Path) -> pa.Table:
    """A release data file (parquet, or JSON Lines for --format jsonl) as an Arrow table."""
    if path.suffix != ".jsonl":
        return read_parquet(path)
    problem = arrow_file_problem(path)  # checked first: some lines crash Arrow's reader
    if problem:
        raise ValueError(problem)
    return pajson.read_json(path)


def read_table(path: Path, report: Report, where: str) -> pa.Table | None:
    """A data file as an Arrow table, or None with the reason in the report."""
    try:
        return open_table(path)
    except (pa.ArrowException, OSError, ValueError) as err:
        kind = "JSON Lines" if path.suffix == ".jsonl" else "parquet"
        report.error("unreadable", where, "", f"a readable {kind} file", str(err).splitlines()[0][:200])
        return None


def _check_columns(table: pa.Table, report: Report, where: str, prompts_only: bool = False) -> bool:
    expected = layout().arrow_schema
    if prompts_only:  # a private split's public half: every column but the truth
        expected = expected.remove(expected.get_field_index("ground_truth"))
    found = table.schema
    if found.names != expected.names:
        report.error(
            "columns", where, "", "columns " + ", ".join(expected.names), ", ".join(found.names) or "no columns"
        )
        return False
    ok = True
    for want, have in zip(expected, found, strict=True):
        if not have.type.equals(want.type):
            report.error("column-type", where, want.name, f"Arrow type {want.type}", f"{have.type}")
            ok = False
    return ok


def _with_placeholder_truth(table: pa.Table) -> pa.Table:
    return table.append_column(
        layout().arrow_schema.field("ground_truth"), pa.array([0.0] * table.num_rows, pa.float64())
    )


def drives_of(table: pa.Table) -> str:
    """The grid a data file's rows are on: multi-tone when any row is a multi-tone drive's."""
    import pyarrow.compute as pc

    signals = set(pc.unique(table.column("signal_type")).to_pylist()) if "signal_type" in table.column_names else set()
    return MULTITONE if signals & set(MULTITONE_SIGNALS) else STANDARD


def questions_of(table: pa.Table) -> int | None:
    """How many problems a family of a data file read alone holds: its highest question_id + 1
    when that is more than the layout's three (a release of `--questions N`), else None (the
    layout's: a file missing a question is an incomplete one, not one of fewer problems). A
    release folder says it in its manifest (`questions`)."""
    import pyarrow.compute as pc

    if "question_id" not in table.column_names or not pa.types.is_integer(table.column("question_id").type):
        return None
    highest = pc.max(table.column("question_id")).as_py()
    if not isinstance(highest, int) or highest < len(layout().question_ids) or highest >= MAX_QUESTIONS:
        return None
    return highest + 1


def design_of_table(table: pa.Table) -> MultitoneDesign | None:
    """The multi-tone design a data file read alone is on, when its multisine rows say one other
    than the layout's: as many realizations as phase_deg values, as many periods as
    frequency_cycles values, their one amplitude_scale the level (None: the layout's, or rows that
    say no valid design; the grid check then names what is off). A release folder says it in its
    manifest (`drives`)."""
    import pyarrow.compute as pc

    if drives_of(table) != MULTITONE or not {"phase_deg", "frequency_cycles", "amplitude_scale"} <= set(
        table.column_names
    ):
        return None
    multisine = table.filter(pc.equal(table.column("signal_type"), MULTISINE))
    counts = [len(pc.unique(multisine.column(name)).drop_null()) for name in ("phase_deg", "frequency_cycles")]
    levels = pc.unique(multisine.column("amplitude_scale")).drop_null().to_pylist()
    if len(levels) != 1 or design_problem(counts[0], counts[1], levels[0]) is not None:
        return None
    design = MultitoneDesign(counts[0], counts[1], float(levels[0]))
    return chosen_design(design)


def check_table(
    table: pa.Table,
    report: Report,
    where: str,
    questions: int | None = None,
    design: MultitoneDesign | None = None,
) -> dict[str, int]:
    """Rows, keys and grid of one data file (the standard grid, or the multi-tone one when its
    rows are multi-tone drives; `questions` problems a family, None: the layout's; `design` a
    multi-tone design, None: the layout's); returns rows per family found."""
    drives = drives_of(table)
    design = design if drives == MULTITONE else None
    clean = _clean_table(table, drives, questions, design)
    if clean is not None:
        return clean
    lay = layout(drives, questions, design)
    schema = compiled(SCHEMA)
    keys_seen: dict[RowKey, int] = {}
    steps: dict[SweepKey, set[int]] = defaultdict(set)
    per_family: Counter[str] = Counter()
    for index, row in enumerate(table.to_pylist()):
        here = f"{where} row {index}"
        errors = schema.errors(row)
        for e in errors:
            report.error("schema", here, e.field, e.expected, e.found)
        for column in ("p_value", "ground_truth"):
            value = row.get(column)
            if isinstance(value, float) and not math.isfinite(value):
                report.error("non-finite", here, column, "a finite number", repr(value))
        if errors:
            continue
        key = row_key(row)
        per_family[key.family] += 1
        if key in keys_seen:
            report.error(
                "duplicate-key",
                here,
                "",
                "each row key once",
                f"{format_key(key)} again (first at row {keys_seen[key]})",
            )
            continue
        keys_seen[key] = index
        steps[key.sweep].add(key.time_step)
    full = set(range(lay.time_steps))
    for family in per_family:
        expected = canonical_sweeps(family, drives, questions, design)
        for sweep in expected:
            have = steps.get(sweep, set())
            if have != full:
                missing = sorted(full - have)
                shown = ", ".join(map(str, missing[:8])) + (" ..." if len(missing) > 8 else "")
                report.error(
                    "incomplete-sweep",
                    where,
                    "time_step",
                    f"all {lay.time_steps} steps of sweep {format_key(sweep)}",
                    f"{len(have)} steps; missing {shown}",
                )
        for sweep in sorted({s for s in steps if s.family == family} - set(expected), key=str):
            report.error("extra-sweep", where, "", "only the sweeps of the grid", format_key(sweep))
        if per_family[family] != lay.rows_per_family:
            report.error(
                "row-count", where, "family", f"{lay.rows_per_family:,} rows of {family}", f"{per_family[family]:,}"
            )
    return dict(per_family)


def _clean_table(
    table: pa.Table, drives: str = STANDARD, questions: int | None = None, design: MultitoneDesign | None = None
) -> dict[str, int] | None:
    """Rows per family if the file is clean, checked column by column; None if anything is off.

    Clean: the keys are exactly those of the families present, once each; every row passes the
    schema (asked per column, see `CompiledSchema.suspect_columns`); the numbers are finite. A
    file that is not clean is read again row by row by `check_table`, which names every problem.
    Its columns have the layout's names and Arrow types (`_check_columns` ran first).
    """
    if not table.num_rows:
        return None
    key = list(layout().key)
    families = table.column("family").unique().to_pylist()
    in_order = len(families) == 1 and is_family_name(families[0])
    if in_order:
        # The file holds the family's keys in the release's order: valid keys, nothing to ask.
        canonical = _canonical_key_columns(families[0], drives, questions, design)
        if any(table.column(name).to_pylist() != canonical[name] for name in key if name != "frequency_cycles"):
            return None
        # A chirp row's frequency is not part of its key (None here): the schema checks its range.
        found = table.column("frequency_cycles").to_pylist()
        if any(
            want is not None and have != want for have, want in zip(found, canonical["frequency_cycles"], strict=True)
        ):
            return None
        checked = ["frequency_cycles", *(name for name in table.column_names if name not in key)]
    else:
        checked = table.column_names
    columns = {name: table.column(name).to_pylist() for name in checked}
    columns["signal_type"] = table.column("signal_type").to_pylist()  # the condition
    if compiled(SCHEMA).suspect_columns(columns, present=table.column_names):
        return None
    if not all(all_finite(table.column(name)) for name in ("p_value", "ground_truth")):
        return None
    if not in_order:
        keys = set(row_keys(columns))
        if len(keys) != table.num_rows or keys != set().union(
            *(canonical_family_keys(f, drives, questions, design) for f in families)
        ):
            return None
    return {family: table.num_rows for family in families} if len(families) == 1 else dict(Counter(columns["family"]))


@cache
def _canonical_key_columns(
    family: str, drives: str = STANDARD, questions: int | None = None, design: MultitoneDesign | None = None
) -> dict[str, list[Any]]:
    """The key columns of one family's rows in the release's order, as Python values (Arrow's
    conversions from Python import pandas; comparing lists does not)."""
    lay = layout(drives, questions, design)
    sweeps = canonical_sweeps(family, drives, questions, design)
    steps = lay.time_steps
    columns = {name: [value for sweep in sweeps for value in [getattr(sweep, name)] * steps] for name in lay.key[:-1]}
    columns["time_step"] = list(range(steps)) * len(sweeps)
    return columns


#: libyaml's safe loader when PyYAML was built with it (ten times faster), else the Python one.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _front_matter(text: str) -> dict[str, Any] | None:
    if not text.startswith("---"):
        return None
    parts = text.split("\n---", 1)
    if len(parts) != 2:
        return None
    header = parts[0][3:]
    # Aliases first, from the event stream (linear in the text): a card never uses them, and a
    # few kilobytes of nested aliases expand to billions of nodes once walked.
    if "*" in header and any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(header, Loader=_YAML_LOADER)):
        raise yaml.YAMLError("it uses YAML aliases (*name); a dataset card's metadata needs none")
    loaded = yaml.load(header, Loader=_YAML_LOADER)
    return loaded if isinstance(loaded, dict) else None


def _check_card(folder: Path, report: Report, manifest: Manifest | None, boundary: Path | None = None) -> None:
    """The card's `configs` serve only files inside the release that the manifest lists, of families it lists."""
    card = folder / CARD
    if not card.is_file():
        report.error("card", CARD, "", "a dataset card README.md with YAML configs", "no README.md")
        return
    if problem := path_problem(folder, CARD, boundary):
        report.error("path", CARD, "", "a file inside the release", problem)
        return
    try:
        meta = _front_matter(card.read_text("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as err:
        report.error("card", CARD, "", "YAML metadata between --- lines", f"unparseable: {str(err).splitlines()[0]}")
        return
    if not meta or not isinstance(meta.get("configs"), list):
        report.error("card", CARD, "configs", "a YAML `configs` list", "none")
        return
    families = set(manifest.families) if manifest else set()
    for config in meta["configs"]:
        name = config.get("config_name", "?") if isinstance(config, dict) else "?"
        if not isinstance(name, str):
            report.error("card", CARD, "configs[].config_name", "a name (text)", repr(name)[:80])
            continue
        if manifest and name not in families and name != ALL_CONFIG:
            report.error(
                "card", CARD, f"configs[{name}]", "configs of the families in MANIFEST.json (and 'all')", repr(name)
            )
        specs = config.get("data_files") if isinstance(config, dict) else None
        if isinstance(specs, (str, dict)):
            specs = [specs]
        if not isinstance(specs, list):
            report.error("card", CARD, f"configs[{name}].data_files", "a list of files", repr(specs)[:80])
            continue
        for spec in specs:
            paths = spec.get("path") if isinstance(spec, dict) else spec
            if not isinstance(paths, (str, list)):
                report.error("card", CARD, f"configs[{name}]", "file paths", repr(paths)[:80])
                continue
            for rel in [paths] if isinstance(paths, str) else paths:
                if not isinstance(rel, str):
                    report.error("card", CARD, f"configs[{name}]", "file paths", repr(rel))
                elif problem := path_problem(folder, rel, boundary):
                    report.error(
                        "path", CARD, f"configs[{name}]", "relative paths inside the release", f"{rel!r}: {problem}"
                    )
                elif not (folder / rel).is_file():
                    report.error("card", CARD, f"configs[{name}]", "data files that exist", f"{rel} (missing)")
                elif manifest and rel not in manifest.files:
                    report.error("card", CARD, f"configs[{name}]", "files listed in MANIFEST.json", f"{rel} (unlisted)")
                elif manifest and name in families and rel not in manifest.family_files(name):
                    report.error("card", CARD, f"configs[{name}]", f"the files MANIFEST.json gives {name}", f"{rel}")


#: A manifest lists a release's files and families: a few kilobytes. A bigger file is not one
#: (and is never read into memory whole).
MAX_MANIFEST_BYTES = 16 * 2**20


def checked_manifest(folder: Path, what: str) -> Manifest:
    """The manifest of the release `folder`, checked as `mathbode validate` checks it (a regular
    file inside the folder, bounded in size and depth, its schema, its files' checksums), or a
    `UsageError` that starts with `what` (the option or argument that named the folder)."""
    if not folder.is_dir():
        raise UsageError(f"{what}: not a folder. Give a release folder (one that holds {MANIFEST}), not a data file.")
    report = Report(str(folder), "dataset")
    manifest = _check_manifest(folder, report)
    if manifest is None or not report.valid:
        first = report.errors[0] if report.errors else None
        place = " ".join(part for part in (first.where, first.field) if part) if first else ""
        said = f"{place}: expected {first.expected}, found {first.found}" if first else "see `mathbode validate`"
        raise UsageError(
            f"{what}: not a release that can be read ({said}). Give a folder mathbode-build wrote "
            "(`mathbode validate` says what is wrong with it)."
        )
    return manifest


def _not_json(constant: str) -> Any:
    # Python's json reads NaN and Infinity, which JSON has not: JSON.parse, jq and every strict
    # reader refuse such a file, so the validator does too.
    raise ValueError(f"{constant} is not a JSON value")


def _check_manifest(
    folder: Path, report: Report, boundary: Path | None = None, describe_family: FamilyDescriber | None = None
) -> Manifest | None:
    """The manifest if it is well-formed (checked against manifest.schema.json), with its files
    verified. With `describe_family` (a release being validated, not one only read), its
    description is rebuilt and compared whole (`schema.description`)."""
    path = folder / MANIFEST
    if not path.is_file():  # a pipe or a device (/dev/zero) is not a manifest, and is never read
        found = "no MANIFEST.json" if not os.path.lexists(path) else "a pipe, device or folder, not a regular file"
        report.error("manifest", MANIFEST, "", "a MANIFEST.json written by mathbode-build", found)
        return None
    if problem := path_problem(folder, MANIFEST, boundary):  # the manifest itself is confined too
        report.error("path", MANIFEST, "", "a file inside the release", problem)
        return None
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        found = f"{path.stat().st_size:,} bytes"
        report.error("manifest", MANIFEST, "", f"at most {MAX_MANIFEST_BYTES:,} bytes", found)
        return None
    try:
        manifest = json.loads(path.read_text("utf-8"), parse_constant=_not_json)
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        found = "nested too deep" if isinstance(err, RecursionError) else str(err)
        report.error("manifest", MANIFEST, "", "a JSON document (strict: no NaN or Infinity)", f"unparseable ({found})")
        return None
    if (where := unencodable_path(manifest)) is not None:
        # JSON's \ud800 escapes parse, but no UTF-8 reader (nor a seed's hash) can take the text.
        report.error(
            "manifest", MANIFEST, where, "text that is valid Unicode", "a lone surrogate (an unpaired \\uD800-\\uDFFF)"
        )
        return None
    problems = compiled(MANIFEST_SCHEMA).errors(manifest)
    for e in problems:
        report.error("manifest", MANIFEST, e.field, e.expected, e.found)
    if problems:
        return None
    typed = Manifest.from_json(manifest)
    unsafe = False
    for rel in [*typed.files, *(r for f in typed.families.values() for r in f.files)]:
        if problem := path_problem(folder, rel, boundary):
            report.error("path", MANIFEST, rel, "relative paths inside the release", problem)
            unsafe = True
    for rel, info in typed.files.items():
        # A release holds its data files, its card and its manifest: nothing else is ever read
        # or published through it (`notes.txt`, `.git/config`).
        is_data_file = rel.startswith("data/") and rel.count("/") == 1 and rel.endswith(DATA_SUFFIXES)
        if not (rel == CARD and not info.is_data) and not (is_data_file and info.is_data):
            report.error("path", MANIFEST, f"files.{rel}", "data/<name>.parquet or .jsonl files and README.md", rel)
            unsafe = True
    if unsafe:
        return None  # never read a file a manifest points outside the release, or a file not of one
    _check_manifest_facts(typed, report)
    if describe_family is not None:
        check_description(manifest, report, describe_family)
    for rel, info in typed.files.items():
        target = folder / rel
        if not target.is_file():
            report.error("manifest", MANIFEST, rel, "the file to exist", "missing")
            continue
        digest = file_sha256(target)
        if digest != info.sha256:
            report.error(
                "checksum", rel, "sha256", f"{info.sha256}, as {MANIFEST} records it", f"{digest}, this file's"
            )
        if target.stat().st_size != info.num_bytes:
            report.error("checksum", rel, "num_bytes", str(info.num_bytes), str(target.stat().st_size))
    return typed


def _check_manifest_facts(manifest: Manifest, report: Report) -> None:
    """What the manifest says about itself, consistent: families, files, counts, version. (Which
    files a release of its format holds is part of its description: `schema.description`.)"""
    owner: dict[str, str] = {}
    for family, entry in manifest.families.items():
        for rel in entry.files:
            if rel not in manifest.files or not manifest.files[rel].is_data:
                report.error("manifest", MANIFEST, f"families.{family}.files", "data files listed under files", rel)
            elif rel in owner:
                report.error("manifest", MANIFEST, f"families.{family}.files", "each file in one family", rel)
            owner[rel] = family
        listed = sum(manifest.files[r].num_rows or 0 for r in entry.files if r in manifest.files)
        if listed != entry.num_rows:
            report.error(
                "manifest",
                MANIFEST,
                f"families.{family}.num_rows",
                f"{listed:,} (its files' rows)",
                f"{entry.num_rows:,}",
            )
    for rel in manifest.data_files:
        if rel not in owner:
            report.error("manifest", MANIFEST, f"files.{rel}", "a data file of a family", "no family lists it")
    total = sum(f.num_rows for f in manifest.families.values())
    if manifest.num_rows != total:
        report.error("manifest", MANIFEST, "num_rows", f"{total:,} (the families' rows)", f"{manifest.num_rows:,}")
    if manifest.builder_version != __version__:
        report.warning(
            "builder-version",
            MANIFEST,
            "builder_version",
            f"{__version__} (the only version whose canonical content this validator knows)",
            manifest.builder_version,
        )


def _check_one_file(table: pa.Table, report: Report, name: str, truth: TruthRows | None) -> None:
    """A lone data file: its rows, and whether they are a family's canonical rows."""
    questions, design = questions_of(table), design_of_table(table)
    found = check_table(table, report, name, questions, design)
    report.summary["rows"] = found
    if questions is not None and report.valid:
        # A family of N drawn problems is a fresh split's: only its release folder says the seed.
        report.warning(
            "content-unchecked",
            name,
            "question_id",
            "rows drawn again from the release's seed",
            f"a family of {questions} problems (mathbode-build --questions): validate its release folder to "
            "check every row",
        )
        report.summary["canonical"] = False
        report.summary["text"] = [verdict(False, {f: content_hash(table) for f in found}, True)]
        return
    drives = drives_of(table)
    if drives != STANDARD:  # compared with the builder's rows on the grid the file's rows are on
        for_drives = getattr(truth, "for_drives", None)
        truth = for_drives(drives, design) if callable(for_drives) else None
    if len(found) == 1:
        family = next(iter(found))
        hashes = {family: content_hash(table)}
        canonical = check_content({family: (name, table)}, hashes, report, truth, drives=drives, design=design)
        report.summary["canonical"] = canonical and report.valid
        report.summary["text"] = [verdict(canonical, hashes, report.valid)]


def validate_dataset(path: str | Path, truth: TruthRows | None = None, boundary: Path | None = None) -> Report:
    """Check a release folder or a single data file against the layout contract and the canonical content
    (see `check_release`)."""
    return check_release(path, truth, boundary)[0]


def check_release(
    path: str | Path, truth: TruthRows | None = None, boundary: Path | None = None
) -> tuple[Report, dict[str, pa.Table]]:
    """Check a release folder or a single data file against the layout contract and the canonical
    content; the report, and each data file read (path in the release -> its table), so a caller
    that scores against the release need not read them again.

    `truth(family)` gives the canonical rows of a family (the builder's, recomputed from the
    family's definition); with it, every row of a family whose content is not canonical is
    compared and each wrong row is named. Without it, such a family is an error naming only
    its hash. Symlinks in the release may lead only inside `boundary` (default: the folder).
    """
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder. Give a release folder (like dist/) or a data file.")
    report = Report(str(path), "dataset")
    lay = layout()
    if path.is_file():
        table = read_table(path, report, path.name)
        if table is not None and _check_columns(table, report, path.name):
            _check_one_file(table, report, path.name, truth)
        return report, {}

    manifest = _check_manifest(path, report, boundary, getattr(truth, "describe_family", None) or canonical_family)
    _check_card(path, report, manifest, boundary)
    split = manifest.split if manifest else None
    prompts_only = bool(manifest and manifest.prompts_only)
    if split is not None:
        # A fresh split's rows are its seed's: only a truth that can draw them checks them (the
        # builder's, for a published seed); any other truth leaves their content unchecked.
        for_split = getattr(truth, "for_split", None)
        questions = manifest.questions if manifest else None
        # A release of --questions N draws N problems a family: its truth draws them again.
        truth = (for_split(split, questions) if questions else for_split(split)) if callable(for_split) else None
    if manifest is not None and manifest.drive_set != STANDARD:
        # A multi-tone release's rows are the builder's on the multi-tone grid.
        for_drives = getattr(truth, "for_drives", None)
        truth = for_drives(manifest.drive_set, manifest.design) if callable(for_drives) else None
    listed = list(manifest.data_files) if manifest else []
    data_files = list(listed)
    if not listed:  # no manifest: the data files found, each confined to the release like a listed one
        for rel in sorted(str(p.relative_to(path)) for p in (path / "data").glob("*") if p.suffix in DATA_SUFFIXES):
            if problem := path_problem(path, rel, boundary):
                report.error("path", rel, "", "a file inside the release", problem)
            else:
                data_files.append(rel)
    if not data_files:
        report.error("no-data", str(path), "", "data/<family>.parquet files", "none")
        return report, {}
    unlisted = sorted(
        str(p.relative_to(path))
        for p in (path / "data").glob("*")
        if p.is_file() and str(p.relative_to(path)) not in listed
    )
    if manifest:
        for rel in unlisted:
            report.warning("unlisted", rel, "", "only files MANIFEST.json lists (others are not published)", "unlisted")
    rows: Counter[str] = Counter()
    hashes: dict[str, str] = {}
    tables: dict[str, tuple[str, pa.Table]] = {}
    read: dict[str, pa.Table] = {}
    for rel in data_files:
        table = read_table(path / rel, report, rel) if (path / rel).is_file() else None
        if table is None or not _check_columns(table, report, rel, prompts_only):
            continue
        read[rel] = table
        if manifest and (grid := drives_of(table)) != manifest.drive_set:
            # The request the manifest records is what the rows are checked against: rows of another
            # grid answer another request, whatever their own keys say.
            report.error(
                "drives",
                rel,
                "signal_type",
                f"rows on the {manifest.drive_set} grid, as {MANIFEST} describes the release (drives)",
                f"rows on the {grid} grid",
            )
            continue
        # Keys, grid and counts are checked alike; a prompts-only file gets a placeholder truth
        # for that (its content check below compares the prompts alone).
        found = check_table(
            _with_placeholder_truth(table) if prompts_only else table,
            report,
            rel,
            manifest.questions if manifest else None,
            manifest.design if manifest else None,
        )
        rows.update(found)
        if manifest and rel in manifest.files:
            said = manifest.files[rel]
            if said.num_rows != table.num_rows:
                report.error("manifest", MANIFEST, f"files.{rel}.num_rows", f"{table.num_rows:,}", f"{said.num_rows}")
            if manifest.format == "parquet" and said.arrow_bytes != table.nbytes:
                field = f"files.{rel}.arrow_bytes"
                report.error("manifest", MANIFEST, field, f"{table.nbytes:,}", f"{said.arrow_bytes}")
            owner = next((f for f, e in manifest.families.items() if rel in e.files), None)
            if owner and set(found) - {owner}:
                others = ", ".join(sorted(set(found) - {owner}))
                report.error("manifest", rel, "family", f"rows of {owner} only", others)
        if len(found) == 1:
            family = next(iter(found))
            hashes[family] = content_hash(table)
            tables[family] = (rel, table)
    if manifest:
        for family, entry in manifest.families.items():
            if family in hashes and entry.content_hash != hashes[family]:
                # Which hash is which, said outright: the manifest's record, then the rows' own.
                report.error(
                    "content-hash",
                    tables[family][0],
                    f"families.{family}.content_hash",
                    f"{entry.content_hash}, as {MANIFEST} records it",
                    f"{hashes[family]}, the hash of the rows this file holds",
                )
        ordered = [hashes[f] for f in manifest.families if f in hashes]
        if len(ordered) == len(manifest.families) and combined_hash(ordered) != manifest.content_hash:
            report.error(
                "content-hash",
                "the data files",
                "content_hash",
                f"{manifest.content_hash}, as {MANIFEST} records it",
                f"{combined_hash(ordered)}, the hash of the rows the data files hold",
            )
    origins = {name: entry.origin for name, entry in manifest.families.items()} if manifest else {}
    drives = manifest.drive_set if manifest else STANDARD
    questions = manifest.questions if manifest else None
    design = manifest.design if manifest else None
    canonical = check_content(tables, hashes, report, truth, origins, split, prompts_only, drives, questions, design)
    if manifest:
        check_split_identity(manifest, tables, report, prompts_only)
        check_pairing(manifest, tables, report, prompts_only)
    missing = [f for f in lay.families if f not in rows]
    if missing and all(f in lay.families for f in rows):  # a release of other families is not a partial one
        report.warning("partial", str(path), "family", "all families of the layout", "missing " + ", ".join(missing))
    report.summary["rows"] = dict(rows)
    report.summary["canonical"] = canonical and report.valid
    if prompts_only:
        report.summary["prompts_only"] = True
    if split is not None and "seed_sha256" in split:
        report.summary["private_split"] = True
    report.summary["text"] = [
        f"rows: {sum(rows.values()):,} in {len(rows)} families",
        verdict(
            canonical,
            hashes,
            report.valid,
            name=manifest.name if manifest else None,
            content=manifest.content_hash if manifest else None,
            split=(manifest.prompts_hash or "?") if manifest and split is not None else None,
        ),
    ]
    if prompts_only:
        report.summary["text"].append(
            "prompts only: no ground_truth column, so models run on it and nothing is scored against it "
            "(its keeper scores against the full split)"
        )
    return report, read
