"""The card is rendered from Jinja2 and PyYAML alone (`cards.render._render`), and it is, byte for
byte, the text huggingface_hub's `DatasetCard.from_template(...).content` gives: checked here on
every kind of release a build writes, on the per-family cards, and on metadata the builder never
writes (fields left empty, keys of the Hub's own, line endings of another kind)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathbode.builder.families import get_family
from mathbode.builder.release import build_release, family_release
from mathbode.builder.splits import SplitPlan
from mathbode.cards import render


def _hub(template: str, metadata: dict, **context) -> str:
    from huggingface_hub import DatasetCard, DatasetCardData

    card = DatasetCard.from_template(DatasetCardData(**metadata), template_str=render._template(template), **context)
    return card.content.rstrip("\n") + "\n"


@pytest.fixture
def compared(monkeypatch):
    """Every card rendered while the test runs, also rendered by huggingface_hub: the two must agree."""
    seen: list[str] = []
    ours = render._render

    def both(template: str, metadata: dict, **context) -> str:
        text = ours(template, metadata, **context)
        assert text == _hub(template, metadata, **context)
        seen.append(template)
        return text

    monkeypatch.setattr(render, "_render", both)
    return seen


BUILDS = {
    "canonical": dict(families=["linear_solve", "ratio_saturation"]),
    "extended": dict(families=["garden_width", "normal_below"]),
    "gap pair": dict(families=["linear_solve", "linear_solve__dl", "linear_solve__kernel"]),
    "public split": dict(families=["linear_solve"], split=SplitPlan("2026-12")),
    "private prompts-only split": dict(families=["similar_triangles"], split=SplitPlan("0" * 32, True, True)),
    "multitone": dict(families=["linear_system"], drives="multitone"),
}


@pytest.mark.parametrize("build", BUILDS.values(), ids=BUILDS.keys())
def test_every_kind_of_release_card_is_the_hubs_text(build, compared, tmp_path):
    kwargs = dict(build)
    families = [get_family(name) for name in kwargs.pop("families")]
    result = build_release(families, tmp_path / "dist", **kwargs)
    assert compared == ["dataset_card.md"]
    assert (tmp_path / "dist" / "README.md").read_text().startswith("---\n")
    assert result.manifest.num_rows > 0


def test_the_per_family_card_is_the_hubs_text(compared, tmp_path):
    dist = Path(__file__).resolve().parents[1] / "dist"
    family_release(dist, "exponential_interest", "ORG/MathBode-exponential_interest", "ORG/MathBode", tmp_path / "f")
    assert compared == ["family_card.md"]


METADATA = {
    "empty fields dropped": {"license": "mit", "language": None, "pretty_name": "X", "tags": None},
    "the Hub's own keys": {"train_eval_index": [{"config": "a"}], "configs": [{"config_name": "a"}], "x": 1},
    "the hyphenated key": {"train-eval-index": [{"config": "b"}], "license": "cc-by-4.0"},
    "unicode and shared values": {"pretty_name": "Bode — 日本", "tags": ["a"], "language": ["en", "fr"]},
}


@pytest.mark.parametrize("metadata", METADATA.values(), ids=METADATA.keys())
@pytest.mark.parametrize("line", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_any_metadata_and_line_ending_render_as_the_hubs(metadata, line):
    # A body whose line ending is `line` throughout: the Hub writes the YAML block with the same.
    template = "---\n{{ card_data }}\n---\n" + line.join(["# {{ pretty_name }}", "", "text {{ extra }}", "end"])
    render._template, saved = (lambda name: template), render._template
    try:
        assert render._render("t.md", metadata, extra="1 < 2") == _hub("t.md", metadata, extra="1 < 2")
    finally:
        render._template = saved
