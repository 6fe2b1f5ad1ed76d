"""The public surface of a Python project, read with ``ast``: its contract and its stub.

- :func:`recorded_contract`: Markdown listing every public module-level function, class
  (with its public methods) and constant of each module, as signatures with docstrings.
- :func:`stub_files`: the same modules with every function body replaced by its
  docstring and ``raise NotImplementedError``: the same names and signatures, no
  behaviour. Imports, decorators, class attributes and constants whose value is a
  literal stay; any other module-level statement (``if __name__ == "__main__"``, computed
  values) goes.
"""

from __future__ import annotations

import ast
import copy
from pathlib import PurePosixPath

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def _docstring_lines(node: ast.AST, indent: str = "") -> list[str]:
    """The node's docstring as source (triple-quoted, as ``ast.unparse`` writes a module's)."""
    doc = _docstring_node(node)
    return [indent + line for line in ast.unparse(ast.Module(body=doc, type_ignores=[])).splitlines()] if doc else []


def _docstring_node(node: ast.AST) -> list[ast.stmt]:
    body = getattr(node, "body", [])
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return [body[0]]
    return []


def _stubbed_function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.FunctionDef | ast.AsyncFunctionDef:
    stub = copy.copy(node)
    raise_stmt = ast.Raise(exc=ast.Name(id="NotImplementedError", ctx=ast.Load()), cause=None)
    stub.body = [*_docstring_node(node), raise_stmt]
    return stub


def _literal(node: ast.expr | None) -> bool:
    if node is None:
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _stubbed_class(node: ast.ClassDef) -> ast.ClassDef:
    stub = copy.copy(node)
    body: list[ast.stmt] = []
    for child in node.body:
        if isinstance(child, _FUNCTIONS):
            body.append(_stubbed_function(child))
        elif isinstance(child, ast.ClassDef):
            body.append(_stubbed_class(child))
        elif isinstance(child, (ast.Assign, ast.AnnAssign, ast.Pass)) or child in _docstring_node(node):
            body.append(child)
    stub.body = body or [ast.Pass()]
    return stub


def stub_source(source: str) -> str | None:
    """The stub of one module, or None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    body: list[ast.stmt] = [*_docstring_node(tree)]
    for node in tree.body[len(body) :]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif isinstance(node, _FUNCTIONS):
            body.append(_stubbed_function(node))
        elif isinstance(node, ast.ClassDef):
            body.append(_stubbed_class(node))
        elif isinstance(node, ast.Assign | ast.AnnAssign) and _literal(node.value):
            body.append(node)
    return ast.unparse(ast.Module(body=body, type_ignores=[])) + "\n"


def stub_files(sources: dict[str, str]) -> dict[str, str]:
    """Stubs of the modules that parse (a module that does not parse has no stub)."""
    stubs = {path: stub_source(text) for path, text in sorted(sources.items())}
    return {path: stub for path, stub in stubs.items() if stub is not None}


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str) -> list[str]:
    header = copy.copy(node)
    header.body = [*_docstring_node(node), ast.Expr(ast.Constant(...))]
    header.decorator_list = [d for d in node.decorator_list if isinstance(d, ast.Name)]
    return [indent + line for line in ast.unparse(header).splitlines()]


def _class_surface(node: ast.ClassDef) -> list[str]:
    header = copy.copy(node)
    header.body, header.decorator_list = [], [d for d in node.decorator_list if isinstance(d, ast.Name | ast.Call)]
    lines = ast.unparse(header).splitlines()[:-1] or [f"class {node.name}:"]
    lines += _docstring_lines(node, "    ")
    for child in node.body:
        if isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name) and _public(child.target.id):
            lines.append("    " + ast.unparse(child))
        elif isinstance(child, _FUNCTIONS) and _public(child.name):
            lines += _signature(child, "    ")
    return lines


def _module_name(path: str) -> str:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_surface(source: str) -> list[str] | None:
    """The public names of one module as Python signatures (None when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    blocks: list[list[str]] = [_docstring_lines(tree)] if _docstring_node(tree) else []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            blocks.append([ast.unparse(node)])  # a package's re-exports are part of its surface
        elif isinstance(node, _FUNCTIONS) and _public(node.name):
            blocks.append(_signature(node, ""))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            blocks.append(_class_surface(node))
        elif isinstance(node, ast.Assign) and _literal(node.value):
            names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id.isupper() and _public(t.id)]
            if names:
                blocks.append([f"{' = '.join(names)} = ..."])
    return [line for block in blocks for line in [*block, ""]]


def recorded_contract(sources: dict[str, str]) -> str:
    """The interface contract of the project's Python modules, as Markdown."""
    sections = []
    for path, text in sorted(sources.items()):
        surface = module_surface(text)
        if surface is None:
            continue
        module = _module_name(path)
        code = "\n".join(surface).rstrip() or "# (no public names)"
        sections.append(f"### `{path}` (module `{module}`)\n\n```python\n{code}\n```\n")
    return "\n".join(sections)
