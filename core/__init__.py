"""Pieces every room uses and that know nothing of MathBode's layout: errors, atomic writes, hashing.

Imports nothing else of ours, so any room may import it.
"""

from .errors import MathBodeError, UnknownNameError, UsageError, unknown_name_message
from .version import __version__

__all__ = ["MathBodeError", "UnknownNameError", "UsageError", "__version__", "unknown_name_message"]
