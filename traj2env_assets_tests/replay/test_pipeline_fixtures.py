"""The replay asset behind the real conversion and scan assets, over every real shape (logs of our own
making, ``formats/real_shapes.py``) in one range run."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.registry import registered_families
from traj2env_assets.layout import Workspace
from traj2env_assets.replay import ReplayFidelity, ReplayOutcome
from traj2env_assets.sources import register_sources
from traj2env_assets.stages.convert.asset import convert
from traj2env_assets.stages.replay.asset import replay
from traj2env_assets.stages.report.report import build_run_report
from traj2env_assets.stages.scan.asset import scan
from traj2env_assets_tests.formats import real_shapes


def test_every_real_shape_gets_a_replay_outcome_and_fidelity_in_the_report(tmp_path: Path) -> None:
    source = tmp_path / "src"
    real_shapes.write_all(source)
    config = tmp_path / "config.yaml"
    config.write_text(
        f"source: {{kind: trajectory, path: {source}, format: auto}}\n"
        f"pipeline: {{name: trajectory_to_env, options: {{families: [repair]}}}}\n"
        f"output: {{destination: {tmp_path / 'tasks'}}}\n"
    )
    workspace = Workspace(root=tmp_path / "ws")
    keys = register_sources(workspace, source).new
    instance = dg.DagsterInstance.ephemeral()
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, keys)
    job = dg.Definitions(
        assets=[convert, scan, replay],
        jobs=[dg.define_asset_job("replay_job")],
        resources={"pipeline": PipelineResource.from_files(config, workspace.root)},
    ).resolve_job_def("replay_job")
    result = job.execute_in_process(
        instance=instance,
        tags={"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
    )
    assert result.success
    outcomes = {
        key: ReplayOutcome.model_validate_json((workspace.replay_dir(key) / "outcome.json").read_text()) for key in keys
    }
    assert len(keys) == len(real_shapes.WRITERS)  # every agent log (pi, Claude Code, Codex)
    assert {key: outcome.status for key, outcome in outcomes.items()} == dict.fromkeys(keys, "replayed")
    replayed = list(outcomes)
    report = {
        record.partition_key: record
        for record in build_run_report(workspace, registered_families().names(), keys).inputs
    }
    for key in replayed:
        fidelity = ReplayFidelity.model_validate(report[key].replay_fidelity)
        materialization = (
            instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("replay"), asset_partitions=[key]), limit=1
            )
            .records[0]
            .asset_materialization
        )
        assert materialization is not None
        meta = materialization.metadata
        assert meta["commands"].value == fidelity.commands
        assert meta["files_rebuilt"].value == fidelity.files_rebuilt
