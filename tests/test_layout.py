"""The layout contract: the counts the paper publishes follow from the grid."""

import pytest

from mathbode.schema import UnknownNameError, layout


def test_rows_per_family_and_total_match_the_paper():
    lay = layout()
    assert len(lay.sweeps()) == 49
    assert lay.rows_per_question == 3_136
    assert lay.rows_per_family == 9_408
    assert lay.rows_per_family * len(lay.families) == 47_040
    assert lay.rows_per_signal_type() == {"sinusoid": 8_640, "chirp": 384, "step": 384}


def test_columns_in_contract_order():
    assert layout().column_names == (
        "family",
        "question_id",
        "signal_type",
        "amplitude_scale",
        "frequency_cycles",
        "phase_deg",
        "time_step",
        "p_value",
        "prompt",
        "ground_truth",
    )


@pytest.mark.parametrize(
    "preset, sweeps",
    [("SMOKE", 2 * 2 * 1), ("MVP", 2 * 3 * 1), ("MVP_PLUS", 2 * (3 * 1 + 2 * 3)), ("FULL", 2 * 5 * 3)],
)
def test_preset_sweep_counts(preset, sweeps):
    lay = layout()
    chosen = lay.preset_grid(preset)
    assert len(chosen) == sweeps
    # K = 2 base keys: the first two (question_id, amplitude_scale) pairs in sorted order.
    assert {(q, s.amplitude_scale) for q, s in chosen} == {(0, 0.5), (0, 1.0)}


def test_mvp_plus_uses_three_phases_only_mid_band():
    by_freq = {}
    for _, s in layout().preset_grid("MVP_PLUS"):
        by_freq.setdefault(s.frequency_cycles, set()).add(s.phase_deg)
    assert by_freq == {1.0: {0.0}, 2.0: {0.0}, 4.0: {0.0, 120.0, 240.0}, 8.0: {0.0, 120.0, 240.0}, 16.0: {0.0}}


def test_unknown_preset_names_close_matches():
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown preset 'SMOK'\. Did you mean 'SMOKE'\? Available: SMOKE, MVP, MVP_PLUS, FULL, PAIRED\.",
    ):
        layout().preset("SMOK")
