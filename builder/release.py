"""Write a release folder (data files, MANIFEST.json, README.md card) atomically.

Everything is written into a temporary sibling folder first and moved into place at the end,
so an interrupted build leaves either the old release or the new one, never a mix. A one-family
release for a per-family Hub repository is made here too, from an existing release.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
import sys
import time
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from mathbode.cards import FamilyFacts, render_card, render_family_card
from mathbode.cards.render import card_library
from mathbode.core.arrow_columns import table_from_lists
from mathbode.core.atomic import atomic_folder, check_replaceable, read_json_file
from mathbode.core.errors import UnknownNameError, UsageError
from mathbode.core.forking import can_fork, ignore_sigint, sigint_held, usable_cores
from mathbode.core.hashing import content_hash
from mathbode.core.version import __version__
from mathbode.schema.description import ReleaseRequest, data_path, describe
from mathbode.schema.drives import MULTITONE, STANDARD, MultitoneDesign
from mathbode.schema.layout import chosen_design, layout
from mathbode.schema.manifest import (
    MANIFEST,
    RELEASE_FORMATS,
    RELEASE_NAME,
    FamilyEntry,
    FileEntry,
    Manifest,
    read_manifest,
    write_release_metadata,
)
from mathbode.schema.parquet import read_parquet
from mathbode.schema.splits import prompts_hash
from mathbode.schema.truth_facts import truth_facts

from .families import FAMILIES, Family, extended_families, get_family
from .families.check import check_family, multitone_drive, precheck
from .families.variants import SURFACE_KINDS, surface_problems
from .rows import family_columns
from .splits import SplitPlan, drawn_family, overlaps

#: The name a release of only extended (or extended and canonical) families gets.
EXTENDED_NAME = "MathBode-Extended"
#: The name of any other release, unless one is given.
CUSTOM_NAME = "MathBode-Custom"


class FamilyCheckError(UsageError):
    """A family this build would write fails its check (`mathbode family check NAME` says the same)."""


def release_name(families: list[Family]) -> str:
    """MathBode for the canonical families, MathBode-Extended for built-in ones, else MathBode-Custom."""
    names = [f.name for f in families]
    if all(n in FAMILIES for n in names):
        return RELEASE_NAME
    if all(n in FAMILIES or n in extended_families() for n in names):
        return EXTENDED_NAME
    return CUSTOM_NAME


def design_suffix(design: MultitoneDesign | None) -> str:
    """What a multi-tone release's default name adds for a design other than the layout's: its
    realizations x periods and its level where they differ (`-8x4`, `-rms0.5`), so releases of a
    level sweep do not share a name."""
    if design is None:
        return ""
    default = layout(MULTITONE).multitone.design
    out = ""
    if (design.realizations, design.periods) != (default.realizations, default.periods):
        out += f"-{design.realizations}x{design.periods}"
    if design.level != default.level:
        out += f"-rms{design.level:g}"
    return out


FORMATS = RELEASE_FORMATS
#: Renders a release's card from its manifest and its families' facts.
CardRenderer = Callable[[Manifest, list[FamilyFacts]], str]


def family_description(family: Family) -> dict[str, Any]:
    """What a release's manifest says of `family` beside its rows (`schema.description`): its
    version, the package that defines it, and a GAP variant's original, kind and surface names."""
    out: dict[str, Any] = {"version": family.version}
    if family.origin is not None:
        out["origin"] = family.origin
    if family.variant_of is not None:
        out["variant_of"] = family.variant_of
        out["variant"] = family.variant
    if family.renamed:
        out["surface"] = {"seed": family.surface_seed, "names": dict(family.renamed)}
    return out


def described_family(name: str) -> dict[str, Any] | None:
    """The description of the installed family `name` (`schema.description.FamilyDescriber`);
    None for a family this installation does not know. A fresh split draws new constants, never
    new names, so the registry's family describes its drawn rows too."""
    try:
        return family_description(get_family(name))
    except UnknownNameError:
        return None


