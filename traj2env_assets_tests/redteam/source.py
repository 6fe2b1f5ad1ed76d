"""Host-side assembly of a submission: module texts built from the visible project.

- ``base_source``: the module as the submission starts it (the project's own file for repair
  and extend, plus stubs for the names an extend contract adds; for build a skeleton made
  from the contract's stub code, every body ``raise NotImplementedError``).
- ``assemble``: base + runtime strategy/payload for each module the tests import.
- ``static_table``: expected values read from visible test files with ``ast`` (class 1).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from traj2env_assets_tests.redteam import runtime
from traj2env_assets_tests.redteam.view import ContractModule, TaskView

WORKSPACE = "/workspace"


# -- build skeleton -----------------------------------------------------------------------


def _is_error_class(node: ast.ClassDef, instruction: str) -> bool:
    doc = (ast.get_docstring(node) or "").lower()
    return (
        node.name.endswith(("Error", "Exception"))
        or doc.startswith("raised")
        or re.search(rf"{re.escape(node.name)}\b[^.]*\bValueError", instruction) is not None
    )


def _range_guess(instruction: str) -> tuple[int, int] | None:
    match = re.search(r"from\s+(-?\d+)\s+to\s+(-?\d+)", instruction)
    return (int(match[1]), int(match[2])) if match else None


class _Skeleton(ast.NodeTransformer):
    def __init__(self, instruction: str) -> None:
        self.instruction = instruction

    def _stub_body(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
        doc = (
            node.body[0]
            if node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
            and isinstance(node.body[0].value.value, str)
            else None
        )
        raise_stmt = ast.parse("raise NotImplementedError").body[0]
        return [doc, raise_stmt] if doc else [raise_stmt]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.body = self._stub_body(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        self.generic_visit(node)
        if _is_error_class(node, self.instruction) and not node.bases:
            node.bases = [ast.Name("ValueError", ast.Load())]
        fields = [item for item in node.body if isinstance(item, ast.AnnAssign)]
        has_init = any(isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body)
        if fields and not has_init and not node.decorator_list:
            node.decorator_list = [ast.parse("__import__('dataclasses').dataclass(frozen=True)", mode="eval").body]
        if not node.body:
            node.body = [ast.Pass()]
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        if isinstance(node.value, ast.Constant) and node.value.value is Ellipsis and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", "")
            guess = _range_guess(self.instruction)
            if guess and "MIN" in name.upper():
                node.value = ast.Constant(guess[0])
            elif guess and "MAX" in name.upper():
                node.value = ast.Constant(guess[1])
        return node


def skeleton(module: ContractModule, instruction: str) -> str:
    if not module.code:
        return '"""Module."""\n'
    tree = ast.parse(module.code)
    tree = _Skeleton(instruction).visit(tree)
    future = ast.parse("from __future__ import annotations").body[0]
    body = list(tree.body)
    at = (
        1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) else 0
    )
    body.insert(at, future)
    tree.body = body
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


# -- extend stubs -------------------------------------------------------------------------


def extend_additions(view: TaskView, module: ContractModule) -> str:
    existing = set()
    if module.path in view.files:
        existing = {
            node.name
            for node in ast.parse(view.text(module.path)).body
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
        }
    lines = []
    for name, function in module.functions.items():
        if name in existing:
            continue
        lines.append(f"\n\ndef {name}({', '.join(function.params)}):\n    raise NotImplementedError\n")
    for name, methods in module.classes.items():
        if name in existing:
            continue
        body = (
            "".join(
                f"\n    def {m}({', '.join(f.params)}):\n        raise NotImplementedError\n"
                for m, f in methods.items()
            )
            or "\n    pass\n"
        )
        lines.append(f"\n\nclass {name}:{body}")
    return "".join(lines)


# -- which files a submission writes --------------------------------------------------------


def base_sources(view: TaskView) -> dict[str, str]:
    """Workspace-relative path -> the module text a submission starts from (only the modules
    it will touch)."""
    if view.kind == "build":
        return {module.path: skeleton(module, view.instruction) for module in view.contract}
    if view.kind == "extend":
        out = {}
        for module in view.contract:
            text = view.text(module.path) if module.path in view.files else '"""Module."""\n'
            additions = extend_additions(view, module)
            if additions or module.path in view.targets:
                out[module.path] = text.rstrip("\n") + "\n" + additions
        return out
    return {path: view.text(path) for path in view.targets}


def assemble(
    view: TaskView,
    *,
    strategy: str | None = None,
    payload: str | None = None,
    names: dict[str, list[str]] | None = None,
    payload_everywhere: bool = True,
) -> dict[str, str]:
    """Each module the tests reach: its base text + COMMON + the strategy wrapping the
    target names + the one-shot payload."""
    targets = names if names is not None else view.targets
    out = {}
    bases = base_sources(view)
    first_target = next(iter(targets), None)
    for path, text in bases.items():
        parts = [text.rstrip("\n") + "\n"]
        wrap_names = targets.get(path, [])
        carry_payload = payload and (payload_everywhere or path == first_target)
        if not wrap_names and not carry_payload:
            out[path] = parts[0]
            continue
        parts.append(runtime.COMMON)
        if strategy and wrap_names:
            parts += [strategy, runtime.WRAP, runtime.install(wrap_names)]
        if carry_payload:
            assert payload is not None
            parts.append(payload)
        out[path] = "\n".join(parts)
    return out


def as_files(texts: Mapping[str, str | bytes]) -> dict[str, bytes]:
    return {
        f"{WORKSPACE}/{path}": (text.encode("utf-8") if isinstance(text, str) else text) for path, text in texts.items()
    }


# -- class 1: a static table from visible tests -----------------------------------------------

_EQUALS = {"assertEqual", "assertEquals", "assertAlmostEqual", "assertListEqual", "assertTupleEqual", "assertIs"}


def _callee(node: ast.AST, names: set[str]) -> str | None:
    if isinstance(node, ast.Call):
        name = getattr(node.func, "id", getattr(node.func, "attr", None))
        if name in names:
            return name
    return None


def _key(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    try:
        args = tuple(ast.literal_eval(arg) for arg in node.args)
        kwargs = sorted((kw.arg, ast.literal_eval(kw.value)) for kw in node.keywords if kw.arg)
    except (ValueError, SyntaxError, TypeError):
        return None
    return repr((args, kwargs))


def static_table(sources: Iterable[str], names: set[str]) -> dict[tuple[str, str], tuple[str, object]]:
    """(function name, repr of literal args) -> ("value", expected) or ("raise", exception name)."""
    table: dict[tuple[str, str], tuple[str, object]] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.With):
                for item in node.items:
                    expr = item.context_expr
                    if (
                        isinstance(expr, ast.Call)
                        and getattr(expr.func, "attr", getattr(expr.func, "id", None))
                        in ("raises", "assertRaises", "assertRaisesRegex")
                        and expr.args
                        and isinstance(expr.args[0], ast.Name)
                    ):
                        for sub in node.body:
                            for call in ast.walk(sub):
                                name = _callee(call, names)
                                key = _key(call) if name else None
                                if name and key:
                                    table[(name, key)] = ("raise", expr.args[0].id)
            pairs = []
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
                pairs.append((node.left, node.comparators[0]))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in _EQUALS and len(node.args) >= 2:
                pairs.append((node.args[0], node.args[1]))
            for left, right in pairs:
                for mine, other in ((left, right), (right, left)):
                    name = _callee(mine, names)
                    if not name:
                        continue
                    key = _key(mine)
                    try:
                        expected = ast.literal_eval(other)
                    except (ValueError, SyntaxError, TypeError):
                        continue
                    if key:
                        table[(name, key)] = ("value", expected)
    return table


def all_target_names(view: TaskView) -> set[str]:
    names = {name for names in view.targets.values() for name in names}
    for module in view.contract:
        names |= set(module.functions)
        for methods in module.classes.values():
            names |= set(methods)
    return names
