"""`mathbode`: one command with a subcommand per job; the `mathbode-*` commands are aliases of them.

Subcommands are imported when called, not when the group loads: `mathbode score` need not pay
for the model client (`run`, about 2 s of imports) or the builder (`build`, `baseline`).
"""

from __future__ import annotations

import importlib

import click

from .common import CONTEXT, version_option

#: Subcommand -> module of `mathbode.cli` whose `main` it is, in the order `--help` lists them.
SUBCOMMANDS = {
    "build": "build",
    "validate": "validate",
    "prompts": "prompts",
    "run": "run",
    "batch": "batch",
    "baseline": "baseline",
    "score": "score",
    "report": "report",
    "site": "site",
    "convert": "convert",
    "push": "push",
    "families": "families",
    "family": "family",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = SUBCOMMANDS.get(cmd_name)
        if module is None:
            return None
        command = importlib.import_module(f"{__package__}.{module}").main
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@version_option
def mathbode() -> None:
    """MathBode: frequency-response evaluation of language models' math reasoning.

    Typical order: build, validate, prompts (or run, or batch), score, push.
    """
