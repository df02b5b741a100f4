"""A paired release's pairing (GAP variants, docs/variants.md), re-checked from its rows.

The manifest says which family is a variant of which (`variant_of`, `variant`); the paired
scores trust that a surface variant's row and its original's row with the same key are the same
problem under other names. That is a claim about the rows, so it is recomputed here as the build
computed it: every surface row's key fields, p_value and ground_truth equal its original's, row
by row and bit for bit (-0.0 is not 0.0), and every variant's original is in the release (a
variant with nothing to pair with would score as nothing, silently).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .manifest import MANIFEST, Manifest
from .report import Report

#: GAP's surface kinds (renamed identifiers, the mathematics unchanged) and its kernel kind.
SURFACE_KINDS = ("DL", "DLC", "DLM", "GS")
KERNEL = "kernel"
#: The fields a surface row shares with its original row, value for value.
PAIRED_FIELDS = (
    "question_id",
    "signal_type",
    "amplitude_scale",
    "frequency_cycles",
    "phase_deg",
    "time_step",
    "p_value",
    "ground_truth",
)


def _bits(column: pa.ChunkedArray) -> np.ndarray:
    values = column.to_numpy(zero_copy_only=False)
    if values.dtype == np.float64:
        return values.view(np.int64)  # bit for bit: -0.0 and 0.0 differ, as every NaN payload would
    return values


def paired_field_problems(original: pa.Table, table: pa.Table, fields: tuple[str, ...] = PAIRED_FIELDS) -> list[str]:
    """Each paired field where `table`'s rows differ from `original`'s, the first differing row named."""
    if original.num_rows != table.num_rows:
        return [f"{table.num_rows} rows, its original {original.num_rows}"]
    problems = []
    for name in fields:
        a, b = _bits(original.column(name)), _bits(table.column(name))
        nulls_a = original.column(name).is_null().to_numpy(zero_copy_only=False)
        nulls_b = table.column(name).is_null().to_numpy(zero_copy_only=False)
        differ = (nulls_a != nulls_b) | (~nulls_a & (a != b))
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            shown_a = original.column(name)[i].as_py()
            shown_b = table.column(name)[i].as_py()
            count = int(differ.sum())
            problems.append(f"row {i}: {name} is {shown_b!r}, its original's {shown_a!r} ({count} rows differ)")
    return problems


def check_pairing(
    manifest: Manifest, tables: dict[str, tuple[str, pa.Table]], report: Report, prompts_only: bool
) -> None:
    """Report every variant family of `manifest` whose original is missing or whose rows do not
    pair with its original's (`tables`: family -> (file, rows); a family whose file could not be
    read is skipped, its own error says why)."""
    fields = tuple(f for f in PAIRED_FIELDS if not (prompts_only and f == "ground_truth"))
    for name, entry in manifest.families.items():
        if entry.variant_of is None:
            continue
        where = f"families.{name}"
        if entry.variant_of not in manifest.families:
            report.error(
                "pairing",
                MANIFEST,
                f"{where}.variant_of",
                f"its original family {entry.variant_of!r} in the release (build the paired release with it: "
                f"mathbode-build --variants gap --families {entry.variant_of})",
                f"{name} is a variant of {entry.variant_of!r}, which the release does not hold",
            )
            continue
        if entry.variant == KERNEL or name not in tables or entry.variant_of not in tables:
            continue  # a kernel has its own answers; an unread file has its own error
        rel, table = tables[name]
        for problem in paired_field_problems(tables[entry.variant_of][1], table, fields):
            report.error(
                "pairing",
                rel,
                "rows",
                f"every row's key fields, p_value and ground_truth equal to its original's ({entry.variant_of})",
                problem,
            )
