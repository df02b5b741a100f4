"""The dataset card (README.md with Hub YAML metadata), generated from a build's manifest.

Every number in the card comes from the manifest the build wrote (row counts, sizes, hashes),
from the facts the builder gives about each family, or from the layout contract: nothing is
typed by hand.
"""

from __future__ import annotations

import html
import shlex
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from mathbode.schema.layout import Layout, layout
from mathbode.schema.manifest import RELEASE_NAME, Manifest

from .metadata import card_metadata

DEFAULT_REPO_ID = "ORG/MathBode"


def card_classes() -> tuple[Any, Any]:
    """huggingface_hub's DatasetCard and DatasetCardData, imported on first use: the import takes
    about half a second, which a build can spend while its families are being generated."""
    import jinja2  # noqa: F401 (the card's template engine: huggingface_hub imports it at the first render, 30 ms)
    from huggingface_hub import DatasetCard, DatasetCardData

    return DatasetCard, DatasetCardData


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
    # huggingface_hub renders the YAML block (`card_data`) and the Jinja2 body; the trailing
    # newline Jinja2 strips is put back so the file ends like any text file.
    DatasetCard, DatasetCardData = card_classes()
    card = DatasetCard.from_template(DatasetCardData(**metadata), template_str=_template(template), **context)
    return card.content.rstrip("\n") + "\n"


def rebuild_command(manifest: Manifest) -> str:
    """The command that builds a public split again: every argument quoted for a POSIX shell, so a
    seed holding `$(...)`, quotes or spaces is pasted as the text it is, never run."""
    assert manifest.split is not None and "seed" in manifest.split
    families = ",".join(manifest.families)
    return f"mathbode-build --families {shlex.quote(families)} --seed {shlex.quote(manifest.split['seed'])}"


def _html(text: str) -> str:
    """Text shown as itself inside <code> in the card's Markdown: HTML markup escaped, and a line
    break kept from ending the element (a blank line would end the HTML block)."""
    return html.escape(text, quote=True).replace("\n", "&#10;").replace("\r", "&#13;")


def render_card(manifest: Manifest, families: list[FamilyFacts], repo_id: str = DEFAULT_REPO_ID) -> str:
    """The README.md text for the release described by `manifest` (`families` in its order)."""
    lay = layout(manifest.drive_set)
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
        presets=dict(lay.presets),
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
