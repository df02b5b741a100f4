"""`mathbode-build`: write a release: the canonical MathBode, MathBode-Extended, or any families."""

from __future__ import annotations

import time
from pathlib import Path

import click

from mathbode.cards.helper import CardHelper
from mathbode.core.errors import MathBodeError
from mathbode.schema.drives import (
    MAX_LEVEL,
    MAX_PERIODS,
    MAX_REALIZATIONS,
    MIN_LEVEL,
    MultitoneDesign,
    design_problem,
    level_decimal,
)
from mathbode.schema.layout import MAX_QUESTIONS, layout
from mathbode.schema.manifest import RELEASE_FORMATS
from mathbode.schema.splits import PROBLEMS_SEED, private_seed_problem

from .common import CONTEXT, exit_on_error, seed_text, version_option

#: A paired release's default name.
GAP_NAME = "MathBode-GAP"
#: The fewest problems --questions takes: a paired interval over problems needs two.
MIN_QUESTIONS = 2


@click.command(context_settings=CONTEXT)
@version_option
@click.option(
    "--families",
    "families_spec",
    default="all",
    show_default=True,
    help="Families to build: all (the canonical release), extended (MathBode-Extended), installed (every "
    "plugin family), NAMESPACE.*, or names; comma-separated, in any mix.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=True, dir_okay=True),
    default="dist",
    show_default=True,
    help="Release folder to write (replaced atomically).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(RELEASE_FORMATS),
    default="parquet",
    show_default=True,
    help="File format of the data files.",
)
@click.option(
    "--replace", is_flag=True, help="Replace a release at --out even if it holds families this build leaves out."
)
@click.option(
    "--name",
    default=None,
    help="The release's name in its manifest and card (default: MathBode for canonical families, "
    "MathBode-Extended for built-in ones, else MathBode-Custom).",
)
@click.option(
    "--seed",
    default=None,
    callback=seed_text,
    help="Draw a fresh split: new constants for every question from the families' draws, the same "
    "bytes for the same seed on any machine (a label such as 2026-12 will do; a private split needs a secret "
    "one of 128 bits or more: secrets.token_hex(16)).",
)
@click.option(
    "--private",
    is_flag=True,
    help="With --seed: record only a commitment to the seed (its sha256), never the seed.",
)
@click.option(
    "--prompts-only",
    is_flag=True,
    help="With --seed: write the rows without ground_truth (a private split's public half).",
)
@click.option(
    "--against",
    multiple=True,
    type=click.Path(file_okay=False),
    help="With --seed: an earlier release whose prompts in common the manifest reports (repeatable).",
)
@click.option(
    "--variants",
    type=click.Choice(["gap"]),
    default=None,
    help="Build a paired release: each family of --families, then its GAP variants (four surface renamings "
    "DL, DLC, DLM, GS, and its built-in kernel rewrites), every variant's rows paired with its original's "
    "(see docs/variants.md). With --seed, of the fresh split: the surface variants of the drawn families, "
    "the kernels that declare draws.",
)
@click.option(
    "--questions",
    type=click.IntRange(MIN_QUESTIONS, MAX_QUESTIONS),
    default=None,
    metavar="N",
    help=f"With --variants gap: N problems a family ({MIN_QUESTIONS} to {MAX_QUESTIONS:,}), drawn from the seed as a "
    f"fresh split draws them (--seed, default {PROBLEMS_SEED!r}), kernel variants included; every surface variant "
    "pairs with its original row for row. Each problem holds the full grid (3,136 rows). Ask it with the preset "
    "PAIRED: one sweep a problem, so paired scores are over problems (see docs/variants.md).",
)
@click.option(
    "--drives",
    type=click.Choice(["standard", "multitone"]),
    default="standard",
    show_default=True,
    help="The drives: standard (sinusoids, chirps, steps: the paper's grid) or multitone (an odd random-phase "
    "multisine, 4 realizations x 2 periods, and a two-tone, 2 periods; see docs/multitone.md). With multitone "
    "the default --families is the canonical five; its one preset is ALL (run, baseline and batch write take "
    "it with --reference DIR).",
)
@click.option(
    "--realizations",
    type=int,
    default=None,
    metavar="R",
    help=f"With --drives multitone: realizations of the multisine (its random phases drawn again), 1 to "
    f"{MAX_REALIZATIONS} (default 4). More realizations narrow the BLA's interval and separate stochastic "
    "distortion from it.",
)
@click.option(
    "--periods",
    type=int,
    default=None,
    metavar="P",
    help=f"With --drives multitone: periods each realization and the two-tone are asked for, 1 to {MAX_PERIODS} "
    "(default 2). Two or more measure the noise (the spread across periods); one measures none.",
)
@click.option(
    "--rms-level",
    "rms_level",
    default=None,
    metavar="L",
    help=f"With --drives multitone: the drives' RMS as a multiple of the RMS of the family's unit sinusoid "
    f"(epsilon / sqrt 2), {MIN_LEVEL} to {MAX_LEVEL} with at most 3 decimals (default 1; each row's "
    "amplitude_scale). The BLA depends on the level: a release a level, scored alike, tells compression (a "
    "gain that moves with the level) from a linear gain error. Every family's drive must stay inside its "
    "p_range at the drives' peak.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@exit_on_error
def main(
    families_spec: str,
    out: str,
    fmt: str,
    replace: bool,
    name: str | None,
    seed: str | None,
    private: bool,
    prompts_only: bool,
    against: tuple[str, ...],
    variants: str | None,
    questions: int | None,
    drives: str,
    realizations: int | None,
    periods: int | None,
    rms_level: str | None,
    quiet: bool,
) -> None:
    """Build a MathBode release: prompts and exact ground truth for every family, signal and step.

    Every family that is not canonical passes its check first (see `mathbode family check`)."""
    start = time.perf_counter()
    # The card helper is forked before the builder (sympy) loads, so the two imports overlap.
    if seed is None and (private or prompts_only or against):
        raise click.UsageError("--private, --prompts-only and --against describe a fresh split: give --seed too.")
    if seed is not None and not seed.strip():
        raise click.BadParameter("give a non-empty seed", param_hint="--seed")
    if seed is not None and private and (problem := private_seed_problem(seed)):
        raise click.BadParameter(problem, param_hint="--seed")
    if questions is not None and variants is None:
        raise click.BadParameter(
            "draws N problems a family of a paired release: give --variants gap too", param_hint="--questions"
        )
    if questions is not None and drives != "standard":
        raise click.BadParameter(
            "draws problems on the standard grid; --drives multitone builds the families' own questions",
            param_hint="--questions",
        )
    design = _design(drives, realizations, periods, rms_level)
    with CardHelper() as helper:
        from mathbode.builder.families import resolve_families
        from mathbode.builder.release import build_release, stderr_progress
        from mathbode.builder.splits import SplitPlan

        try:
            families = resolve_families(families_spec)
        except MathBodeError as err:
            raise click.BadParameter(str(err), param_hint="--families") from None
        if variants is not None:
            from mathbode.builder.families import gap_families

            families, said = gap_families(families)
            for line in said:
                click.echo(f"Note: {line}", err=True)
        progress = None if quiet else stderr_progress
        split = SplitPlan(seed, private, prompts_only, tuple(Path(a) for a in against)) if seed is not None else None
        if variants is not None:
            # A split of the paired release is named as splits are: MathBode-GAP-split-<seed>; one of
            # N problems a family MathBode-GAP-N<N> (drawn from PROBLEMS_SEED unless a seed is given).
            base = GAP_NAME if questions is None else f"{GAP_NAME}-N{questions}"
            name = name or (split.default_name(base) if split is not None else base)
            if questions is not None and split is None:
                split = SplitPlan(PROBLEMS_SEED)
        result = build_release(
            families,
            out,
            fmt,
            progress=progress,
            replace=replace,
            card_renderer=helper.render,
            name=name,
            split=split,
            drives=drives,
            questions=questions,
            design=design,
        )
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if not quiet:
        m = result.manifest
        click.echo(
            f"Wrote {m.num_rows:,} rows of {len(m.families)} families to {result.out}/ "
            f"in {time.perf_counter() - start:.2f} s\nrelease {m.name}, content hash {m.content_hash}"
        )
        if m.split is not None:
            common = (m.overlap or {}).get("MathBode", {})
            click.echo(
                f"split {m.prompts_hash}, canary {m.canary}; prompts in common with the canonical release: "
                f"{common.get('prompts_in_common')} of {common.get('of')}"
            )


def _design(drives: str, realizations: int | None, periods: int | None, level: str | None) -> MultitoneDesign | None:
    """The multi-tone design the options ask for (the layout's for each one not given), or None."""
    given = {"--realizations": realizations, "--periods": periods, "--rms-level": level}
    if all(value is None for value in given.values()):
        return None
    if drives != "multitone":
        option = next(name for name, value in given.items() if value is not None)
        raise click.BadParameter("designs the multi-tone drives: give --drives multitone too", param_hint=option)
    default = layout("multitone").multitone.design
    chosen = (
        default.realizations if realizations is None else realizations,
        default.periods if periods is None else periods,
        default.level if level is None else _level(level),
    )
    if problem := design_problem(*chosen):
        option = {"realizations": "--realizations", "periods": "--periods"}.get(problem.split(" = ")[0], "--rms-level")
        raise click.BadParameter(problem, param_hint=option)
    return MultitoneDesign(chosen[0], chosen[1], float(chosen[2]))


def _level(text: str) -> float | str:
    """The level as a float when its text is a decimal number of at most 3 decimals (else the
    text itself, which `design_problem` refuses with what a level must be)."""
    exact = level_decimal(text.strip())
    return text if exact is None else float(exact)
