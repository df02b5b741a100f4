"""Benchmark what importing plugins in a bounded child process costs a command.

    python benchmarks/bench_plugin_child.py [--repeat 5]

The test fixture `tests/fixtures/acme_plugin` (three families: rational, algebraic,
transcendental) is laid out as an installed package (its module and a `.dist-info` naming its
entry point) on PYTHONPATH, and two commands are timed, each two ways, turn about, in fresh
interpreters, median of `--repeat`:

- `mathbode families` (every family, the plugin's included) and `mathbode-build --families 'acme.*'`;
- **child**: the commands as shipped (the plugin imported in a child process, its families sent
  back as data and rebuilt);
- **in process**: the same commands with the registry's plugin loader replaced by the way it
  worked before (the entry point imported in the command's own process, its `Family` objects
  used as they are): that loader lives here, in `IN_PROCESS`, not in the package.

Also timed in one process: `load_plugins()` alone (the child's start, import, definition checks
and the data's way back). Prints figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import cached_bytecode_env

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "acme_plugin" / "acme_families"

#: Today's path before the child: the plugin imported in this process (no bound, no checks).
IN_PROCESS = """
from importlib.metadata import entry_points

from mathbode.builder import families as registry
from mathbode.builder.families.plugins import GROUP, Plugins, namespace_of, namespaced


def in_process():
    families, packages = {}, {}
    for ep in entry_points(group=GROUP):
        namespace, package = namespace_of(ep.name), f"{ep.dist.name} {ep.dist.version}"
        for family in ep.load().FAMILIES:
            family = namespaced(family, namespace, package)
            families[family.name] = family
        packages[namespace] = package
    return Plugins(families, (), packages)


registry.plugins = in_process
"""
RUN = "import sys\nfrom mathbode.cli.{module} import main\nmain(sys.argv[1:])\n"


def lay_out_plugin(root: Path) -> None:
    shutil.copytree(FIXTURE, root / "acme_families")
    info = root / "acme_families-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-families\nVersion: 0.3.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[mathbode.families]\nacme = acme_families\n", encoding="utf-8")


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lay_out_plugin(root)
        env = {**cached_bytecode_env(), "PYTHONPATH": str(root)}
        commands = {
            "families": ("families", []),
            "build acme.*": ("build", ["--families", "acme.*", "--out", "out", "-q"]),
        }
        times: dict[tuple[str, str], list[float]] = {}
        for run in range(args.repeat + 1):  # the first round writes the bytecode caches: not counted
            for label, (module, argv) in commands.items():
                for way, prefix in (("child", ""), ("in process", IN_PROCESS)):
                    shutil.rmtree(root / "out", ignore_errors=True)
                    code = prefix + RUN.format(module=module)
                    seconds = timed([sys.executable, "-c", code, *argv], env, root)
                    if run:
                        times.setdefault((label, way), []).append(seconds)
        for label in commands:
            child, inside = (statistics.median(times[(label, way)]) for way in ("child", "in process"))
            print(
                f"mathbode {label}: child {child:.3f} s, in process {inside:.3f} s (median of {args.repeat}): "
                f"+{child - inside:.3f} s, {child / inside:.2f}x"
            )
        sys.path.insert(0, str(root))
        os.environ["PYTHONPATH"] = str(root)
        from mathbode.builder.families.plugins import load_plugins

        loads = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            assert len(load_plugins().families) == 3
            loads.append(time.perf_counter() - start)
        print(
            "load_plugins() alone (one child: start, import, checks, data back): "
            f"median {statistics.median(loads):.3f} s"
        )


if __name__ == "__main__":
    sys.exit(main())
