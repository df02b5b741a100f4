"""Peak memory of `mathbode-validate` on a large file of junk lines: it must not grow with the errors.

python benchmarks/bench_memory.py [--mb 500]

Writes a file of mixed junk (lines that are not JSON, objects missing every field, a family
misspelt) of the given size, validates it, and prints the time and the peak RSS beside the
peak for a file a tenth of the size: the two peaks should be about equal (the counts grow, the
kept examples do not). Target: under 500 MB for the 500 MB file.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from common import command, peak_rss_mb

JUNK = (b'{"family": "linear_solv", "question_id": 0}\n', b"not json at all, line of junk\n", b'{"x": [1, 2, 3]}\n')


def write_junk(path: Path, megabytes: float) -> int:
    block = b"".join(JUNK) * 2000
    target = int(megabytes * 1e6)
    with open(path, "wb") as f:
        written = 0
        while written < target:
            f.write(block)
            written += len(block)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=500.0)
    args = parser.parse_args()
    validate = command("mathbode-validate")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (args.mb / 10, args.mb):
            path = Path(tmp) / f"junk-{mb:g}.jsonl"
            size = write_junk(path, mb)
            seconds, peak = peak_rss_mb([validate, str(path)], ok_codes=(1,))
            verdict = "" if mb != args.mb else f"; target < 500 MB: {'met' if peak < 500 else 'NOT met'}"
            figures = f"{seconds:.1f} s, peak RSS {peak:.0f} MB{verdict}"
            print(f"mathbode-validate on {size / 1e6:.0f} MB of junk lines: {figures}")
            path.unlink()


if __name__ == "__main__":
    main()
