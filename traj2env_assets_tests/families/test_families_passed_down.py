"""Families are handed down as objects: the lifecycle, the export and the Dagster assets get a
``Families`` collection (or one ``Family``) from a composition root and never read the
registry's list, so no test needs to patch that list to run a family of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import traj2env_assets
import traj2env_assets_tests
from traj2env_assets.families.registry import Families, UnknownFamilyError, registered_families
from traj2env_assets_tests.families.toy import ToyFamily

PACKAGE = Path(traj2env_assets.__file__).parent
TESTS = Path(traj2env_assets_tests.__file__).parent
# The modules below the composition roots: they work on the families they are given.
HANDED_DOWN = ("lifecycle", "trajectory_export", "defs")
# The registry's list and its lookups; the retired names too, so they do not come back.
GLOBAL_LOOKUPS = {
    "REGISTERED",
    "registered_families",
    "FAMILIES",
    "family_named",
    "selected_families",
    "implemented_names",
}
REGISTRY_MODULE = "traj2env_assets.families.registry"


def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _global_lookups(tree: ast.Module) -> set[str]:
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in GLOBAL_LOOKUPS:
            used.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in GLOBAL_LOOKUPS:
            used.add(node.attr)
        elif isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] in GLOBAL_LOOKUPS:
            used.add(node.name)
    return used


def _patches_the_registry(tree: ast.Module) -> list[int]:
    """Lines that import the registry module itself (the handle a patch needs) or patch it by name."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name == REGISTRY_MODULE for alias in node.names):
            lines.append(node.lineno)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "traj2env_assets.families"
            and any(alias.name == "registry" for alias in node.names)
        ):
            lines.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(target := node.args[0], ast.Constant)
            and isinstance(target.value, str)
            and target.value.startswith(REGISTRY_MODULE)
        ):
            lines.append(node.lineno)
    return lines


def test_no_handed_down_module_reads_the_registry_list() -> None:
    modules = [path for folder in HANDED_DOWN for path in (PACKAGE / folder).rglob("*.py")]
    assert len(modules) > 20
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(used) for path in modules if (used := _global_lookups(_parsed(path)))
    }
    assert offenders == {}


def test_no_test_patches_the_registry() -> None:
    offenders = {
        str(path.relative_to(TESTS)): lines
        for path in TESTS.rglob("*.py")
        if (lines := _patches_the_registry(_parsed(path)))
    }
    assert offenders == {}


def test_the_checks_see_a_global_lookup_and_a_registry_patch() -> None:
    lookup = ast.parse("from x import family_named\nFAMILIES[0]\n")
    assert _global_lookups(lookup) == {"family_named", "FAMILIES"}
    patch = ast.parse(
        "from traj2env_assets.families import registry\n"
        "monkeypatch.setattr('traj2env_assets.families.registry.REGISTERED', ())\n"
    )
    assert _patches_the_registry(patch) == [1, 2]


def test_a_collection_resolves_names_selects_in_its_own_order_and_rejects_the_unknown() -> None:
    families = Families((*registered_families(), ToyFamily()))
    assert families.names() == ["repair", "build", "extend", "qa", "toy"]
    assert isinstance(families.by_name("toy"), ToyFamily)
    assert families.selected(["toy", "repair"]).names() == ["repair", "toy"]
    with pytest.raises(UnknownFamilyError, match="unknown family 'nope'; implemented families: repair, build"):
        families.selected(["nope"])
    with pytest.raises(ValueError, match="two families share a name"):
        Families((ToyFamily(), ToyFamily()))
