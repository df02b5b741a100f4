"""`mathbode family check`: run every check a family must pass, naming each failure."""

from __future__ import annotations

import sys

import click

from mathbode.core.errors import MathBodeError, UsageError

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
@exit_on_error
def check(targets: tuple[str, ...], namespace: str | None) -> None:
    """Check families: each TARGET is a family name (or all, extended, installed, NAMESPACE.*) or a
    FILE.py that defines families. Exits 1 if any family fails."""
    from mathbode.builder.families import resolve_families
    from mathbode.builder.families.check import check_family
    from mathbode.builder.families.files import families_from_file
    from mathbode.builder.families.plugins import namespaced, valid_namespace

    if namespace is not None and not valid_namespace(namespace):
        raise UsageError(f"--namespace {namespace!r}: lowercase letters, digits and _, starting with a letter.")
    families = []
    for target in targets:
        if target.endswith(".py"):
            found = families_from_file(target)
            if namespace is not None:
                try:
                    found = [namespaced(f, namespace, f"file {target}") for f in found]
                except ValueError as err:
                    raise UsageError(f"{target}: {err}.") from None
            families += found
            continue
        try:
            families += resolve_families(target)
        except MathBodeError as err:
            raise UsageError(f"{err} A file of families must end in .py.") from None
    failed = 0
    for family in families:
        report = check_family(family)
        click.echo(report.format_text())
        failed += not report.passed
    passed = len(families) - failed
    click.echo(f"{passed} of {len(families)} families passed" + (f"; {failed} failed" if failed else "."))
    if failed:
        sys.exit(1)
