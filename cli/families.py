"""`mathbode families`: every family this installation knows, built in or from a plugin package."""

from __future__ import annotations

import json

import click

from mathbode.core.errors import MathBodeError

from .common import CONTEXT, exit_on_error, version_option


@click.command(context_settings=CONTEXT)
@version_option
@click.argument("spec", required=False, default=None)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per family instead of text.")
@exit_on_error
def main(spec: str | None, as_json: bool) -> None:
    """List families: name, title, summary, parameter and range, answer formula, version and origin.

    SPEC narrows the list: all (the canonical release), extended (MathBode-Extended), installed
    (plugin families), NAMESPACE.*, or names, comma-separated. Default: every family.
    """
    from mathbode.builder.families import EXTENDED, FAMILIES, known_families, plugins, resolve_families

    try:
        families = resolve_families(spec) if spec else list(known_families().values())
    except MathBodeError as err:
        raise click.BadParameter(str(err), param_hint="SPEC") from None
    for family in families:
        release = "canonical" if family.name in FAMILIES else "extended" if family.name in EXTENDED else "plugin"
        facts = {
            "name": family.name,
            "version": family.version,
            "title": family.title,
            "summary": family.summary,
            "parameter": str(family.parameter),
            "parameter_meaning": family.parameter_meaning,
            "p_range": list(family.p_range),
            "p0": family.p0,
            "answer": family.formula,
            # A built-in family names the package it lives in, as docs/family-guide.md does.
            "origin": family.origin or f"mathbode.builder.families.{release}",
            "release": release,
        }
        if as_json:
            click.echo(json.dumps(facts, ensure_ascii=False))
            continue
        click.echo(f"{family.name} {family.version}  [{release}; {facts['origin']}]")
        click.echo(f"  {family.title}: {family.summary}")
        click.echo(
            f"  p = {family.parameter_meaning}, in [{family.p_range[0]}, {family.p_range[1]}] around {family.p0}"
        )
        click.echo(f"  answer: {family.formula}")
    for problem in plugins().problems:
        click.echo(f"Warning: {problem}", err=True)
