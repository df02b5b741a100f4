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

from mathbode.core.errors import UsageError

from .family import Family


def families_from_file(path: str | Path) -> list[Family]:
    """The families a Python file defines; a file that cannot be imported is a message naming it."""
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
        spec.loader.exec_module(module)
    except Exception as err:
        last = traceback.extract_tb(err.__traceback__)[-1]
        raise UsageError(
            f"{path} fails to import: {type(err).__name__}: {err} (at {last.filename}:{last.lineno}). Fix the file."
        ) from None
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
