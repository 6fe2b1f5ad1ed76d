"""What an agent can see of a task, parsed once: the instruction and ``environment/workspace``.

Nothing here opens ``tests/`` or ``solution/`` of a task. The sibling helpers read other
tasks' ``environment/workspace`` (what an agent of *those* tasks sees), for the
sibling-leak class.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

FAMILIES = ("repair-pytest", "repair-unittest", "build", "extend")

_TASK_ID = re.compile(r"^(?P<session>.+?)-(?:build|extend-\d+|[0-9a-f]{12})$")
_COMMAND = re.compile(r"When I run `(?P<command>[^`]+)` in `(?P<cwd>[^`]+)`")
_FAILING = re.compile(r"^- `(?P<id>[^`]+)`\s*$", re.MULTILINE)


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (
        any(part in ("tests", "test", "testing") for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


@dataclass(frozen=True)
class ContractFunction:
    name: str
    params: tuple[str, ...]  # positional parameter names (self included for methods)
    returns: str | None  # the annotation's text, if any


@dataclass
class ContractModule:
    path: str  # workspace-relative file path, e.g. "romans/convert.py"
    module: str  # dotted module name
    code: str | None  # build: the contract's stub code block
    functions: dict[str, ContractFunction] = field(default_factory=dict)
    classes: dict[str, dict[str, ContractFunction]] = field(default_factory=dict)


@dataclass
class TaskView:
    task_dir: Path

    @cached_property
    def task_id(self) -> str:
        return self.task_dir.name

    @cached_property
    def session(self) -> str:
        match = _TASK_ID.match(self.task_id)
        return match["session"] if match else self.task_id

    @cached_property
    def instruction(self) -> str:
        return (self.task_dir / "instruction.md").read_text(encoding="utf-8")

    @cached_property
    def workspace(self) -> Path:
        return self.task_dir / "environment" / "workspace"

    @cached_property
    def files(self) -> dict[str, bytes]:
        root = self.workspace
        if not root.is_dir():
            return {}
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }

    def text(self, path: str) -> str:
        return self.files[path].decode("utf-8")

    # -- what kind of task ------------------------------------------------------------

    @cached_property
    def kind(self) -> str:
        if "CONTRACT.md" in self.files and "Hidden tests check the behaviour" in self.instruction:
            return "build"
        if _COMMAND.search(self.instruction):
            return "repair"
        return "extend"

    @cached_property
    def command(self) -> str:
        match = _COMMAND.search(self.instruction)
        return match["command"] if match else "python -m pytest"

    @cached_property
    def runner(self) -> str:
        if self.kind == "repair":
            return "unittest" if "unittest" in self.command else "pytest"
        if any(b"import unittest" in data for path, data in self.files.items() if is_test_path(path)):
            return "unittest"
        return "pytest"

    @cached_property
    def family(self) -> str:
        return f"repair-{self.runner}" if self.kind == "repair" else self.kind

    @cached_property
    def failing_ids(self) -> list[str]:
        if self.kind != "repair":
            return []
        return [match["id"] for match in _FAILING.finditer(self.instruction)]

    @cached_property
    def failing_test_names(self) -> list[str]:
        """The last component of each failing id (pytest ``a.py::T::t`` or unittest ``m.T.t``)."""
        names = []
        for test_id in self.failing_ids:
            last = re.split(r"::|\.", test_id)[-1]
            names.append(last.split("[")[0])
        return names

    # -- files ------------------------------------------------------------------------

    @cached_property
    def test_paths(self) -> list[str]:
        return [p for p in self.files if p.endswith(".py") and is_test_path(p)]

    @cached_property
    def source_paths(self) -> list[str]:
        return [p for p in self.files if p.endswith(".py") and not is_test_path(p)]

    def module_name(self, path: str) -> str:
        parts = list(PurePosixPath(path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)

    def path_of_module(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in self.files:
                return candidate
        return None

    # -- contract ---------------------------------------------------------------------

    @cached_property
    def contract(self) -> list[ContractModule]:
        if self.kind == "build":
            return _build_contract(self.files.get("CONTRACT.md", b"").decode("utf-8") or self.instruction)
        if self.kind == "extend":
            return _extend_contract(self.instruction, self)
        return []

    # -- the names a submission must provide or that the tests use ----------------------

    @cached_property
    def targets(self) -> dict[str, list[str]]:
        """Module path -> public names to wrap (functions and classes)."""
        if self.kind == "repair":
            return self._repair_targets()
        out: dict[str, list[str]] = {}
        for module in self.contract:
            names = [*module.functions, *module.classes]
            if self.kind == "extend":
                existing = self._defined_names(module.path)
                names = [name for name in names if name not in existing]
            if names:
                out[module.path] = names
        return out

    def _defined_names(self, path: str) -> set[str]:
        if path not in self.files:
            return set()
        tree = ast.parse(self.text(path))
        return {
            node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }

    def _repair_targets(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for test_path in self.test_paths:
            try:
                tree = ast.parse(self.text(test_path))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    path = self.path_of_module(node.module)
                    if path and not is_test_path(path):
                        names = out.setdefault(path, [])
                        for alias in node.names:
                            if alias.name == "*":
                                names.extend(sorted(self._public_names(path)))
                            elif alias.name not in names:
                                names.append(alias.name)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        path = self.path_of_module(alias.name)
                        if path and not is_test_path(path):
                            out.setdefault(path, []).extend(
                                n for n in sorted(self._public_names(path)) if n not in out.get(path, [])
                            )
        return out

    def _public_names(self, path: str) -> set[str]:
        return {name for name in self._defined_names(path) if not name.startswith("_")}

    # -- siblings (other tasks of the same session) -------------------------------------

    @cached_property
    def siblings(self) -> list[TaskView]:
        parent = self.task_dir.parent
        out = []
        for other in sorted(parent.iterdir()):
            if other == self.task_dir or not (other / "instruction.md").is_file():
                continue
            view = TaskView(other)
            if view.session == self.session:
                out.append(view)
        return out


def _build_contract(text: str) -> list[ContractModule]:
    modules = []
    pattern = re.compile(
        r"^###\s+`(?P<path>[^`]+)`\s+\(module\s+`(?P<module>[^`]+)`\)\s*\n+```python\n(?P<code>.*?)\n```",
        re.MULTILINE | re.DOTALL,
    )
    for match in pattern.finditer(text):
        module = ContractModule(path=match["path"], module=match["module"], code=match["code"])
        try:
            tree = ast.parse(match["code"])
        except SyntaxError:
            modules.append(module)
            continue
        _collect(tree.body, module)
        modules.append(module)
    return modules


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ContractFunction:
    params = tuple(arg.arg for arg in [*node.args.posonlyargs, *node.args.args])
    returns = ast.unparse(node.returns) if node.returns else None
    return ContractFunction(node.name, params, returns)


def _collect(body: list[ast.stmt], module: ContractModule) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
            module.functions[node.name] = _function(node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            module.classes[node.name] = {
                item.name: _function(item)
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }


def _extend_contract(instruction: str, view: TaskView) -> list[ContractModule]:
    modules: list[ContractModule] = []
    current: ContractModule | None = None
    current_class: str | None = None
    for line in instruction.splitlines():
        file_match = re.match(r"^- `(?P<path>[^`]+\.py)` \((?P<verb>[^)]*)\)", line)
        if file_match:
            path = file_match["path"]
            current = ContractModule(path=path, module=view.module_name(path), code=None)
            modules.append(current)
            current_class = None
            continue
        if current is None:
            continue
        item = re.match(r"^(?P<indent>\s+)- (?:method )?`(?P<sig>[^`]+)`", line)
        if not item:
            continue
        signature = item["sig"].strip()
        if signature.startswith("class "):
            match = re.match(r"class\s+(\w+)", signature)
            assert match is not None, signature
            name = match[1]
            current.classes.setdefault(name, {})
            current_class = name
            continue
        try:
            node = ast.parse(signature + ": ...").body[0]
        except SyntaxError:
            continue
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if "method" in line and current_class:
            current.classes[current_class][node.name] = _function(node)
        else:
            current_class = None
            current.functions[node.name] = _function(node)
    return modules
