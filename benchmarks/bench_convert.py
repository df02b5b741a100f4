"""`mathbode convert` of an inspect-ai log against inspect's own `read_eval_log` of the same file.

The comparison does the same work a user's script would: start Python, import inspect-ai, read
every sample of the log. The two commands alternate (machines here drift by seconds between
runs), and the ratio of their medians is printed. The goal is convert <= 1.5x the reader.

    python benchmarks/bench_convert.py [--log FILE.eval] [--repeat 3]

Without --log, a SMOKE log (1,280 samples) is made first with inspect's mockllm answering the
exact answers (no server).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

READ = "import sys; from inspect_ai.log import read_eval_log; print(len(read_eval_log(sys.argv[1]).samples))"


def make_log(folder: Path) -> Path:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from mathbode.integrations.inspect_tasks import smoke

    task = smoke()
    truth = {s.input: float(s.target) for s in task.dataset}

    def answer(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        text = f"[answer_start] {truth[messages[-1].text]:.6f} [answer_end]"
        return ModelOutput.from_content(model="mockllm/model", content=text)

    model = get_model("mockllm/model", custom_outputs=answer)
    (log,) = inspect_eval(task, model=model, log_dir=str(folder), display="none")
    return Path(log.location)


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = args.log or make_log(Path(tmp) / "logs")
        convert = [str(Path(sys.executable).with_name("mathbode")), "convert", str(log)]
        convert += ["-o", str(Path(tmp) / "p.jsonl"), "--overwrite"]
        reader = [sys.executable, "-c", READ, str(log)]
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(timed(convert))
            theirs.append(timed(reader))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"log: {log.name}")
    print(f"mathbode convert      median {a:6.2f} s  ({', '.join(f'{t:.2f}' for t in ours)})")
    print(f"inspect read_eval_log median {b:6.2f} s  ({', '.join(f'{t:.2f}' for t in theirs)})")
    print(f"ratio convert / read_eval_log: {a / b:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
