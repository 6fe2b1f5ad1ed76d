"""The domain core never imports dagster; only the Dagster glue does. The Docker plumbing
(docker_engine) imports nothing above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import traj2env_assets

PACKAGE = Path(traj2env_assets.__file__).parent
# The Dagster glue: asset, sensor and resource modules, the code location, and the CLI
# (which drives an in-process Dagster run).
DAGSTER_MODULES = {"defs", "definitions.py", "cli.py"}


def _core_modules() -> list[Path]:
    return [path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in DAGSTER_MODULES]


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level > 0
            and node.module
            and node.module.split(".")[0] in {"defs", "definitions", "cli"}
        ):
            roots.add("traj2env_assets.defs")
    return roots


def test_core_modules_exist() -> None:
    assert len(_core_modules()) >= 3


def test_core_never_imports_dagster() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(roots & {"dagster", "dagster_docker", "dagster_webserver"})
        for path in _core_modules()
        if (roots := _imported_roots(path)) & {"dagster", "dagster_docker", "dagster_webserver"}
    }
    assert offenders == {}


def test_core_never_imports_the_dagster_glue() -> None:
    offenders = []
    for path in _core_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and (
                    node.module.startswith("traj2env_assets.defs")
                    or node.module in {"traj2env_assets.definitions", "traj2env_assets.cli"}
                )
            ):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


# docker_engine is the Docker plumbing the rest builds on: it imports itself, run_locks and
# conventions (standard-library-only modules), nothing of verification, harbor, families or lifecycle.
PLUMBING_IMPORTS = ("traj2env_assets.docker_engine", "traj2env_assets.run_locks", "traj2env_assets.conventions")


def _package_imports(path: Path) -> set[str]:
    """The modules of this package that ``path`` imports (absolute imports only: the package uses no others)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, f"{path}: relative import"
            if node.module == "traj2env_assets":
                modules.update(f"traj2env_assets.{alias.name}" for alias in node.names)
            modules.add(node.module)
    return {module for module in modules if module.startswith("traj2env_assets.")}


def _outside(modules: set[str], allowed: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if not any(m == a or m.startswith(f"{a}.") for a in allowed))


def test_docker_engine_imports_only_plumbing() -> None:
    plumbing = sorted((PACKAGE / "docker_engine").rglob("*.py"))
    assert len(plumbing) >= 5
    offenders = {
        str(path.relative_to(PACKAGE)): outside
        for path in plumbing
        if (outside := _outside(_package_imports(path), PLUMBING_IMPORTS))
    }
    assert offenders == {}


@pytest.mark.parametrize("leaf", ["run_locks.py", "conventions.py"])
def test_leaf_modules_import_nothing_of_the_package(leaf: str) -> None:
    assert _package_imports(PACKAGE / leaf) == set()
