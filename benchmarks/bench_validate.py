"""Benchmark `mathbode-validate` on the full dist/ and on a full 47,040-line submission.

python benchmarks/bench_validate.py [--repeat 5] [--dist dist]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from common import command, parse_args, time_command, write_full_submission


def main() -> None:
    args = parse_args(__doc__)
    validate = command("mathbode-validate")
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "full.jsonl"
        lines = write_full_submission(args.dist, sub)
        med, runs, peak = time_command([validate, str(args.dist)], args.repeat)
        print(
            f"mathbode-validate {args.dist}: median {med:.3f} s over {args.repeat} runs "
            f"(min {min(runs):.3f}, max {max(runs):.3f}); target <= 2 s"
        )
        med, runs, peak = time_command([validate, str(sub)], args.repeat)
        size = sub.stat().st_size / 1e6
        print(
            f"mathbode-validate full submission ({lines:,} lines, {size:.1f} MB): median {med:.3f} s "
            f"(min {min(runs):.3f}, max {max(runs):.3f}); target <= 2 s"
        )
        print(f"peak RSS of any run: {peak:.0f} MB")


if __name__ == "__main__":
    main()
