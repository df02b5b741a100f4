"""MathBode: frequency-response (gain and phase) evaluation of language models' math reasoning.

The package is split into rooms, one per job (`mathbode.core`, `schema`, `cards`, `builder`,
`hub`, `evaluator`, `runner`, `cli`); this top level holds only the version and the
`python -m mathbode` entry point, so importing it pulls in nothing heavy.
"""

from mathbode.core.version import __version__

__all__ = ["__version__"]