@dataclass(frozen=True)
class BuildResult:
    out: Path
    manifest: Manifest
    #: Seconds spent generating each family's rows (not writing them).
    generation_seconds: dict[str, float]
    #: What the families' checks said without refusing them ("family: [code] message").
    warnings: tuple[str, ...] = ()


def _write_table(table: pa.Table, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        # Fixed options so the bytes only depend on the rows and the pyarrow version.
        pq.write_table(table, path, compression="zstd", row_group_size=table.num_rows or None)
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for row in table.to_pylist():
                f.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")


def family_facts(family: Family) -> FamilyFacts:
    """What the dataset card says about `family`, from its definition."""
    return FamilyFacts(
        name=family.name,
        version=family.version,
        title=family.title,
        summary=family.summary,
        parameter=family.parameter_meaning,
        p_range=family.p_range,
        p0=family.p0,
        epsilon=str(family.eps),
        decimals=family.decimals,
        solution=family.formula,
        variants=tuple(", ".join(f"{k} = {v}" for k, v in var.constants.items()) for var in family.variants),
        example=f"{family.render(0, f'{family.p_center:.{family.decimals}f}')}\n\n{layout().answer_instruction()}",
        kind=family.kind,
        origin=family.origin or "mathbode",
    )


def build_release(
    families: list[Family],
    out: Path | str = "dist",
    fmt: str = "parquet",
    progress: Callable[[str], None] | None = None,
    replace: bool = False,
    card_renderer: CardRenderer | None = None,
    name: str | None = None,
    split: SplitPlan | None = None,
    drives: str = "standard",
    questions: int | None = None,
    design: MultitoneDesign | None = None,
) -> BuildResult:
    """Generate `families` and write the release to `out`, replacing an older release there.

    A release at `out` that holds families this build leaves out is not replaced unless `replace`:
    building one family into the folder of the full release would silently delete the others.
    `card_renderer` renders the card (default: `render_card` here, its library imported while the
    families are generated); the command passes one that runs in a helper process. `name` is the
    release's name (default: `release_name`). Every family that is not canonical passes its check
    (`families.check`) or the build stops, naming what failed; the canonical ones are proven by
    their content hashes instead. With `split`, a fresh (or private) split: every family's
    questions drawn from the seed (`splits.seeded`; a family without draws is left out, with a
    warning), and its identity recorded (seed or commitment, canary, overlap with the canonical
    release and with the splits named). With `questions` (and `split`), each family holds that
    many problems drawn from the seed, the manifest saying so (`questions`). With `design`, the
    multi-tone drives' realizations, periods and level (None: the layout's), every family's drive
    checked at that level (`multitone_drive`), the manifest's `drives` saying so.
    """
    if fmt not in FORMATS:
        raise UsageError(f"Unknown format {fmt!r}. Available: {', '.join(FORMATS)}.")
    if not families:
        raise UsageError("No family to build: name at least one (see mathbode families).")
    layout(drives)  # an unknown drives name is an error naming the known ones
    if design is not None:
        if drives != MULTITONE:
            raise UsageError(
                "--realizations, --periods and --rms-level design the multi-tone drives: give --drives multitone."
            )
        design = chosen_design(design)  # the layout's: the release is byte for byte the one built without options
    if drives != STANDARD and split is not None:
        raise UsageError("--drives multitone builds the families' own questions: it takes no --seed.")
    if questions is not None:
        if split is None:
            raise UsageError("--questions N draws N problems a family from a seed: give the build a split.")
        layout(STANDARD, questions)  # out of range: an error saying the range
    warnings: list[str] = []
    checked = {f.name for f in families if f is not FAMILIES.get(f.name)}
    for family in families:
        # A family we did not write is read before any row is made (or any constant drawn): a
        # definition too big to certify, or a bad draw, is a message naming it, not a hang.
        if family.name in checked and (problems := precheck(family)):
            raise UsageError(
                f"family {family.name!r} fails its check: {'; '.join(map(str, problems))}. "
                f"`mathbode family check {family.name}` checks it in full."
            )
    if drives == MULTITONE:
        # The drive rules at the chosen level, for every family (a canonical one too: its pinned
        # rows are on the standard grid). The layout's level passes wherever the standard grid does.
        plan = layout(drives, None, design).multitone
        for family in families:
            if problems := multitone_drive(family, plan):
                raise UsageError(f"family {family.name!r} cannot be driven so: {'; '.join(map(str, problems))}.")
    if split is not None:
        # The release reader loads for a split's build only (the canonical build never reads one back).
        from mathbode.schema.dataset import checked_manifest

        for other in split.against:  # refused before anything is generated, not after
            checked_manifest(Path(other), f"--against {other}")
        drawable = [f for f in families if f.draws and f.variant not in SURFACE_KINDS]
        if not drawable:
            raise UsageError("No family of --families declares draws, so none can make a fresh split.")
        families, left_out = _seeded_families(families, split.seed, questions)
        warnings += left_out
        checked = set()  # each drawn family passed its check as it was drawn
        name = name or split.default_name(release_name(drawable))
    name = name or release_name(families)
    if drives != STANDARD and name in (RELEASE_NAME, EXTENDED_NAME, CUSTOM_NAME):
        name = f"{name}-Multitone{design_suffix(design)}"
    if not re.match(layout().release_name_pattern, name):
        raise UsageError(
            f"--name {name!r} is not a release name: letters, digits, '.', '_' and '-', starting with a letter or "
            "digit, at most 64 characters"
        )
    out = Path(out)
    check_replaceable(out, "release")
    if not replace:
        _refuse_dropping_families(out, [f.name for f in families])
    say = progress or (lambda _msg: None)
    with atomic_folder(out, "release") as tmp, ExitStack() as stack:
        (tmp / "data").mkdir()
        timings: dict[str, float] = {}
        entries: dict[str, FamilyEntry] = {}
        files: dict[str, FileEntry] = {}
        prompts_only = split is not None and split.prompts_only
        generation = stack.enter_context(
            closing(_Generation(families, tmp, fmt, prompts_only, checked, drives, questions, design))
        )
        if card_renderer is None:
            card_library()  # the card library's import, on this core while the families are generated
        facts: list[FamilyFacts] = []
        for family, (entry, file, seconds, said, family_card) in zip(families, generation, strict=True):
            timings[family.name] = seconds
            facts.append(family_card)
            warnings += [f"{family.name}: {w}" for w in said]
            rel = entry.files[0]
            entries[family.name], files[rel] = entry, file
            say(f"{family.name}: {entry.num_rows:,} rows in {seconds:.2f} s -> {rel}")
        _check_pairs(families, tmp, fmt)
        request = ReleaseRequest(
            families=tuple(f.name for f in families),
            format=fmt,
            name=name,
            builder_version=__version__,
            parquet_writer=f"pyarrow {pa.__version__}",
            drives=drives,
            split=split.record() if split is not None else None,
            prompts_only=prompts_only,
            questions=questions,
            design=design,
        )
        # The description validate rebuilds from the same request: one function writes both.
        built = {f.name: f for f in families}
        described = describe(request, lambda name: family_description(built[name]))
        manifest = Manifest(
            name=described["name"],
            builder_version=described["builder_version"],
            format=described["format"],
            parquet_writer=described["parquet_writer"],
            families=entries,
            files=files,
            split=described.get("split"),
            canary=described["canary"],
            overlap=overlaps(tmp, files, split.against) if split is not None else None,
            prompts_only=described.get("prompts_only", False),
            drives=described.get("drives"),
            questions=described.get("questions"),
            multitone_design=described.get("multitone_design"),
        )
        card = (card_renderer or render_card)(manifest, facts)
        manifest = write_release_metadata(tmp, manifest, card)
    return BuildResult(out=out, manifest=manifest, generation_seconds=timings, warnings=tuple(warnings))


def _seeded_families(families: list[Family], seed: str, questions: int | None = None) -> tuple[list[Family], list[str]]:
    """A fresh split's families (`splits.drawn_family`) and what was left out, said: a family
    without draws, and a surface variant whose original is not drawn (a kernel variant is a family
    of its own answers, drawn like any other when it declares draws)."""
    drawn: dict[str, Family] = {}
    out: list[Family] = []
    said: list[str] = []
    for family in families:
        surface = family.variant in SURFACE_KINDS
        if surface and family.variant_of not in drawn:
            said.append(f"{family.name}: its original {family.variant_of} is not in the fresh split, so it is left out")
        elif surface or family.draws:
            drawn[family.name] = drawn_family(family, seed, drawn, questions)
            out.append(drawn[family.name])
        else:
            said.append(f"{family.name}: declares no draws, so it is left out of the fresh split")
    return out, said


def _check_pairs(families: list[Family], folder: Path, fmt: str) -> None:
    """Every surface variant built beside its original keeps the original's rows but for the names
    (`variants.surface_problems`, row by row on the files just written); a kernel variant needs its
    original in the release to be paired with."""
    built = {f.name for f in families}
    for family in families:
        if family.variant_of is None:
            continue
        if family.variant_of not in built:
            raise FamilyCheckError(
                f"{family.name} is a variant of {family.variant_of}, which this build leaves out: add it to --families"
            )
        if family.variant in SURFACE_KINDS:
            original = _read_table(folder / data_path(family.variant_of, fmt), fmt)
            problems = surface_problems(original, family, _read_table(folder / data_path(family.name, fmt), fmt))
            if problems:
                listed = "\n".join(f"  {p}" for p in problems)
                raise FamilyCheckError(f"{family.name} is not {family.variant_of} renamed:\n{listed}")


def _read_table(path: Path, fmt: str) -> pa.Table:
    if fmt == "parquet":
        return read_parquet(path)
    import pyarrow.json as pj

    return pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=layout().arrow_schema))


