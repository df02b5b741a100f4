"""Reading parquet files without `pyarrow.dataset`.

`pyarrow.parquet.read_table` goes through `pyarrow.dataset`, whose import pulls in pandas
(about 0.6 s, more than validating a release takes otherwise); a single file needs neither.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

#: No MathBode parquet holds more rows than twice the split (47,040 rows), nor decodes to more
#: bytes than this: a 1.8 MB zstd file that decoded to 4 x 10^8 rows took validate past 3 GB.
MAX_ROWS = 2 * 47_040
MAX_DECODED_BYTES = 512 << 20


def read_parquet(source: str | Path | io.BytesIO) -> pa.Table:
    """One parquet file (a path or a buffer) as an Arrow table; refused (ValueError) from its
    metadata, before any data is read, when it holds more rows or bytes than any MathBode file."""
    # One thread, no pre-buffering: a MathBode file reads in milliseconds either way, and Arrow's
    # reader threads still alive at interpreter exit abort the process ("terminate called without
    # an active exception", exit -6: apache/arrow#34314), seen here once on a refused file.
    with pq.ParquetFile(source, pre_buffer=False) as file:
        meta = file.metadata
        decoded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if meta.num_rows > MAX_ROWS:
            raise ValueError(f"{meta.num_rows:,} rows, more than any MathBode file holds ({MAX_ROWS:,}); not read")
        if decoded > MAX_DECODED_BYTES:
            raise ValueError(f"{decoded:,} bytes once decoded, more than any MathBode file ({MAX_DECODED_BYTES:,})")
        return file.read(use_threads=False)
