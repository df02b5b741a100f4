"""The card's YAML metadata (configs, dataset_info, ...) derived from a build's manifest."""

from __future__ import annotations

from typing import Any

from mathbode.schema.layout import layout
from mathbode.schema.manifest import Manifest

# Arrow type names -> the `datasets` feature dtypes the Hub expects in `dataset_info`.
_HF_DTYPES = {"string": "string", "int64": "int64", "double": "float64"}
ALL_CONFIG = "all"


def size_category(num_rows: int) -> str:
    """The Hub's `size_categories` bucket for a row count."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for bound, label in bounds:
        if num_rows < bound:
            return label
    return "1M<n<10M"


def _features(prompts_only: bool = False) -> list[dict[str, str]]:
    fields = [f for f in layout().arrow_schema if not (prompts_only and f.name == "ground_truth")]
    return [{"name": f.name, "dtype": _HF_DTYPES[str(f.type)]} for f in fields]


def _config_info(name: str, files: list[str], manifest: Manifest) -> dict[str, Any]:
    info = manifest.files
    num_rows = sum(info[f].num_rows or 0 for f in files)
    num_bytes = sum(info[f].arrow_bytes or 0 for f in files)
    download = sum(info[f].num_bytes for f in files)
    return {
        "config_name": name,
        "features": _features(manifest.prompts_only),
        "splits": [{"name": "train", "num_bytes": num_bytes, "num_examples": num_rows}],
        "download_size": download,
        "dataset_size": num_bytes,
    }


def card_metadata(manifest: Manifest, all_config: bool = True) -> dict[str, Any]:
    """Hub metadata: one config per family plus a default `all` config over every file.

    Without `all_config` (a per-family repository) the single family's config is the default.
    """
    family_files = {name: list(fam.files) for name, fam in manifest.families.items()}
    every_file = [f for files in family_files.values() for f in files]
    configs: list[dict[str, Any]] = [
        {"config_name": name, "data_files": [{"split": "train", "path": files}]} for name, files in family_files.items()
    ]
    infos = [_config_info(name, files, manifest) for name, files in family_files.items()]
    if all_config:
        configs.insert(
            0, {"config_name": ALL_CONFIG, "data_files": [{"split": "train", "path": every_file}], "default": True}
        )
        infos.insert(0, _config_info(ALL_CONFIG, every_file, manifest))
    elif len(configs) == 1:
        configs[0]["default"] = True
    return {
        "license": "apache-2.0",
        "pretty_name": manifest.name,
        "language": ["en"],
        "task_categories": ["question-answering"],
        "tags": ["math", "reasoning", "evaluation", "frequency-response", "bode-plot", "synthetic"],
        "size_categories": [size_category(manifest.num_rows)],
        "configs": configs,
        "dataset_info": infos,
    }
