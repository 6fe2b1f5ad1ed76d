"""The domain core never imports dagster; only the Dagster modules do: each stage's asset
module (``stages/<stage>/asset.py``), the one glue folder ``defs/`` (resources, jobs,
sensors, partitions, pools, the materialization helpers), the code location and the CLI.
Arrows point down only: the code location imports the asset modules, an asset module the
glue and the domain code, the glue the domain code; the domain code imports neither.
The Docker plumbing (docker_engine) imports nothing above it."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

import traj2env_assets

PACKAGE = Path(traj2env_assets.__file__).parent
GLUE = "defs"
# The code location and the CLI (which drives an in-process Dagster run) sit above the rest.
ROOTS = ("definitions.py", "cli.py")
DAGSTER = {"dagster", "dagster_docker", "dagster_webserver"}


def _is_asset_module(parts: tuple[str, ...]) -> bool:
    return len(parts) == 3 and parts[0] == "stages" and parts[2] == "asset.py"


def _is_dagster_module(path: Path) -> bool:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] in (GLUE, *ROOTS) or _is_asset_module(parts)


def _core_modules() -> list[Path]:
    return [path for path in PACKAGE.rglob("*.py") if not _is_dagster_module(path)]


def _glue_modules() -> list[Path]:
    return sorted((PACKAGE / GLUE).rglob("*.py"))


def _is_asset_module_name(module: str) -> bool:
    parts = module.split(".")
    return len(parts) == 4 and parts[:2] == ["traj2env_assets", "stages"] and parts[3] == "asset"


def _is_glue_or_root(module: str) -> bool:
    return (
        module == f"traj2env_assets.{GLUE}"
        or module.startswith(f"traj2env_assets.{GLUE}.")
        or module
        in {
            "traj2env_assets.definitions",
            "traj2env_assets.cli",
        }
    )


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_modules_exist() -> None:
    assert len(_core_modules()) >= 3
    assert len([path for path in PACKAGE.rglob("asset.py") if _is_dagster_module(path)]) == 10


def test_core_never_imports_dagster() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(roots & DAGSTER)
        for path in _core_modules()
        if (roots := _imported_roots(path)) & DAGSTER
    }
    assert offenders == {}


def test_core_never_imports_the_dagster_modules() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): upward
        for path in _core_modules()
        if (upward := sorted(m for m in _package_imports(path) if _is_glue_or_root(m) or _is_asset_module_name(m)))
    }
    assert offenders == {}


def test_the_glue_never_imports_an_asset_module_or_the_code_location() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): upward
        for path in _glue_modules()
        if (
            upward := sorted(
                m
                for m in _package_imports(path)
                if _is_asset_module_name(m) or m in {"traj2env_assets.definitions", "traj2env_assets.cli"}
            )
        )
    }
    assert offenders == {}


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
            # ``from a.b import c``: c may be a module (``from traj2env_assets.stages.scan import asset``).
            modules.update({node.module, *(f"{node.module}.{alias.name}" for alias in node.names)})
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


@pytest.mark.parametrize("leaf", ["run_locks.py", "conventions.py", "stage_names.py", "drops.py", "atif_scanner.py"])
def test_leaf_modules_import_nothing_of_the_package(leaf: str) -> None:
    assert _package_imports(PACKAGE / leaf) == set()


def _part(module: str) -> str:
    """The folder or top-level module of the package a module belongs to."""
    return module.split(".")[1]


def test_no_two_parts_of_the_package_import_each_other() -> None:
    """Folders and top-level modules form layers: no import runs back up, directly or
    round about (``graphlib`` names the loop it finds)."""
    uses: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        part = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        uses.setdefault(part, set()).update(
            other for module in _package_imports(path) if (other := _part(module)) != part
        )
    try:
        order = list(graphlib.TopologicalSorter(uses).static_order())
    except graphlib.CycleError as loop:
        pytest.fail(f"parts of the package import each other: {' -> '.join(loop.args[1])}")
    assert {"stages", "defs", "families", "harbor", "conventions"} <= set(order)
