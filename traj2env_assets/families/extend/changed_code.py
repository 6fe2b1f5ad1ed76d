"""The code request k+1 changed, as the mutation stage sees it: per changed source file,
the reference's lines the base→reference diff inserted or replaced, widened to the whole
of every function (or method) that holds one of them."""

from __future__ import annotations

import ast
import difflib

from traj2env_assets.conventions import is_test_path
from traj2env_assets.families.extend.candidates import ExtendCandidate
from traj2env_assets.mutation import Mutant, generate_mutants


def _diff_lines(before: str, after: str) -> set[int]:
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    return {
        line + 1
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for line in range(j1, j2)
    }


def _widened(source: str, lines: set[int]) -> set[int]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return lines
    widened = set(lines)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            span = set(range(node.lineno, node.end_lineno + 1))
            if span & lines:
                widened |= span
    return widened


def changed_source(candidate: ExtendCandidate) -> dict[str, str]:
    """The reference's changed Python source files (tests aside)."""
    return {
        path: text for path, text in candidate.changed_files.items() if path.endswith(".py") and not is_test_path(path)
    }


def changed_lines(candidate: ExtendCandidate) -> dict[str, set[int]]:
    return {
        path: _widened(text, _diff_lines(candidate.base_files.get(path, ""), text))
        for path, text in changed_source(candidate).items()
    }


def changed_code_mutants(candidate: ExtendCandidate) -> list[Mutant]:
    """Mutants of the changed code only (deterministic: the same candidate, the same list)."""
    return generate_mutants(changed_source(candidate), only_lines=changed_lines(candidate))
