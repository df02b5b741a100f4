"""The functions MathBode's lm-evaluation-harness task files name (lm-eval imports this file by path)."""

from mathbode.integrations.harness import (  # noqa: F401
    compliance,
    gain_err_4,
    gain_err_8,
    load_rows,
    mb_core,
    mb_core_calibrated,
    mb_plus,
    mb_plus_calibrated,
    phase_abs_deg_4,
    phase_abs_deg_8,
    process_results,
)
