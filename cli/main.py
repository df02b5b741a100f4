"""`mathbode`: one command with a subcommand per job; the `mathbode-*` commands are aliases of them."""

from __future__ import annotations

import click

from . import baseline, build, prompts, push, run, score, validate
from .common import CONTEXT, version_option


@click.group(context_settings=CONTEXT)
@version_option
def mathbode() -> None:
    """MathBode: frequency-response evaluation of language models' math reasoning.

    Typical order: build, validate, prompts (or run), score, push.
    """


mathbode.add_command(build.main, "build")
mathbode.add_command(validate.main, "validate")
mathbode.add_command(prompts.main, "prompts")
mathbode.add_command(run.main, "run")
mathbode.add_command(baseline.main, "baseline")
mathbode.add_command(score.main, "score")
mathbode.add_command(push.main, "push")
