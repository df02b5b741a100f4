"""`mathbode families`: every family this installation knows, built in or from a plugin package."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Callable

import click

from mathbode.core.bounds import OutOfTime, error_text, time_bound
from mathbode.core.errors import MathBodeError
from mathbode.core.names import printable

from .common import CONTEXT, exit_on_error, version_option

if TYPE_CHECKING:
    from mathbode.builder.families import Family


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
    # The families (sympy, 0.3-0.5 s) load when listed, not for --help.
    from mathbode.builder.families import FAMILIES, extended_families, known_families, plugins, resolve_families

    # Imported before the plugins load: the child that imports them is forked from this process
    # and inherits it, instead of importing it again itself.
    from mathbode.builder.families.check import expression_problem

    try:
        families = resolve_families(spec) if spec else list(known_families().values())
    except MathBodeError as err:
        raise click.BadParameter(str(err), param_hint="SPEC") from None
    extended = extended_families()
    for family in families:
        release = "canonical" if family.name in FAMILIES else "extended" if family.name in extended else "plugin"
        facts = {
            "name": family.name,
            "version": family.version,
            "title": family.title,
            "summary": family.summary,
            "parameter": str(family.parameter),
            "parameter_meaning": family.parameter_meaning,
            "p_range": list(family.p_range),
            "p0": family.p0,
            "answer": _formula(family, expression_problem),
            # A built-in family names the package it lives in, as docs/family-guide.md does.
            "origin": family.origin or f"mathbode.builder.families.{release}",
            "release": release,
        }
        if as_json:
            click.echo(json_line(facts))
            continue
        # A plugin's texts are shown, never obeyed: an escape sequence (a hyperlink, a terminal
        # title) or a direction override is printed as its escape, not sent to the terminal.
        click.echo(printable(f"{family.name} {family.version}  [{release}; {facts['origin']}]"))
        click.echo(printable(f"  {family.title}: {family.summary}"))
        click.echo(
            printable(
                f"  p = {family.parameter_meaning}, in [{family.p_range[0]}, {family.p_range[1]}] around {family.p0}"
            )
        )
        click.echo(printable(f"  answer: {facts['answer']}"))
    for problem in plugins().problems:
        click.echo(printable(f"Warning: {problem}"), err=True)


def json_line(facts: dict) -> str:
    """One JSON object whose text holds no character a terminal acts on: each is written as its
    JSON escape (\\u001b, \\u202e), so the values read back are exactly the family's."""
    return _UNPRINTABLE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(facts, ensure_ascii=False))


# What `printable` escapes: C0 and C1 controls, DEL, the direction overrides, lone surrogates.
_UNPRINTABLE_IN_JSON = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


#: How long sympy may take to state one family's answer for the listing.
FORMULA_SECONDS = 10.0
#: A formula longer than this is cut in the listing (`mathbode family check NAME` has it whole).
FORMULA_CHARS = 500


def _formula(family: Family, expression_problem: Callable[[object], str | None]) -> str:
    """The answer's formula for the listing: bounded in time and length, never a traceback (a
    plugin's family is data we did not write)."""
    try:
        with time_bound(FORMULA_SECONDS):
            parts = [family.answer] if family.answer is not None else list(family.equations)
            for part in parts:
                if problem := expression_problem(part):
                    return f"(not shown: {problem}; see `mathbode family check {family.name}`)"
            text = family.formula
    except OutOfTime:
        return f"(not shown: sympy did not solve it within {FORMULA_SECONDS:g} s; see `mathbode family check`)"
    except Exception as err:
        return f"(not shown: {type(err).__name__}: {error_text(err, 120)}; see `mathbode family check`)"
    return text if len(text) <= FORMULA_CHARS else text[: FORMULA_CHARS - 3] + "..."
