"""Click options shared by several commands."""

from __future__ import annotations

from typing import Any, Callable

import click

from mathbode.core.errors import UnknownNameError
from mathbode.hub.reference import resolve_reference
from mathbode.schema.reference import Reference
from mathbode.schema.selection import PRESET_CHOICES

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def preset_option(
    default: str | None = "SMOKE", help_text: str = "Rows to select (paper, appendix B); ALL = every row."
) -> Decorator:
    return click.option(
        "--preset",
        type=click.Choice(PRESET_CHOICES, case_sensitive=False),
        # Named as the documentation and the paper name them (click would list them lower-cased).
        metavar="[" + "|".join(PRESET_CHOICES) + "]",
        default=default,
        show_default=default is not None,
        help=help_text,
    )


def reference_option() -> Decorator:
    return click.option(
        "--reference",
        type=click.Path(),
        default=None,
        help="Release folder, or hub:ORG/NAME[@REV], to take the rows from: the canonical release or a "
        "release of any families (default: the canonical rows shipped with mathbode, checked against "
        "the release's content hash).",
    )


def families_option() -> Decorator:
    return click.option(
        "--families",
        "families_spec",
        default="all",
        show_default=True,
        help="'all' or a comma-separated list of family names (of the --reference release; default: the "
        "canonical five).",
    )


def reference_rows(spec: str, reference: str | None) -> Reference:
    """The rows of the `--families` spec from the `--reference` release (`all`: every family it
    holds); a family it lacks is a usage error on --families naming the close matches."""
    try:
        return resolve_reference(spec, reference)
    except UnknownNameError as err:
        raise click.BadParameter(str(err), param_hint="--families") from None
