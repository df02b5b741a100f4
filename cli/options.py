"""Click options shared by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from mathbode.core.errors import ReferenceMismatchError, UnknownNameError, UsageError
from mathbode.hub.reference import resolve_reference
from mathbode.runner.formats import MECHANISMS
from mathbode.schema.reference import BUILDER_SOURCE, Reference
from mathbode.schema.selection import PRESET_CHOICES

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def preset_option(
    default: str | None = "SMOKE",
    help_text: str = "Rows to select (paper, appendix B); PAIRED = one sweep of every problem (a paired release of "
    "--questions N: docs/variants.md); ALL = every row.",
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


def system_prompt_text(value: str | None) -> str | None:
    """--system-prompt: TEXT, or @FILE for the text of a file."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text("utf-8")
    except OSError as err:
        raise UsageError(f"--system-prompt {value}: cannot read {path} ({err.strerror}).") from None


def request_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """What a request asks (decoding and answer format): the same options for `mathbode run` and
    `mathbode batch write`, so one set of words builds the same request body."""
    options = [
        click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True),
        click.option("--max-tokens", type=click.IntRange(min=1), default=256, show_default=True),
        click.option("--seed", type=int, default=None, help="Sampling seed, for servers that honour it."),
        click.option("--system-prompt", default=None, help="System message before every prompt: TEXT or @FILE."),
        click.option(
            "--constrain-format",
            type=click.Choice(MECHANISMS),
            default=None,
            help="Ask the server to constrain answers to the answer format: gbnf (llama.cpp), vllm-regex, "
            "sglang-regex, json-schema. The run is marked as constrained.",
        ),
        click.option("--one-shot", is_flag=True, help="Prepend a worked example of the answer format."),
        click.option(
            "--instruction-as-system",
            is_flag=True,
            help="Send the answer-format instruction as the system message instead of at the end of each prompt.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def tokenizer_option() -> Decorator:
    return click.option(
        "--tokenizer",
        default=None,
        metavar="FILE|tiktoken:NAME",
        help="Count the cost's tokens with this tokenizer: a tokenizer.json file (needs tokenizers) or "
        "tiktoken:ENCODING (needs tiktoken and its encoding offline). Default: an estimate, which says so.",
    )


def recorded_reference(given: str | None, recorded: Any, what: str) -> tuple[str | None, Reference | None]:
    """The reference to read answers against: `--reference` when given, else the one `recorded` (a
    reference's provenance, as a batch manifest or a framework log keeps it: `source`, `release`,
    `split`). Returns the spec (None: the canonical rows) and the reference read (None when canonical).

    Answers of one split read against another are read as a bad model, so a given reference of
    another split than the recorded one is refused, and one given in place of the recorded source
    is said (on stderr)."""
    recorded = recorded if isinstance(recorded, dict) else {}
    source = recorded.get("source") if isinstance(recorded.get("source"), str) else None
    split = recorded.get("split") if isinstance(recorded.get("split"), str) else None
    named = f"{recorded.get('release') or 'a release'} ({source}{', split ' + split if split else ''})"
    if given:
        ref = resolve_reference(None, given)
        content = recorded.get("release_content_hash")
        if split and ref.split_hash and split != ref.split_hash:
            raise UsageError(
                f"--reference {given} is the split {ref.split_hash}, but {what} answered {named}: its answers would "
                f"be read against other questions. Leave out --reference to use the recorded one, or give that release."
            )
        if not split and isinstance(content, str) and content != ref.release_hash:
            raise UsageError(
                f"--reference {given}: release content {ref.release_hash}, but {what} was written for {content} "
                f"({source})."
            )
        if source and source != given and not (source == BUILDER_SOURCE and ref.is_canonical):
            click.echo(f"Note: {what} recorded the reference {source}; read against --reference {given}.", err=True)
        return given, ref
    if not source or source == BUILDER_SOURCE:
        return None, None
    try:
        ref = resolve_reference(None, source)
    except (UsageError, ReferenceMismatchError) as err:
        raise UsageError(
            f"{what} was answered on {named}, which cannot be read here ({str(err).splitlines()[0]}). Give "
            "--reference with where that release is now."
        ) from None
    click.echo(f"Reading {what} against the reference it recorded: {source}.", err=True)
    return source, ref