#: The families a forked worker generates (set before the fork, read by index in the worker).
_JOBS: list[Family] = []


Written = tuple[FamilyEntry, FileEntry, float, tuple[str, ...], FamilyFacts]


def write_family(
    family: Family,
    folder: Path,
    fmt: str,
    prompts_only: bool = False,
    check: bool = False,
    drives: str = STANDARD,
    questions: int | None = None,
    design: MultitoneDesign | None = None,
) -> Written:
    """Generate one family and write its data file into `folder`: its manifest entries, the
    seconds its rows took to generate, what its check (with `check`) warned of, and its facts
    for the card. `drives`:
    the grid (standard, or multi-tone: its check is the family's, on its standard rows);
    `questions`: the problems it holds (None: the layout's three); `design`: the multi-tone design
    (None: the layout's).

    The facts are taken here, where the rows were just made: the family's solutions (sympy's
    solve) are cached on it by then. A forked worker's cache never reaches the parent, which
    would solve every family's equations again for the card's formula and answer kind."""
    start = time.perf_counter()
    columns = family_columns(family, layout(drives, questions, design))
    seconds = time.perf_counter() - start
    table = table_from_lists(columns, layout().arrow_schema)
    said: tuple[str, ...] = ()
    if check:
        said = _checked(family, table if drives == STANDARD else None, questions)
    prompts = prompts_hash(table)
    facts = truth_facts(table)
    if prompts_only:
        table = table.drop_columns(["ground_truth"])
    rel = data_path(family.name, fmt)
    _write_table(table, folder / rel, fmt)
    described = family_description(family)
    entry = FamilyEntry(
        described["version"],
        table.num_rows,
        content_hash(table),
        (rel,),
        described.get("origin"),
        prompts,
        facts,
        variant_of=described.get("variant_of"),
        variant=described.get("variant"),
        surface=described.get("surface"),
    )
    # The size a reader finds (the validator's measure): a column built without nulls may carry a
    # validity bitmap that a file read back does not.
    # (Read as one file: `pq.read_table` would load pyarrow.dataset, 30 ms, in each worker.)
    arrow_bytes = read_parquet(folder / rel).nbytes if fmt == "parquet" else table.nbytes
    file = FileEntry.of(folder / rel, num_rows=table.num_rows, arrow_bytes=arrow_bytes)
    return entry, file, seconds, said, family_facts(family)


