"""Which files of a fix configure the check (``fix_changes_check_config``) and which are its
tests (the task then takes the session's final tests, SWE-bench style: see ``task``)."""

from __future__ import annotations

import json
import posixpath
import tomllib
from collections.abc import Mapping

from traj2env_assets.checks import CheckCommand
from traj2env_assets.conventions import is_check_config_name, is_test_path

# Sections of pyproject.toml that configure checks (not dependencies or metadata).
PYPROJECT_CHECK_TABLES = ("pytest", "ruff", "mypy", "coverage", "tox", "pyright", "unittest")
# Keys of package.json that change how npm scripts and test runners behave.
PACKAGE_JSON_CHECK_KEYS = ("scripts", "jest", "mocha", "eslintConfig", "ava", "c8", "nyc", "type")


def _pyproject_check_tables(text: str | None) -> object:
    if text is None:
        return None
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return ("unparseable", text)
    return {name: tool.get(name) for name in PYPROJECT_CHECK_TABLES}


def _package_json_check_keys(text: str | None) -> object:
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return ("unparseable", text)
    return {key: data.get(key) for key in PACKAGE_JSON_CHECK_KEYS} if isinstance(data, dict) else ("not-object", text)


def is_test_file(path: str, check: CheckCommand, cwd: str = "") -> bool:
    """A test file of a test check: a test path, or a file the check names as a target
    (``pytest checks/verify.py``; ``cwd`` is the check's directory). Other files under a
    targeted directory are code (``pytest src/`` runs tests inside the package)."""
    if check.kind != "tests":
        return False
    targets = {posixpath.normpath(posixpath.join(cwd, target.split("::", 1)[0])) for target in check.targets}
    return path in targets or is_test_path(path)


def config_changes(
    check: CheckCommand, before: Mapping[str, str], changed_paths: list[str], after: Mapping[str, str]
) -> list[str]:
    """The changed paths that configure the check (empty: the fix leaves its configuration alone)."""
    offending: list[str] = []
    for path in changed_paths:
        name = posixpath.basename(path)
        if name == "pyproject.toml":
            if _pyproject_check_tables(before.get(path)) != _pyproject_check_tables(after.get(path)):
                offending.append(path)
        elif name == "package.json":
            if _package_json_check_keys(before.get(path)) != _package_json_check_keys(after.get(path)):
                offending.append(path)
        elif is_check_config_name(name):
            offending.append(path)
    return offending


def changed_tests(check: CheckCommand, cwd: str, changed_paths: list[str]) -> list[str]:
    """The changed paths that are the check's tests or test support (fixtures, data)."""
    return [path for path in changed_paths if is_test_file(path, check, cwd)]
