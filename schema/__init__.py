"""The MathBode contract: the layout facts, JSON Schemas and the validators that apply them."""

from .dataset import validate_dataset
from .errors import MathBodeError, UnknownNameError, UsageError
from .hashing import content_hash
from .layout import CHIRP, SINUSOID, STEP, Layout, Preset, Sweep, layout
from .report import Problem, Report
from .submission import Prediction, Submission, read_submission, validate_submission
from .validate import validate_path

__all__ = [
    "CHIRP",
    "SINUSOID",
    "STEP",
    "Layout",
    "MathBodeError",
    "Prediction",
    "Preset",
    "Problem",
    "Report",
    "Submission",
    "Sweep",
    "UnknownNameError",
    "UsageError",
    "content_hash",
    "layout",
    "read_submission",
    "validate_dataset",
    "validate_path",
    "validate_submission",
]
