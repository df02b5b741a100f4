"""The MathBode contract: the layout facts, JSON Schemas and the validators that apply them."""

from .errors import MathBodeError, UnknownNameError, UsageError
from .hashing import content_hash
from .layout import CHIRP, SINUSOID, STEP, Layout, Preset, Sweep, layout

__all__ = [
    "CHIRP",
    "SINUSOID",
    "STEP",
    "Layout",
    "MathBodeError",
    "Preset",
    "Sweep",
    "UnknownNameError",
    "UsageError",
    "content_hash",
    "layout",
]

from .dataset import validate_dataset  # noqa: E402
from .report import Problem, Report  # noqa: E402
from .submission import Prediction, Submission, read_submission, validate_submission  # noqa: E402
from .validate import validate_path  # noqa: E402

__all__ += [
    "Prediction",
    "Problem",
    "Report",
    "Submission",
    "read_submission",
    "validate_dataset",
    "validate_path",
    "validate_submission",
]
