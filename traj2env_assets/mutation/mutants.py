"""Mutants of Python source, made with the standard library's ``ast``.

Why our own mutator rather than mutmut or cosmic-ray: both are built to run on the host
against a checkout with their own state (mutmut 3 copies the project into ``mutants/``
and keeps results in its own files; cosmic-ray needs a session database and a config),
and neither can ship into an offline task image that has nothing but the interpreter
and pytest. Generating mutants here and running them in the image with a stdlib-only
runner (``runner.py``) needs no new package anywhere, and the operators are the few the
build and extend families ask for.

Each mutant replaces the source span of one node (``ast`` positions) and leaves every
other byte of the file as it was, so its line number is the original's and a diff of it
is one hunk. Mutants that do not compile, change nothing, or repeat another are dropped.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

Operator = Literal["arithmetic", "comparison", "boolean", "constant", "return_value", "removed_statement"]

_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
}
_COMPARISON: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_BOOLEAN: dict[type[ast.boolop], type[ast.boolop]] = {ast.And: ast.Or, ast.Or: ast.And}


class Mutant(BaseModel):
    """One mutated file. ``id`` is a digest of the path and the mutated source, so the same
    mutant has the same id in every candidate (results can be cached by it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    path: str
    line: int
    operator: Operator
    description: str
    source: str


def _mutated_constant(value: object) -> object | None:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, str):
        return "XX" + value + "XX"
    return None


def _not_mutated(tree: ast.Module) -> set[int]:
    """Nodes whose change means nothing at run time: docstrings, annotations, f-string parts."""
    skipped: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            skipped.update(id(child) for child in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skip(body[0])
        if isinstance(node, ast.arg):
            skip(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip(node.returns)
        elif isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        elif isinstance(node, ast.JoinedStr):
            skip(node)
    return skipped


def _function_statements(tree: ast.Module) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(child) for child in ast.walk(node) if isinstance(child, ast.stmt) and child is not node)
    return inside


def _replacements(tree: ast.Module) -> Iterator[tuple[ast.AST, str, Operator, str]]:
    """(node, replacement source, operator, description) for every mutation point."""
    skipped = _not_mutated(tree)
    in_functions = _function_statements(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            new = ast.BinOp(left=node.left, op=_ARITHMETIC[type(node.op)](), right=node.right)
            yield node, f"({ast.unparse(new)})", "arithmetic", f"{type(node.op).__name__} -> {type(new.op).__name__}"
        elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITHMETIC:
            new_aug = ast.AugAssign(target=node.target, op=_ARITHMETIC[type(node.op)](), value=node.value)
            yield node, ast.unparse(new_aug), "arithmetic", f"{type(node.op).__name__}= -> {type(new_aug.op).__name__}="
        elif isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                if type(op) in _COMPARISON:
                    ops = list(node.ops)
                    ops[index] = _COMPARISON[type(op)]()
                    new_cmp = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                    yield (
                        node,
                        f"({ast.unparse(new_cmp)})",
                        "comparison",
                        f"{type(op).__name__} -> {type(ops[index]).__name__}",
                    )
        elif isinstance(node, ast.BoolOp):
            new_bool = ast.BoolOp(op=_BOOLEAN[type(node.op)](), values=node.values)
            yield (
                node,
                f"({ast.unparse(new_bool)})",
                "boolean",
                f"{type(node.op).__name__} -> {type(new_bool.op).__name__}",
            )
        elif isinstance(node, ast.Constant):
            value = _mutated_constant(node.value)
            if value is not None:
                yield node, repr(value), "constant", f"{node.value!r} -> {value!r}"
        if isinstance(node, ast.Return) and id(node) in in_functions:
            if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                yield node, "return None", "return_value", "return value -> None"
        elif (
            isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Assert, ast.Delete))
            and id(node) in in_functions
        ):
            yield node, "pass", "removed_statement", f"{type(node).__name__} removed"


def _span_replaced(lines: list[bytes], node: ast.AST, replacement: str) -> str:
    """The file with ``node``'s source span (UTF-8 byte columns, as ``ast`` gives them) replaced."""
    start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    head = lines[start][: node.col_offset]  # type: ignore[attr-defined]
    tail = lines[end][node.end_col_offset :]  # type: ignore[attr-defined]
    middle = head + replacement.encode() + tail
    return b"".join([*lines[:start], middle, *lines[end + 1 :]]).decode()


def _compiles(source: str, path: str) -> bool:
    try:
        compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def generate_mutants(files: Mapping[str, str], only_lines: Mapping[str, set[int]] | None = None) -> list[Mutant]:
    """Every mutant of the Python ``files`` ({relative path: source}), in file and source order.

    ``only_lines`` restricts mutation points to the given 1-based lines per path (a path
    absent from it gets no mutants): the extend family mutates changed code only. Files
    that do not parse get no mutants.
    """
    mutants: list[Mutant] = []
    seen: set[str] = set()
    for path in sorted(files):
        if not path.endswith(".py"):
            continue
        original = files[path]
        wanted = None if only_lines is None else only_lines.get(path, set())
        if wanted is not None and not wanted:
            continue
        try:
            tree = ast.parse(original, filename=path)
        except (SyntaxError, ValueError):
            continue
        lines = original.encode().splitlines(keepends=True)
        points = sorted(_replacements(tree), key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]
        for node, replacement, operator, description in points:
            line = node.lineno  # type: ignore[attr-defined]
            if wanted is not None and line not in wanted:
                continue
            source = _span_replaced(lines, node, replacement)
            digest = hashlib.sha256(f"{path}\0{source}".encode()).hexdigest()[:16]
            if source == original or digest in seen or not _compiles(source, path):
                continue
            seen.add(digest)
            mutants.append(
                Mutant(id=digest, path=path, line=line, operator=operator, description=description, source=source)
            )
    return mutants
