"""Keep pyarrow from importing pandas in a command that never hands it a pandas object.

On its first conversion (`pa.array` of a list, a column's `to_numpy`, reading a parquet file)
pyarrow asks once per process whether pandas can be imported, so as to recognise pandas objects
among its inputs, and imports it to find out: 0.2-0.5 s, a tenth of scoring a full file. Our
commands give pyarrow lists, numpy arrays and Arrow data only. So before that first question,
`pandas` is made unimportable for one call that makes pyarrow ask: pyarrow records the answer
"absent" and never asks again for its checks; then pandas is importable again as usual, and
pyarrow's own conversions to and from pandas (`to_pandas`, `from_pandas`) import it when called.
Were pyarrow to ask differently in some version, this does nothing and pandas is imported as
before: slower, never wrong.
"""

from __future__ import annotations

import sys


class _NoPandas:
    """A finder on `sys.meta_path` (which needs only `find_spec`: importlib.abc's base class costs 8 ms of imports)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not asked for here", name=name)


def answer_pyarrow_pandas_absent() -> None:
    """Settle pyarrow's one question about pandas as "absent" (nothing to do if pandas is loaded)."""
    if "pandas" in sys.modules:
        return  # already imported: pyarrow's question costs nothing, and it may be given pandas objects
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)  # `import pandas` raises ImportError, for one call
    try:
        pa.array([0])  # pyarrow asks here, once
    finally:
        sys.meta_path.remove(finder)
