"""docs/internals.md's map from each room and module to the test files that import it, made again
from the tests' imports and compared with the page: a test added or moved, or a module added,
changes the map, and this test fails until the page says so.

`python tests/test_test_map.py` writes the section again (between its two marker comments)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs/internals.md"
#: The rooms in the order of the layout table; each folder imports as `mathbode.<folder>`.
ROOMS = ("core", "schema", "cards", "builder", "hub", "evaluator", "runner", "integrations", "cli")
BEGIN = "<!-- test map: begin (made by tests/test_test_map.py from the tests' imports) -->"
END = "<!-- test map: end -->"


def our_modules() -> set[str]:
    """Every module and package of the rooms, as `room.path` (without the `mathbode.` prefix)."""
    found = set()
    for room in ROOMS:
        for path in (ROOT / room).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def imported(path: Path, modules: set[str]) -> set[str]:
    """The modules of ours a test file imports, at its top or inside a test: `from mathbode.a.b
    import c` counts `a.b`, and `a.b.c` too when `c` is a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name.removeprefix("mathbode.") for name in names} & modules
    return found


def importers_by_module() -> dict[str, list[str]]:
    """Module -> the test files (their names without `.py`) that import it, for every module of ours."""
    modules = our_modules()
    users: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for module in imported(path, modules):
            users[module].append(path.stem)
    return {module: users.get(module, []) for module in sorted(modules)}


def section() -> str:
    """The page's section: per room, how many test files import any of it, then each module a test
    imports with those files; the modules no test imports, listed after."""
    mapping = importers_by_module()
    lines = [
        BEGIN,
        "",
        "| room or module | test files that import it |",
        "|---|---|",
    ]
    untested: dict[str, list[str]] = {}
    for room in ROOMS:
        mine = {m: files for m, files in mapping.items() if m == room or m.startswith(room + ".")}
        files = sorted({f for names in mine.values() for f in names})
        lines.append(f"| **`{room}`** | {len(files)} files |")
        lines += [f"| `{m}` | {', '.join(f'`{f}`' for f in names)} |" for m, names in mine.items() if names]
        untested[room] = [m for m, names in mine.items() if not names]
    lines += ["", "Imported by no test file (reached through the commands and the modules above):", ""]
    lines += [f"- `{room}`: {', '.join(f'`{m}`' for m in names)}" for room, names in untested.items() if names]
    return "\n".join([*lines, "", END])


def _page_section(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def test_the_internals_page_maps_every_module_to_the_tests_that_import_it():
    shown = _page_section(PAGE.read_text(encoding="utf-8"))
    assert shown == section(), "docs/internals.md's test map is stale: run `python tests/test_test_map.py`"


def test_the_map_reads_imports_at_the_top_and_inside_tests(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "from mathbode.schema import layout\n"
        "import mathbode.core.atomic\n"
        "from .fixtures import stub\n"
        "def test_x():\n"
        "    from mathbode.builder.release import build_release\n"
    )
    modules = {"schema", "schema.layout", "core.atomic", "builder.release", "builder"}
    assert imported(sample, modules) == {"schema", "schema.layout", "core.atomic", "builder.release"}


if __name__ == "__main__":
    text = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(text.replace(_page_section(text), section()), encoding="utf-8")
    print(f"{PAGE}: test map written")
