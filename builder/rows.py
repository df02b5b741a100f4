"""One family's rows as an Arrow table: prompts and exact ground truth over the signal grid.

Pure: no file or network I/O. The sweeps come from the layout contract; each sweep's p values
are computed exactly (see `signals`), rounded to the family's decimals, rendered into the
prompt, and the exact answer at that rendered value becomes the ground truth.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Sequence

import pyarrow as pa

from mathbode.core.arrow_columns import table_from_lists
from mathbode.schema.drives import MULTISINE, TWO_TONE
from mathbode.schema.layout import CHIRP, SINUSOID, STEP, Layout, Sweep, layout

from . import signals
from .families import Family


def sweep_unit(sweep: Sweep, lay: Layout) -> tuple[Sequence[Decimal], Sequence[float | None]]:
    """The unit-amplitude drive of a sweep and its per-step `frequency_cycles` column."""
    T = lay.time_steps
    if sweep.signal_type == SINUSOID:
        return signals.sinusoid_unit(sweep.frequency_cycles, sweep.phase_deg, T), [sweep.frequency_cycles] * T
    if sweep.signal_type == CHIRP:
        return (
            signals.chirp_unit(lay.chirp_start_cycles, lay.chirp_end_cycles, T),
            signals.chirp_frequencies(lay.chirp_start_cycles, lay.chirp_end_cycles, T),
        )
    if sweep.signal_type == STEP:
        return signals.step_unit(lay.step_switch, T), [None] * T
    # A multi-tone sweep's frequency_cycles column holds its period (see schema/drives.py).
    if sweep.signal_type == MULTISINE:
        return signals.multisine_unit(lay.multitone, int(sweep.phase_deg or 0)), [sweep.frequency_cycles] * T
    if sweep.signal_type == TWO_TONE:
        return signals.two_tone_unit(lay.multitone), [sweep.frequency_cycles] * T
    raise ValueError(f"unknown signal type {sweep.signal_type!r}")


def sweep_p_values(family: Family, sweep: Sweep, unit: Sequence[Decimal]) -> list[Decimal]:
    """The rendered (rounded) p values of one sweep with unit-amplitude drive `unit`, as exact decimals."""
    raw = signals.drive(unit, family.p_center, family.eps, sweep.amplitude_scale, family.p_bounds)
    return signals.quantize(raw, family.decimals)


def family_table(family: Family, lay: Layout | None = None, sweeps: Sequence[Sweep] | None = None) -> pa.Table:
    """All rows of `family` in canonical order, with the layout's exact Arrow schema (`sweeps`:
    only these of each question, see `family_columns`)."""
    lay = lay or layout()
    return table_from_lists(family_columns(family, lay, sweeps), lay.arrow_schema)


def family_columns(family: Family, lay: Layout | None = None, sweeps: Sequence[Sweep] | None = None) -> dict[str, list]:
    """All rows of `family` in canonical order, as Python lists per column (see `family_table`);
    with `sweeps`, only those of each question, the rows of the full table that hold them (what
    PAIRED asks of a release of many problems, made without its other 48 sweeps a problem)."""
    lay = lay or layout()
    T = lay.time_steps
    instruction = lay.answer_instruction()
    cols: dict[str, list] = {name: [] for name in lay.column_names}
    sweeps = lay.sweeps() if sweeps is None else tuple(s for s in lay.sweeps() if s in sweeps)
    # The drive does not depend on the question, so each sweep's p values are computed once.
    units = {sweep: sweep_unit(sweep, lay) for sweep in sweeps}
    p_by_sweep = {sweep: sweep_p_values(family, sweep, unit) for sweep, (unit, _) in units.items()}
    for q in lay.question_ids:
        answer = family.answer_function(q)
        truth_cache: dict[Decimal, float] = {}
        prompt_cache: dict[Decimal, str] = {}
        for sweep in sweeps:
            p_values = p_by_sweep[sweep]
            cols["family"] += [family.name] * T
            cols["question_id"] += [q] * T
            cols["signal_type"] += [sweep.signal_type] * T
            cols["amplitude_scale"] += [sweep.amplitude_scale] * T
            cols["frequency_cycles"] += units[sweep][1]
            cols["phase_deg"] += [sweep.phase_deg] * T
            cols["time_step"] += range(T)
            for p in p_values:
                if p not in truth_cache:
                    truth_cache[p] = answer.float_at(Fraction(p))
                    prompt_cache[p] = f"{family.render(q, str(p))}\n\n{instruction}"
                cols["p_value"].append(float(p))
                cols["prompt"].append(prompt_cache[p])
                cols["ground_truth"].append(truth_cache[p])
    return cols
