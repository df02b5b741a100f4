"""The MathBode dataset builder: families x signals -> the canonical release in dist/, and the exact oracle."""

from mathbode.core.version import __version__

from .families import FAMILIES, Family, get_family, register, resolve_families
from .rows import family_table

__all__ = ["FAMILIES", "Family", "__version__", "family_table", "get_family", "register", "resolve_families"]
