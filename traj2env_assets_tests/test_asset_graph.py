"""The asset graph as the UI and ``dagster asset list`` show it, against a committed snapshot.

A change to an asset's name, dependencies, partitioning, group, kinds, pools, backfill
policy or checks shows up here as a diff. After a deliberate change, regenerate with
``UPDATE_ASSET_GRAPH_SNAPSHOT=1 pytest traj2env_assets_tests/test_asset_graph.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from traj2env_assets.definitions import defs
from traj2env_assets.stage_names import STAGES

SNAPSHOT = Path(__file__).parent / "asset_graph.json"


def _node(assets_def: dg.AssetsDefinition, key: dg.AssetKey) -> dict[str, object]:
    node = assets_def.node_def
    ops = [{"op": op.name, "pool": op.pool} for op in node.iterate_op_defs()]
    partitions = assets_def.partitions_def
    assert partitions is None or isinstance(partitions, dg.DynamicPartitionsDefinition), partitions
    return {
        "deps": sorted(dep.to_user_string() for dep in assets_def.asset_deps[key]),
        "group": assets_def.group_names_by_key[key],
        "kinds": sorted(assets_def.specs_by_key[key].kinds),
        "partitions": partitions.name if partitions else None,
        "backfill_policy": str(assets_def.backfill_policy) if assets_def.backfill_policy else None,
        "code_version": assets_def.code_versions_by_key.get(key),
        "graph_backed": isinstance(node, dg.GraphDefinition),
        "ops": ops,
        "checks": sorted(check.name for check in assets_def.check_keys),
    }


def asset_graph() -> dict[str, dict[str, object]]:
    graph = defs.resolve_asset_graph()
    nodes: dict[str, dict[str, object]] = {}
    for assets_def in graph.assets_defs:
        for key in assets_def.keys:
            nodes[key.to_user_string()] = _node(assets_def, key)
    for check_key in graph.asset_check_keys:
        nodes[check_key.asset_key.to_user_string()]["checks"] = sorted(
            {*nodes[check_key.asset_key.to_user_string()]["checks"], check_key.name}  # type: ignore[misc]
        )
    return dict(sorted(nodes.items()))


def test_asset_graph_matches_the_snapshot() -> None:
    current = json.dumps(asset_graph(), indent=2) + "\n"
    if os.environ.get("UPDATE_ASSET_GRAPH_SNAPSHOT"):
        SNAPSHOT.write_text(current)
    assert current == SNAPSHOT.read_text(), "asset graph changed; see the module docstring to update the snapshot"


def test_every_design_card_stage_is_its_own_asset_in_dagster_asset_list() -> None:
    dagster = Path(sys.executable).parent / "dagster"
    listed = subprocess.run(
        [str(dagster), "asset", "list", "-m", "traj2env_assets.definitions"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    # The candidates stage is one asset per family: candidates/repair stands for them.
    stages = ["candidates/repair" if stage == "candidates" else stage for stage in STAGES]
    assert [name for name in listed if name in stages] == sorted(stages)
