"""MathBode-Extended: built-in families beyond the paper's five (being written)."""

from __future__ import annotations

from ..families.base import Family

FAMILIES: tuple[Family, ...] = ()
