"""Families defined in a Python file that is not installed (`mathbode family check FILE.py`).

A family author writes one module and checks it before packaging it. The file is imported under
a private module name; its families are its `FAMILIES` (a sequence), else its `FAMILY`, else
every `Family` it defines at top level, in definition order.
"""

from __future__ import annotations

import importlib.util
import stat
import sys
import traceback
from pathlib import Path

from mathbode.core.bounds import OutOfTime, UserInterrupt, error_text, time_bound
from mathbode.core.errors import UsageError

from .family import Family
from .plugins import IMPORT_SECONDS


def families_from_file(path: str | Path, seconds: float = IMPORT_SECONDS) -> list[Family]:
    """The families a Python file defines; a file that cannot be imported (or whose import runs
    past `seconds`, or exits) is a message naming it."""
    path = Path(path)
    try:
        mode = path.lstat().st_mode
    except OSError as err:
        raise UsageError(f"{path}: {err.strerror or err}. Give a family's name or a .py file.") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{path} is not a regular file (a link, folder or pipe is never imported). Give a .py file.")
    name = f"_mathbode_family_file_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path} cannot be imported as a Python module: give a .py file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and sympy look modules up by name while they run
    try:
        with time_bound(seconds):
            spec.loader.exec_module(module)
    except OutOfTime:
        raise UsageError(
            f"{path} did not finish importing within {seconds:g} s (a loop or a wait at import): a family file "
            "should only define its families. Fix the file."
        ) from None
    except UserInterrupt:  # the user's Ctrl-C stops the command as always
        raise
    except BaseException as err:  # SystemExit and KeyboardInterrupt too: the file cannot stop the command
        last = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
        at = f" (at {last.filename}:{last.lineno})" if last else ""
        said = f"{type(err).__name__}: {error_text(err)}{at}"
        raise UsageError(f"{path} fails to import: {said}. Fix the file.") from None
    finally:
        sys.modules.pop(name, None)
    declared = getattr(module, "FAMILIES", None)
    if declared is None and isinstance(getattr(module, "FAMILY", None), Family):
        declared = [module.FAMILY]
    if declared is None:
        declared = [v for v in vars(module).values() if isinstance(v, Family)]
    families = [f for f in declared if isinstance(f, Family)]
    if not families or len(families) != len(list(declared)):
        raise UsageError(
            f"{path} defines no mathbode Family: define FAMILY = Family(...), or FAMILIES = (Family(...), ...)."
        )
    return families
