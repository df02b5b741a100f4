"""Which rows a model must answer: a preset (or every row) of some families.

`mathbode-prompts`, `mathbode-baseline` and `mathbode-run` all select through here, so they ask
the same rows in the same (canonical) order.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Iterator

import pyarrow as pa

from .keys import preset_keys, row_key
from .layout import layout

#: Every row of the chosen families, chirp and step included.
ALL_PRESET = "ALL"
PRESET_CHOICES = (*layout().presets, *layout().transient_presets, ALL_PRESET)
KEY_FIELDS = list(layout().key)


def select_rows(table: pa.Table, preset: str) -> list[dict[str, Any]]:
    """Rows of `table` in a preset (sinusoid sweeps of the first K base keys), or all rows for ALL,
    whatever its families."""
    rows = table.to_pylist()
    if preset.upper() == ALL_PRESET:
        return rows
    wanted = _preset_grid(layout().preset_name(preset))
    return [r for r in rows if row_key(r)[1:] in wanted]


@cache
def _preset_grid(preset: str) -> frozenset[tuple[Any, ...]]:
    """A preset's row keys without their family: the grid is the same for every family of any release."""
    first = layout().families[0]
    return frozenset(key[1:] for key in preset_keys(preset) if key.family == first)


def key_fields(row: dict[str, Any]) -> dict[str, Any]:
    """The seven key fields a prediction line copies from its row."""
    return {k: row[k] for k in KEY_FIELDS}


def iter_requests(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Request lines: the key fields and the prompt."""
    for row in rows:
        yield {**key_fields(row), "prompt": row["prompt"]}
