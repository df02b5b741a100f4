"""MathBode's task files for lm-evaluation-harness: give this folder to `lm_eval --include_path`.

`python -m mathbode.integrations.lm_eval_tasks` prints the folder.
"""

from pathlib import Path

#: The folder holding the task files.
FOLDER = Path(__file__).resolve().parent
