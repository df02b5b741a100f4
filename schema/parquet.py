"""Reading parquet files without `pyarrow.dataset`.

`pyarrow.parquet.read_table` goes through `pyarrow.dataset`, whose import pulls in pandas
(about 0.6 s, more than validating a release takes otherwise); a single file needs neither.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def read_parquet(source: str | Path | io.BytesIO) -> pa.Table:
    """One parquet file (a path or a buffer) as an Arrow table."""
    with pq.ParquetFile(source) as file:
        return file.read()
