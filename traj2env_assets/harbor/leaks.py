"""Sibling leaks: a test one task hides that another task of the dataset shows its agent.

A build task's hidden tests are often, verbatim, the tests a repair task from the same
session shows in its workspace; an extend task's new tests are in the base of the next
request's task. A test is compared by its body (``ast``, so formatting, comments, its name
and decorators do not matter); bodies too small to mean anything are left out. Hidden:
the test functions under a task's ``tests/traj2env/restore/``. Shown: every function in
its ``environment/workspace/`` and in its ``instruction.md``'s code.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from traj2env_assets.layout import TaskLayout

# A body shorter than this (``pass``, ``assert True``) says nothing about a test.
MIN_BODY_CHARS = 24


def _functions(source: str) -> Iterable[ast.FunctionDef | ast.AsyncFunctionDef]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def _fingerprint(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    body = ast.Module(body=node.body, type_ignores=[])
    if len(ast.unparse(body)) < MIN_BODY_CHARS:
        return None
    return hashlib.sha256(ast.dump(body).encode()).hexdigest()


def _python_files(root: Path) -> Iterable[Path]:
    return sorted(path for path in root.rglob("*.py") if path.is_file()) if root.is_dir() else []


class TaskTests(BaseModel):
    """One task's tests by fingerprint: hidden (fingerprint -> test id) and shown."""

    task_id: str
    hidden: dict[str, str] = Field(default_factory=dict)
    shown: set[str] = Field(default_factory=set)


def task_tests(task_dir: Path) -> TaskTests:
    layout = TaskLayout(task_dir)
    hidden: dict[str, str] = {}
    restore = layout.restore_dir
    for path in _python_files(restore):
        for node in _functions(path.read_text(encoding="utf-8", errors="replace")):
            if node.name.startswith("test") and (key := _fingerprint(node)):
                hidden.setdefault(key, f"{path.relative_to(restore).as_posix()}::{node.name}")
    shown: set[str] = set()
    sources = [path.read_text(encoding="utf-8", errors="replace") for path in _python_files(layout.shown_workspace_dir)]
    instruction = layout.instruction_path
    if instruction.is_file():
        sources += instruction.read_text(encoding="utf-8", errors="replace").split("```")[1::2]
    for source in sources:
        shown.update(key for node in _functions(source) if (key := _fingerprint(node)))
    # A test the task shows its own agent (an existing test an extend request kept) is not hidden.
    hidden = {key: test for key, test in hidden.items() if key not in shown}
    return TaskTests(task_id=task_dir.name, hidden=hidden, shown=shown)


def hidden_and_shown_elsewhere(task: TaskTests, others: Iterable[TaskTests]) -> list[str]:
    """Each test ``task`` hides that another task shows."""
    return sorted(
        f"{test} (hidden here) is shown by {other.task_id}"
        for other in others
        for key, test in task.hidden.items()
        if key in other.shown
    )


def shown_and_hidden_elsewhere(task: TaskTests, others: Iterable[TaskTests]) -> list[str]:
    """Each test another task hides that ``task`` shows."""
    return sorted(
        f"{test} (hidden by {other.task_id}) is shown here"
        for other in others
        for key, test in other.hidden.items()
        if key in task.shown
    )


def leaks_between(task: TaskTests, others: Iterable[TaskTests]) -> list[str]:
    """Both kinds of leak between ``task`` and ``others``."""
    others = list(others)
    return sorted([*hidden_and_shown_elsewhere(task, others), *shown_and_hidden_elsewhere(task, others)])
