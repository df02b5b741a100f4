"""Print the folder of MathBode's lm-evaluation-harness task files (for `lm_eval --include_path`)."""

from . import FOLDER

print(FOLDER)
