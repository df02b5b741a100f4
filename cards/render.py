"""The dataset card (README.md with Hub YAML metadata), generated from a build's manifest.

Every number in the card comes from the manifest the build wrote (row counts, sizes, hashes),
from the facts the builder gives about each family, or from the layout contract: nothing is
typed by hand.
"""

from __future__ import annotations

import html
import re
import shlex
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from mathbode.schema.layout import Layout, layout
from mathbode.schema.manifest import RELEASE_NAME, Manifest
from mathbode.schema.splits import PROBLEMS_SEED

from .metadata import card_metadata

DEFAULT_REPO_ID = "ORG/MathBode"


def card_library() -> None:
    """Import what renders a card (Jinja2 and PyYAML, 0.1 s): a build does it while its families
    are generated, before the manifest is ready."""
    import jinja2  # noqa: F401
    import yaml  # noqa: F401


#: The Hub's dataset card metadata fields, in the order huggingface_hub's `DatasetCardData` keeps
#: them (its YAML block lists them so, after them any other key as given, then `train-eval-index`).
_HUB_FIELDS = (
    *("annotations_creators", "language_creators", "language", "license", "multilinguality", "size_categories"),
    *("source_datasets", "task_categories", "task_ids", "paperswithcode_id", "pretty_name", "config_names"),
)
#: A card's YAML block, as the Hub reads one: `---`, the YAML, `---` on a line of its own.
_YAML_BLOCK = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")


def _hub_fields(given: dict[str, Any], order: list[str] | None = None) -> dict[str, Any]:
    """The metadata as the Hub's card data holds it: its fields in their order (or in `order`,
    a YAML block's own), `train-eval-index` last, no empty (None) field."""
    rest = dict(given)
    fields: dict[str, Any] = {name: rest.pop(name, None) for name in _HUB_FIELDS}
    fields["train_eval_index"] = rest.pop("train_eval_index", None) or rest.pop("train-eval-index", None)
    fields.update(rest)
    if order:
        fields = {k: fields[k] for k in [*order, *(k for k in fields if k not in set(order))] if k in fields}
    fields["train-eval-index"] = fields.pop("train_eval_index")
    return {k: v for k, v in fields.items() if v is not None}


def _hub_yaml(fields: dict[str, Any], line_break: str | None = None) -> str:
    import yaml

    return str(yaml.dump(fields, stream=None, allow_unicode=True, sort_keys=False, line_break=line_break)).strip()


def _line_ending(text: str) -> str | None:
    """The text's line ending as the Hub detects it (the card is written with it throughout)."""
    cr, lf, crlf = text.count("\r"), text.count("\n"), text.count("\r\n")
    if cr + lf == 0:
        return None
    if crlf == cr and crlf == lf:
        return "\r\n"
    return "\r" if cr > lf else "\n"


@dataclass(frozen=True)
class FamilyFacts:
    """What a card says about one family (the builder fills it from the family's definition)."""

    name: str
    version: str
    title: str
    summary: str
    #: What the driven parameter means ("the coefficient a").
    parameter: str
    p_range: tuple[str, str]
    p0: str
    epsilon: str
    decimals: int
    #: sympy's solution for the asked quantity, as text.
    solution: str
    #: Each question's constants, as text ("b = 3, c = 27").
    variants: tuple[str, ...]
    #: A full example prompt, at p0.
    example: str
    #: rational, algebraic or transcendental.
    kind: str = "rational"
    #: The package that defines the family ("acme-families 1.2.0"), or "mathbode".
    origin: str = "mathbode"


def _template(name: str) -> str:
    return resources.files(__package__).joinpath(f"templates/{name}").read_text("utf-8")


def _columns(lay: Layout) -> list[dict[str, Any]]:
    return [
        {
            "name": fld.name,
            "type": str(fld.type),
            "nullable": fld.nullable,
            "meaning": lay.column_descriptions[fld.name],
        }
        for fld in lay.arrow_schema
    ]


def _render(template: str, metadata: dict[str, Any], **context: Any) -> str:
    """The card from its template: the text huggingface_hub's `DatasetCard.from_template(...)
    .content` gives (tests compare the two on every kind of release), from Jinja2 and PyYAML alone:
    importing the Hub library took 0.3-0.4 s, a fifth of a build's CPU. The template's YAML block
    (`card_data`) is read back and written again, as the Hub's card does; the trailing newline
    Jinja2 strips is put back so the file ends like any text file."""
    import jinja2
    import yaml

    fields = _hub_fields(metadata)
    text = jinja2.Template(_template(template)).render({**fields, **context, "card_data": _hub_yaml(fields)})
    match = _YAML_BLOCK.search(text)
    data, body = (yaml.safe_load(match.group(2)) or {}, text[match.end() :]) if match else ({}, text)
    if not isinstance(data, dict):
        raise ValueError(f"the card template {template} renders a YAML block that is not a mapping")
    line_break = _line_ending(text) or "\n"
    block = _hub_yaml(_hub_fields(data, list(data)), line_break)
    card = f"---{line_break}{block}{line_break}---{line_break}{body}"
    return card.rstrip("\n") + "\n"


