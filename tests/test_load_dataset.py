"""The release loads with `datasets` offline, by family config and as `all`."""

from __future__ import annotations

import pytest

datasets = pytest.importorskip("datasets")

from mathbode.schema import layout  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def test_each_family_config_loads_its_rows(built, tmp_path):
    cache = str(tmp_path / "cache")
    for family in layout().families:
        train = datasets.load_dataset(str(built), family, cache_dir=cache)["train"]
        assert train.num_rows == 9_408
        assert list(train.features) == list(layout().column_names)
        assert set(train.unique("family")) == {family}


def test_all_config_is_the_default_and_has_every_row(built, tmp_path, tables):
    everything = datasets.load_dataset(str(built), cache_dir=str(tmp_path / "cache"))["train"]
    assert everything.num_rows == 47_040
    first = everything[0]
    assert first == tables["linear_solve"].slice(0, 1).to_pylist()[0]
    assert str(everything.features["frequency_cycles"].dtype) == "float64"
