"""Does a fix edit the check's own configuration or its tests? (``fix_changes_check_config``)."""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from collections.abc import Mapping

from traj2env_assets.checks import CheckCommand
from traj2env_assets.harbor.task_spec import is_test_path

# Files whose mere change alters how a check runs or what it counts as a failure.
CONFIG_FILE_NAMES = frozenset(
    {
        "pytest.ini", "tox.ini", "setup.cfg", "conftest.py", "noxfile.py", ".coveragerc",
        "mypy.ini", ".mypy.ini", "ruff.toml", ".ruff.toml", ".flake8", "sitecustomize.py",
        "usercustomize.py", ".npmrc", ".babelrc", "babel.config.js", ".eslintignore",
        ".prettierrc", "biome.json", "biome.jsonc", ".mocharc.json", ".mocharc.js",
        ".mocharc.cjs", ".mocharc.yml", ".mocharc.yaml",
    }
)
_CONFIG_PATTERNS = re.compile(
    r"^(tsconfig(\..*)?\.json|jsconfig\.json|\.eslintrc(\..*)?|eslint\.config\..*|"
    r"(jest|vitest|vite)\.config\..*|\.pth)$|\.pth$"
)
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


def is_test_file(path: str, check: CheckCommand) -> bool:
    if check.kind != "tests":
        return False
    if any(path == target.split("::", 1)[0] or path.startswith(target.rstrip("/") + "/") for target in check.targets):
        return True
    return is_test_path(path)


def config_changes(
    check: CheckCommand, before: Mapping[str, str], changed_paths: list[str], after: Mapping[str, str]
) -> list[str]:
    """The changed paths that configure the check or hold its tests (empty: the fix is clean)."""
    offending: list[str] = []
    for path in changed_paths:
        name = posixpath.basename(path)
        if name == "pyproject.toml":
            if _pyproject_check_tables(before.get(path)) != _pyproject_check_tables(after.get(path)):
                offending.append(path)
        elif name == "package.json":
            if _package_json_check_keys(before.get(path)) != _package_json_check_keys(after.get(path)):
                offending.append(path)
        elif name in CONFIG_FILE_NAMES or _CONFIG_PATTERNS.search(name) or is_test_file(path, check):
            offending.append(path)
    return offending