def _checked(family: Family, table: pa.Table | None, questions: int | None = None) -> tuple[str, ...]:
    """The family's check on the rows just made: a failure stops the build; a version not yet
    pinned is a warning here (a family in development builds) and a failure of `family check`."""
    # A paired build checks its pairs on the written rows.
    report = check_family(family, table, surfaces=False, questions=questions)
    refused = [f for f in report.problems if f.code != "unpinned"]
    if refused:
        listed = "\n".join(f"  {f}" for f in refused)
        raise FamilyCheckError(f"family {family.name!r} fails its check, so it is not built:\n{listed}")
    return tuple(str(f) for f in [*report.warnings, *(f for f in report.problems if f.code == "unpinned")])


class _Interrupted:
    """What a worker sends back for a KeyboardInterrupt: a pool loses a task whose worker raises
    one (it is not an Exception), and the build would wait for it forever. Workers ignore Ctrl-C
    (the build handles it), so this is an interrupt raised in the work itself."""


def _write_job(
    job: tuple[int, Path, str, bool, bool, str, int | None, MultitoneDesign | None],
) -> Written | _Interrupted:
    index, folder, fmt, prompts_only, check, drives, questions, design = job
    try:
        return write_family(_JOBS[index], folder, fmt, prompts_only, check, drives, questions, design)
    except KeyboardInterrupt:
        return _Interrupted()


