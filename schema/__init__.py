"""The MathBode contract: layout facts, JSON Schemas, typed keys and manifest, and the validators.

Names are loaded on first use (PEP 562): checking a submission needs neither the release
validator nor its YAML and hashing imports, and a command's start-up time is its users' time.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_WHERE = {
    "MathBodeError": "mathbode.core.errors",
    "UnknownNameError": "mathbode.core.errors",
    "UsageError": "mathbode.core.errors",
    "content_hash": "mathbode.core.hashing",
    "validate_dataset": ".dataset",
    "RowKey": ".keys",
    "SweepKey": ".keys",
    "Manifest": ".manifest",
    "Problem": ".report",
    "Report": ".report",
    "Prediction": ".answers",
    "Submission": ".submission",
    "read_submission": ".submission",
    "validate_submission": ".submission",
    "validate_path": ".validate",
}

# Eager: the `layout` function shares its name with its module, and importing a submodule binds
# the submodule's name on the package: loaded lazily, `mathbode.schema.layout` would be the module.
from .layout import CHIRP, SINUSOID, STEP, Layout, Preset, Sweep, layout  # noqa: E402

__all__ = [
    "CHIRP",
    "SINUSOID",
    "STEP",
    "Layout",
    "Manifest",
    "MathBodeError",
    "Prediction",
    "Preset",
    "Problem",
    "Report",
    "RowKey",
    "Submission",
    "Sweep",
    "SweepKey",
    "UnknownNameError",
    "UsageError",
    "content_hash",
    "layout",
    "read_submission",
    "validate_dataset",
    "validate_path",
    "validate_submission",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where, __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from mathbode.core.errors import MathBodeError, UnknownNameError, UsageError
    from mathbode.core.hashing import content_hash

    from .answers import Prediction
    from .dataset import validate_dataset
    from .keys import RowKey, SweepKey
    from .manifest import Manifest
    from .report import Problem, Report
    from .submission import Submission, read_submission, validate_submission
    from .validate import validate_path
