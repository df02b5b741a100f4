"""The MathBode dataset builder: families x signals -> the canonical release in dist/."""

from .families import FAMILIES, Family, get_family, resolve_families
from .rows import family_table
from .version import __version__

__all__ = ["FAMILIES", "Family", "__version__", "family_table", "get_family", "resolve_families"]
