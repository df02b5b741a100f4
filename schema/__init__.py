"""The MathBode contract: the layout facts, JSON Schemas and the validators that apply them."""

from .errors import MathBodeError, UnknownNameError, UsageError
from .hashing import content_hash
from .layout import CHIRP, SINUSOID, STEP, Layout, Preset, Sweep, layout

__all__ = [
    "CHIRP",
    "SINUSOID",
    "STEP",
    "Layout",
    "MathBodeError",
    "Preset",
    "Sweep",
    "UnknownNameError",
    "UsageError",
    "content_hash",
    "layout",
]
