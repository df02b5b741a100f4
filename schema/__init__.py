"""The MathBode contract: layout facts, JSON Schemas, typed keys and manifest, and the validators."""

from mathbode.core.errors import MathBodeError, UnknownNameError, UsageError
from mathbode.core.hashing import content_hash

from .dataset import validate_dataset
from .keys import RowKey, SweepKey
from .layout import CHIRP, SINUSOID, STEP, Layout, Preset, Sweep, layout
from .manifest import Manifest
from .report import Problem, Report
from .submission import Prediction, Submission, read_submission, validate_submission
from .validate import validate_path

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
