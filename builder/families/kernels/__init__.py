"""Built-in kernel variants (GAP): each original's solution plan in a changed setting.

A kernel variant is a family of its own (its own wording, constants, answer and truth, checked
and pinned like any family) that names the family it rewrites (`variant_of`) and says
`variant="kernel"`. GAP finds that kernel variants cost models far more than renamed ones; paired
with its original on the same drives, a kernel variant shows whether the gain and phase of a
model follow the mathematics or the setting. One for each canonical family (`canonical`) and for
five MathBode-Extended families (`extended`).
"""

from __future__ import annotations

from ..family import Family
from .canonical import KERNELS as CANONICAL_KERNELS
from .extended import KERNELS as EXTENDED_KERNELS

#: Every built-in kernel variant, in the order of the families they rewrite.
KERNELS: tuple[Family, ...] = (*CANONICAL_KERNELS, *EXTENDED_KERNELS)

__all__ = ["KERNELS"]