class _Generation:
    """`write_family` of each family, results in order, on every available core.

    The exact arithmetic is pure Python, one core per family. Workers are forked (they share the
    loaded sympy and families, nothing is re-imported) where `can_fork` says it is safe.
    Elsewhere, or with one family or one core, one after the other.
    The work starts when this is made; iterate for the results, `close` stops the workers.
    """

    def __init__(
        self,
        families: list[Family],
        folder: Path,
        fmt: str,
        prompts_only: bool = False,
        checked: frozenset[str] | set[str] = frozenset(),
        drives: str = STANDARD,
        questions: int | None = None,
        design: MultitoneDesign | None = None,
    ) -> None:
        self.jobs = [
            (family, folder, fmt, prompts_only, family.name in checked, drives, questions, design)
            for family in families
        ]
        workers = min(len(families), usable_cores())
        self.pool = None
        if workers >= 2 and can_fork():
            _JOBS[:] = families
            with sigint_held():  # the workers ignore Ctrl-C from their first instruction; the build handles it
                self.pool = multiprocessing.get_context("fork").Pool(workers, initializer=ignore_sigint)
            self.results = self.pool.imap(
                _write_job,
                [
                    (i, folder, fmt, prompts_only, f.name in checked, drives, questions, design)
                    for i, f in enumerate(families)
                ],
            )

    def __iter__(self) -> Iterator[Written]:
        if self.pool is None:
            for job in self.jobs:
                yield write_family(*job)
            return
        for result in self.results:
            if isinstance(result, _Interrupted):
                raise KeyboardInterrupt
            yield result

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
            _JOBS.clear()


def _refuse_dropping_families(out: Path, building: list[str]) -> None:
    try:
        # Read only if a regular file of bounded size and depth: a FIFO or a crafted document
        # nested thousands deep that a record lists must not hang or crash the build.
        existing = list(read_json_file(out / MANIFEST)["families"])
    except (OSError, ValueError, KeyError, TypeError):
        return  # no readable release there: nothing of the user's to protect beyond check_replaceable
    dropped = [name for name in existing if name not in building]
    if dropped:
        raise UsageError(
            f"--out {out} holds a release of {', '.join(existing)}; building only {', '.join(building)} would "
            f"delete {', '.join(dropped)}. Add them to --families, choose another --out, or pass --replace "
            "to replace the release."
        )


def family_release(dist: Path, family: str, repo_id: str, main_repo_id: str, out: Path) -> Path:
    """A one-family release folder (data file, its own card, its own manifest) for a per-family repo."""
    manifest = read_manifest(dist).only(family)
    if out.exists():
        shutil.rmtree(out)
    (out / "data").mkdir(parents=True)
    for rel in manifest.files:
        shutil.copyfile(dist / rel, out / rel)
    card = render_family_card(manifest, family_facts(get_family(family)), repo_id, main_repo_id)
    write_release_metadata(out, manifest, card)
    return out


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