def rebuild_command(manifest: Manifest) -> str:
    """The command that builds a public split again: every argument quoted for a POSIX shell, so a
    seed holding `$(...)`, quotes or spaces is pasted as the text it is, never run."""
    assert manifest.split is not None and "seed" in manifest.split
    seed = shlex.quote(manifest.split["seed"])
    if manifest.questions is not None:  # a paired release of N problems: its originals, their variants follow
        originals = ",".join(name for name, entry in manifest.families.items() if entry.variant_of is None)
        # The default seed is not named: given, it would name the release as a split of it.
        drawn_from = "" if manifest.split["seed"] == PROBLEMS_SEED else f" --seed {seed}"
        return (
            f"mathbode-build --variants gap --families {shlex.quote(originals)} "
            f"--questions {manifest.questions}{drawn_from}"
        )
    families = ",".join(manifest.families)
    return f"mathbode-build --families {shlex.quote(families)} --seed {seed}"


def _html(text: str) -> str:
    """Text shown as itself inside <code> in the card's Markdown: HTML markup escaped, and a line
    break kept from ending the element (a blank line would end the HTML block)."""
    return html.escape(text, quote=True).replace("\n", "&#10;").replace("\r", "&#13;")


def render_card(manifest: Manifest, families: list[FamilyFacts], repo_id: str = DEFAULT_REPO_ID) -> str:
    """The README.md text for the release described by `manifest` (`families` in its order)."""
    lay = layout(manifest.drive_set, manifest.questions, manifest.design)
    sweeps: dict[str, int] = {}
    for sweep in lay.sweeps():
        sweeps[sweep.signal_type] = sweeps.get(sweep.signal_type, 0) + 1
    sweeps["total"] = len(lay.sweeps())

    def fmt(xs: tuple[float, ...]) -> str:
        return ", ".join(f"{x:g}" for x in xs)

    return _render(
        "dataset_card.md",
        card_metadata(manifest),
        T=lay.time_steps,
        release_name=manifest.name,
        canonical=manifest.name == RELEASE_NAME,
        plugins=any(f.origin != "mathbode" for f in families),
        builder_version=manifest.builder_version,
        num_rows=manifest.num_rows,
        rows_per_family=lay.rows_per_family,
        rows_per_question=lay.rows_per_question,
        content_hash=manifest.content_hash,
        prompts_hash=manifest.prompts_hash,
        canary=manifest.canary,
        split=manifest.split,
        seed_html=_html(manifest.split["seed"]) if manifest.split and "seed" in manifest.split else None,
        rebuild_html=_html(rebuild_command(manifest)) if manifest.split and "seed" in manifest.split else None,
        overlap=manifest.overlap or {},
        prompts_only=manifest.prompts_only,
        repo_id=repo_id,
        first_family=next(iter(manifest.families)),
        families=[asdict(f) for f in families],
        sinusoid_frequencies=fmt(lay.sinusoid_frequencies),
        sinusoid_phases=fmt(lay.sinusoid_phases_deg),
        sinusoid_amplitudes=fmt(lay.sinusoid_amplitudes),
        chirp_start=f"{lay.chirp_start_cycles:g}",
        chirp_end=f"{lay.chirp_end_cycles:g}",
        chirp_amplitudes=fmt(lay.chirp_amplitudes),
        step_switch=lay.step_switch,
        step_amplitudes=fmt(lay.step_amplitudes),
        sweeps=sweeps,
        question_ids=lay.question_ids,
        columns=_columns(lay),
        answer_start=lay.answer_start,
        answer_end=lay.answer_end,
        answer_decimals=lay.answer_decimals,
        preset_k=lay.preset_base_keys_per_family,
        presets={name: p for name, p in lay.presets.items() if p.is_papers},
        paired=lay.presets.get("PAIRED") if manifest.questions is not None else None,
        files={path: entry.to_json() for path, entry in manifest.data_files.items()},
        drives=manifest.drives,
    )


def render_family_card(manifest: Manifest, family: FamilyFacts, repo_id: str, main_repo_id: str) -> str:
    """The README.md of a per-family repository (`manifest` restricted to that family)."""
    lay = layout()
    return _render(
        "family_card.md",
        card_metadata(manifest, all_config=False),
        T=lay.time_steps,
        release_name=manifest.name,
        f=asdict(family),
        builder_version=manifest.builder_version,
        num_rows=manifest.num_rows,
        content_hash=manifest.content_hash,
        repo_id=repo_id,
        main_repo_id=main_repo_id,
        columns=_columns(lay),
    )
