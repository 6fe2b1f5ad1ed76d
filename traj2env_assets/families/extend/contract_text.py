"""The recorded contract: the public names request k+1 added or changed, read with ``ast``.

For each changed Python source file (tests aside): every public top-level function and
class (and a class's public methods) that is new or whose code changed, as its signature
and the first line of its docstring. Bodies are never shown.
"""

from __future__ import annotations

import ast

from traj2env_assets.conventions import is_test_path

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definitions(source: str) -> dict[str, Definition] | None:
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    return {node.name: node for node in module.body if isinstance(node, Definition) and not node.name.startswith("_")}


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def _summary(node: Definition) -> str:
    doc = ast.get_docstring(node)
    return f": {doc.strip().splitlines()[0]}" if doc else ""


def _describe(node: Definition, before: Definition | None) -> list[str]:
    if not isinstance(node, ast.ClassDef):
        return [f"`{_signature(node)}`{_summary(node)}"]
    bases = f"({', '.join(ast.unparse(base) for base in node.bases)})" if node.bases else ""
    lines = [f"`class {node.name}{bases}`{_summary(node)}"]
    old_methods = {
        item.name: ast.dump(item)
        for item in (before.body if before else [])
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    for item in node.body:
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        public = not item.name.startswith("_") or item.name == "__init__"
        if public and old_methods.get(item.name) != ast.dump(item):
            lines.append(f"  - method `{_signature(item)}`{_summary(item)}")
    return lines


def recorded_contract(base: dict[str, str], changed: dict[str, str], deleted: list[str]) -> str:
    """Markdown bullet lines, one block per changed source file."""
    blocks = []
    for path in sorted(changed):
        if not path.endswith(".py") or is_test_path(path):
            continue
        new = _definitions(changed[path])
        old = _definitions(base.get(path, "")) or {}
        if new is None:
            blocks.append(f"- `{path}` (changed)")
            continue
        described = [
            line
            for name, node in new.items()
            if name not in old or ast.dump(old[name]) != ast.dump(node)
            for line in _describe(node, old.get(name) if isinstance(old.get(name), ast.ClassDef) else None)
        ]
        verb = "changed" if path in base else "new file"
        blocks.append(f"- `{path}` ({verb})" + "".join(f"\n  - {line}" for line in described))
    blocks += [f"- `{path}` (removed)" for path in sorted(deleted) if path.endswith(".py") and not is_test_path(path)]
    return "\n".join(blocks)
