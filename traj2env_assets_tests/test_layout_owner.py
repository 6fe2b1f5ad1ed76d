"""``layout`` is the one module that spells a workspace or task path.

A module that composes one itself (``root / "cache"``, ``task_dir / "tests"``,
``CACHE_DIR = "cache/trials"``, ``workspace.root / ...``) fails here: it asks a
``Workspace``, ``TaskLayout``, ``CandidateLayout``, ``ReplayLayout``, ``WheelhouseLayout`` or
``QaCacheLayout`` instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

PACKAGE = Path(__file__).resolve().parents[1] / "traj2env_assets"
LAYOUT = PACKAGE / "layout.py"
# Code that runs inside task images or the exported benchmark, where the package's layout
# module is not there to ask (the harness is copied into the bundle with a fixed module list).
STANDALONE = (
    "verification/verifier_files/",
    "verification/control_payloads/",
    "gate/runtime/",
    "mutation/runner.py",
    "trajectory_export/harness.py",
)
# Layouts that are not the workspace's or a task's, though they share a name with them.
OTHER_LAYOUTS = (
    "docker_engine/image_build.py",  # Docker's own name for a build context's Dockerfile
    "trajectory_export/layout.py",  # the exported benchmark bundle's own tree
)
_NAME_SUFFIXES = ("_DIR", "_FILE", "_CACHE")


class _PathLiteral(NamedTuple):
    lineno: int
    value: str


def _path_literals(tree: ast.Module) -> Iterator[_PathLiteral]:
    """String literals used as path parts: an operand of ``/``, an argument of ``Path(...)``,
    or the value of a module-level ``*_DIR``/``*_FILE``/``*_CACHE`` constant."""
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            candidates = [node.left, node.right]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Path":
            candidates = list(node.args)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named = any(isinstance(t, ast.Name) and t.id.endswith(_NAME_SUFFIXES) for t in targets)
            candidates = [node.value] if named and node.value is not None else []
        else:
            continue
        yield from (
            _PathLiteral(c.lineno, c.value)
            for c in candidates
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        )


def layout_names() -> set[str]:
    """Every folder and file name ``layout.py`` spells."""
    tree = ast.parse(LAYOUT.read_text(encoding="utf-8"))
    names = {part for literal in _path_literals(tree) for part in literal.value.split("/") if part}
    for node in tree.body:  # the constants the layout's methods join by name
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            names.add(node.value.value)
    return names


def _modules() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if path != LAYOUT and not relative.startswith(STANDALONE) and relative not in OTHER_LAYOUTS:
            yield path


def _is_workspace_root(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "root" and "workspace" in ast.unparse(node.value).lower()


def composed_paths(source: str, label: str, names: set[str]) -> list[str]:
    """Where ``source`` (labelled ``label``) composes a layout path itself, as ``label:line: code``."""
    tree = ast.parse(source)
    found = [
        f"{label}:{literal.lineno}: {literal.value!r}"
        for literal in _path_literals(tree)
        # Absolute literals are paths inside a container, not on the host.
        if not literal.value.startswith("/") and names & set(literal.value.split("/"))
    ]
    found += [
        f"{label}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_workspace_root(node.left)
    ]
    return found


def test_layout_names_cover_the_workspace_and_the_task() -> None:
    names = layout_names()
    assert {"conversion", "scan", "replay", "candidates", "cache", "dedupe", "wheelhouse"} <= names
    assert {"task.toml", "instruction.md", "environment", "solution", "tests", "traj2env"} <= names


def test_no_module_but_layout_composes_a_workspace_or_task_path() -> None:
    names = layout_names()
    found = [
        line
        for module in _modules()
        for line in composed_paths(
            module.read_text(encoding="utf-8"), module.relative_to(PACKAGE.parent).as_posix(), names
        )
    ]
    assert not found, "ask traj2env_assets.layout for these paths:\n" + "\n".join(found)


def test_the_check_catches_a_composed_path() -> None:
    source = 'CACHE_DIR = "cache/trials"\n\n\ndef f(workspace, task_dir):\n    return workspace.root / "x", task_dir / "tests"\n'
    found = composed_paths(source, "probe.py", layout_names())
    assert sorted(line.split(": ", 1)[1] for line in found) == ["'cache/trials'", "'tests'", "workspace.root / 'x'"]
