"""Which test modules can reach a source module through the project's own imports (``ast``).

A mutant then runs only the kept tests of the test modules that import its file, directly
or through other project modules: pytest's per-run cost is mostly collecting and
importing, so this is most of the speed of mutation testing. Imports the analysis cannot
see (``importlib``, ``__import__``, a ``conftest.py`` importing the project) make every
test module count, as does a source module no test module reaches.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath


def _module_name(path: str) -> str:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: index + 1]) for index in range(len(parts))]


def _imported_names(path: str, source: str) -> tuple[set[str], bool]:
    """Module names ``path`` imports (with their parent packages), and whether it imports dynamically."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(), True
    package = _module_name(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    names: set[str] = set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.update(_with_parents(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                prefix = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*prefix, *([base] if base else [])])
            if base:
                names.update(_with_parents(base))
            names.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
        elif isinstance(node, ast.Name) and node.id == "__import__":
            dynamic = True
        elif isinstance(node, ast.Attribute) and node.attr == "import_module":
            dynamic = True
    return names, dynamic


def importing_test_modules(files: Mapping[str, str], test_modules: Iterable[str]) -> dict[str, list[str]] | None:
    """For every Python file of ``files``, the test modules that import it (directly or through
    other files); None when the analysis cannot tell (run every test for every mutant)."""
    by_name: dict[str, str] = {}
    for path in files:
        if path.endswith(".py"):
            by_name[_module_name(path)] = path
    edges: dict[str, set[str]] = {}
    for path, source in files.items():
        if not path.endswith(".py"):
            continue
        names, dynamic = _imported_names(path, source)
        if dynamic or (PurePosixPath(path).name == "conftest.py" and names & by_name.keys()):
            return None
        # A test directory is on sys.path too (pytest's rootdir-relative import mode).
        directory = posixpath.dirname(path).replace("/", ".")
        local = {f"{directory}.{name}" for name in names} if directory else set()
        edges[path] = {by_name[name] for name in names | local if name in by_name}
    reaching: dict[str, list[str]] = {path: [] for path in edges}
    for test in sorted(test_modules):
        seen, stack = {test}, [test]
        while stack:
            for imported in edges.get(stack.pop(), set()):
                if imported not in seen:
                    seen.add(imported)
                    stack.append(imported)
        for path in seen - {test}:
            reaching[path].append(test)
    return reaching
