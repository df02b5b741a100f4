"""`mathbode family check`: run every check a family must pass, naming each failure."""

from __future__ import annotations

import sys

import click

from mathbode.core.errors import MathBodeError, UsageError
from mathbode.core.names import printable

from .common import CONTEXT, exit_on_error, version_option


@click.group(context_settings=CONTEXT)
@version_option
def main() -> None:
    """Work on one family: check it before anyone uses it."""


@main.command(context_settings=CONTEXT)
@click.argument("targets", nargs=-1, required=True)
@click.option(
    "--namespace",
    default=None,
    help="Check the families of a FILE.py under this plugin namespace (their names, rows and pins are then "
    "those of the installed plugin: NAMESPACE.name).",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=1),
    default=120,
    show_default=True,
    help="Seconds one family's check may take (an answer too big to prove in that time fails, named).",
)
@exit_on_error
def check(targets: tuple[str, ...], namespace: str | None, time_limit: float) -> None:
    """Check families: each TARGET is a family name (or all, extended, installed, NAMESPACE.*) or a
    FILE.py that defines families. Exits 1 if any family fails."""
    from mathbode.builder.families import resolve_families
    from mathbode.builder.families.check import CheckReport, check_family
    from mathbode.builder.families.files import load_family_file
    from mathbode.builder.families.plugins import valid_namespace

    if namespace is not None and not valid_namespace(namespace):
        raise UsageError(f"--namespace {namespace!r}: lowercase letters, digits and _, starting with a letter.")
    families = []
    #: A file's families whose definitions failed in the child that imported them: their findings.
    failed_early: list[CheckReport] = []
    for target in targets:
        if target.endswith(".py"):
            loaded = load_family_file(target, namespace)
            families += loaded.families
            for name, findings in loaded.failed.items():
                report = CheckReport(name)
                for code, message in findings:
                    report.fail(code, message)
                failed_early.append(report)
            continue
        try:
            families += resolve_families(target)
        except MathBodeError as err:
            raise UsageError(f"{err} A file of families must end in .py.") from None
    failed = len(failed_early)
    for report in failed_early:
        click.echo(printable(report.format_text()))  # a plugin's text shown, its escape sequences not run
    for family in families:
        report = check_family(family, seconds=time_limit)
        click.echo(printable(report.format_text()))
        failed += not report.passed
    total = len(families) + len(failed_early)
    click.echo(f"{total - failed} of {total} families passed" + (f"; {failed} failed" if failed else "."))
    if failed:
        sys.exit(1)
