"""Which rows a model must answer: a preset (or every row) of some families.

`mathbode-prompts`, `mathbode-baseline` and `mathbode-run` all select through here, so they ask
the same rows in the same (canonical) order.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Iterator

import pyarrow as pa

from .drives import STANDARD
from .keys import row_key
from .layout import layout
from .universe import Universe

#: Every row of the chosen families, chirp and step included.
ALL_PRESET = "ALL"
PRESET_CHOICES = (*layout().presets, *layout().transient_presets, ALL_PRESET)
KEY_FIELDS = list(layout().key)


def select_rows(table: pa.Table, preset: str, universe: Universe | None = None) -> list[dict[str, Any]]:
    """Rows of `table` in a preset (sinusoid sweeps of the first K base keys; PAIRED: one sweep of
    every problem of `universe`, the release the table is of, default the canonical one), or all
    rows for ALL, whatever its families."""
    rows = table.to_pylist()
    if preset.upper() == ALL_PRESET:
        return rows
    wanted = _preset_grid(layout().preset_name(preset), universe.questions if universe is not None else None)
    return [r for r in rows if row_key(r)[1:] in wanted]


@cache
def _preset_grid(preset: str, questions: int | None = None) -> frozenset[tuple[Any, ...]]:
    """A preset's row keys without their family: the grid is the same for every family of a release
    with `questions` problems a family (None: the layout's three)."""
    lay = layout(STANDARD, questions)
    return frozenset(
        (q, s.signal_type, s.amplitude_scale, s.frequency_cycles, s.phase_deg, t)
        for q, s in lay.preset_grid(preset)
        for t in range(lay.time_steps)
    )


def key_fields(row: dict[str, Any]) -> dict[str, Any]:
    """The seven key fields a prediction line copies from its row."""
    return {k: row[k] for k in KEY_FIELDS}


def iter_requests(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Request lines: the key fields and the prompt."""
    for row in rows:
        yield {**key_fields(row), "prompt": row["prompt"]}
