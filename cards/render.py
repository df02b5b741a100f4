"""The dataset card (README.md with Hub YAML metadata), generated from a build's manifest.

Every number in the card comes from the manifest the build wrote (row counts, sizes, hashes)
or from the family definitions and the layout contract: nothing is typed by hand.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from huggingface_hub import DatasetCard, DatasetCardData

from mathbode.builder.families import get_family
from mathbode.schema.layout import layout

from .metadata import card_metadata

DEFAULT_REPO_ID = "ORG/MathBode"


def _family_view(name: str, lay) -> dict[str, Any]:
    from mathbode.builder.rows import answer_instruction

    f = get_family(name)
    return {
        "name": f.name,
        "version": f.version,
        "title": f.title,
        "summary": f.summary,
        "parameter": f.parameter_meaning,
        "p_range": f.p_range,
        "p0": f.p0,
        "epsilon": str(f.eps),
        "decimals": f.decimals,
        "solution": str(f.solution),
        "variants": [", ".join(f"{k} = {v}" for k, v in var.constants.items()) for var in f.variants],
        "example": f"{f.render(0, f'{f.p_center:.{f.decimals}f}')}\n\n{answer_instruction(lay)}",
    }


def _template(name: str) -> str:
    return resources.files(__package__).joinpath(f"templates/{name}").read_text("utf-8")


def _columns(lay) -> list[dict[str, Any]]:
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
    card = DatasetCard.from_template(DatasetCardData(**metadata), template_str=_template(template), **context)
    return card.content.rstrip("\n") + "\n"


def render_card(manifest: dict[str, Any], repo_id: str = DEFAULT_REPO_ID) -> str:
    """The README.md text for the release described by `manifest`."""
    lay = layout()
    sweeps = {}
    for sweep in lay.sweeps():
        sweeps[sweep.signal_type] = sweeps.get(sweep.signal_type, 0) + 1
    sweeps["total"] = len(lay.sweeps())
    fmt = lambda xs: ", ".join(f"{x:g}" for x in xs)  # noqa: E731
    families = list(manifest["families"])
    return _render(
        "dataset_card.md",
        card_metadata(manifest),
        T=lay.time_steps,
        builder_version=manifest["builder_version"],
        num_rows=manifest["num_rows"],
        rows_per_family=lay.rows_per_family,
        rows_per_question=lay.rows_per_question,
        content_hash=manifest["content_hash"],
        repo_id=repo_id,
        first_family=families[0],
        families=[_family_view(name, lay) for name in families],
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
        files={path: info for path, info in manifest["files"].items() if "num_rows" in info},
    )


def render_family_card(manifest: dict[str, Any], family: str, repo_id: str, main_repo_id: str) -> str:
    """The README.md of a per-family repository (`manifest` restricted to that family)."""
    lay = layout()
    return _render(
        "family_card.md",
        card_metadata(manifest, all_config=False),
        T=lay.time_steps,
        f=_family_view(family, lay),
        builder_version=manifest["builder_version"],
        num_rows=manifest["num_rows"],
        content_hash=manifest["content_hash"],
        repo_id=repo_id,
        main_repo_id=main_repo_id,
        columns=_columns(lay),
    )
