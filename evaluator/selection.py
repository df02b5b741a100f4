"""Which rows a model must answer: a preset (or every row) of some families, from a chosen reference."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa

from mathbode.schema.hub import fetch_release, is_hub_spec
from mathbode.schema.keys import preset_keys, row_key
from mathbode.schema.layout import layout

from .reference import canonical_rows, release_rows

PRESET_CHOICES = (*layout().presets, "ALL")
KEY_FIELDS = list(layout().key)


def reference_table(families: list[str], reference: str | None = None) -> pa.Table:
    """Canonical rows of `families`: the builder's own, a release folder, or `hub:ORG/NAME[@REV]`."""
    if not reference:
        return canonical_rows(families)
    folder = fetch_release(reference) if is_hub_spec(reference) else reference
    return release_rows(folder, families)


def select_rows(table: pa.Table, preset: str) -> list[dict]:
    """Rows of `table` in a preset (sinusoid sweeps of the first K base keys), or all rows for ALL."""
    rows = table.to_pylist()
    if preset.upper() == "ALL":
        return rows
    wanted = preset_keys(preset.upper())
    return [r for r in rows if row_key(r) in wanted]


def key_fields(row: dict) -> dict:
    """The seven key fields a prediction line copies from its row."""
    return {k: row[k] for k in KEY_FIELDS}


def iter_requests(rows: list[dict]) -> Iterator[dict]:
    """Request lines: the key fields and the prompt."""
    for row in rows:
        yield {**key_fields(row), "prompt": row["prompt"]}
