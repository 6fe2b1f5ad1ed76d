"""pytest test functions of a Python test file, read with ``ast`` (nothing is imported).

A test is a module-level ``test*`` function or a ``test*`` method of a module-level
``Test*`` class without ``__init__`` (pytest's default collection rules). Each comes with
a digest of its source, so a test that request k+1 rewrote counts as new. Parametrized
tests are left out: their pytest ids carry the parameters, which only a collection run
knows, and the verifier tracks exact ids.
"""

from __future__ import annotations

import ast
import hashlib

from traj2env_assets.conventions import is_python_test_module


def _parametrized(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("parametrize" in ast.unparse(decorator) for decorator in node.decorator_list)


def _digest(node: ast.AST) -> str:
    return hashlib.sha256(ast.dump(node, include_attributes=False).encode()).hexdigest()[:16]


def _tests_in(body: list[ast.stmt], prefix: str) -> dict[str, str]:
    tests = {}
    for node in body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test")
            and not _parametrized(node)
        ):
            tests[f"{prefix}::{node.name}"] = _digest(node)
    return tests


def test_functions(path: str, source: str) -> dict[str, str]:
    """``{pytest node id: digest of its source}`` for one test file; empty when it does not parse."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return {}
    tests = _tests_in(module.body, path)
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            has_init = any(isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body)
            if not has_init:
                tests.update(_tests_in(node.body, f"{path}::{node.name}"))
    return tests


def project_tests(files: dict[str, str]) -> dict[str, str]:
    """Every test of a project's Python test files: ``{node id: digest}``."""
    tests: dict[str, str] = {}
    for path in sorted(files):
        if is_python_test_module(path):
            tests.update(test_functions(path, files[path]))
    return tests
