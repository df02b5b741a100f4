"""Dataset cards generated from a build: YAML metadata and the readable body."""

from .metadata import card_metadata
from .render import FamilyFacts, render_card, render_family_card

__all__ = ["FamilyFacts", "card_metadata", "render_card", "render_family_card"]
