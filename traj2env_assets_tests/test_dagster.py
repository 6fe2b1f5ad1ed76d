"""The Dagster layer: definitions load, assets materialize per partition, the sensor launches once per content."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.definitions import build_definitions, defs
from traj2env_assets.defs.jobs import REPORT_JOB
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.pools import pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.defs.sensors import (
    SENSORS_ENV,
    default_sensor_status,
    report_refresh_sensor,
    trajectory_folder_sensor,
)
from traj2env_assets.formats.convert import convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import register_sources
from traj2env_assets.stages.convert.asset import convert
from traj2env_assets.stages.scan.asset import scan
from traj2env_assets_tests.formats import real_shapes

# The partition key of the Claude Code edit-variants log (its session id).
EDIT_TOOL_VARIANTS_KEY = f"claude-code-{real_shapes.CLAUDE_EDIT_SESSION}"


def _config(tmp_path: Path, source: Path) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"source: {{kind: trajectory, path: {source}, format: auto}}\n"
        f"pipeline: {{name: trajectory_to_env, options: {{families: [repair]}}}}\n"
        f"output: {{destination: {tmp_path / 'tasks'}}}\n"
    )
    return config


def _pipeline(tmp_path: Path, source: Path) -> PipelineResource:
    return PipelineResource.from_files(_config(tmp_path, source), tmp_path / "ws")


def _resources(tmp_path: Path, source: Path) -> dict[str, dg.ConfigurableResource]:
    return {"pipeline": _pipeline(tmp_path, source)}


def test_definitions_load() -> None:
    dg.Definitions.validate_loadable(defs)
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"convert", "scan", "report"} <= keys


def test_materialize_one_partition_writes_stage_files(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    log = real_shapes.pi_legacy_compaction(source / "session.jsonl")
    workspace = Workspace(root=tmp_path / "ws")
    key = register_sources(workspace, source).new[0]
    instance = dg.DagsterInstance.ephemeral()
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, [key])
    result = dg.materialize(
        [convert, scan], instance=instance, partition_key=key, resources=_resources(tmp_path, source)
    )
    assert result.success
    assert (workspace.root / "conversion" / key / "trajectory.json").is_file()
    verdict = json.loads((workspace.root / "scan" / key / "verdict.json").read_text())
    assert verdict["outcome"] == "clean"
    meta = result.asset_materializations_for_node("convert")[0].metadata
    steps = convert_source(log).record.steps
    assert meta["format"].value == "pi" and meta["steps"].value == steps > 0 and meta["cached"].value is False
    rerun = dg.materialize([convert], instance=instance, partition_key=key, resources=_resources(tmp_path, source))
    assert rerun.asset_materializations_for_node("convert")[0].metadata["cached"].value is True


def test_range_run_records_each_partitions_own_metadata(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path / "ws")
    source = tmp_path / "src"
    logs = [
        real_shapes.codex_redacted(source / "codex.jsonl"),
        real_shapes.pi_legacy_compaction(source / "pi.jsonl"),
        real_shapes.claude_images(source / "images.jsonl"),
        real_shapes.claude_read_variants(source / "reads.jsonl"),
    ]
    expected_steps = sorted(convert_source(log).record.steps for log in logs)
    assert len(set(expected_steps)) == len(logs)  # each partition's own figure is told apart
    keys = register_sources(workspace, source).new
    instance = dg.DagsterInstance.ephemeral()
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, keys)
    job = build_definitions(_pipeline(tmp_path, source)).resolve_job_def("trajectory_pipeline")
    result = job.execute_in_process(
        instance=instance,
        tags={"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
    )
    assert result.success
    steps: dict[str, int] = {}
    for key in keys:
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("convert"), asset_partitions=[key]), limit=1
        ).records[0]
        assert record.asset_materialization is not None
        value = record.asset_materialization.metadata["steps"].value
        assert isinstance(value, int)
        steps[key] = value
    assert sorted(steps.values()) == expected_steps
    for asset in ("convert", "scan", "replay", "candidates/repair"):
        ranged = {key: _data_version(instance, asset, key) for key in keys}
        assert len(set(ranged.values())) == len(keys), f"{asset}: partitions share a data version"
    # A partition run on its own gets the very version the range run recorded for it.
    job.execute_in_process(instance=instance, partition_key=keys[1])
    for asset in ("convert", "replay", "candidates/repair"):
        alone = _data_version(instance, asset, keys[1])
        assert alone == ranged_versions(instance, asset, keys[1], before=1)


def _records(instance: dg.DagsterInstance, asset: str, key: str, limit: int) -> Sequence[dg.EventLogRecord]:
    return instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey.from_user_string(asset), asset_partitions=[key]), limit=limit
    ).records


def _data_version(instance: dg.DagsterInstance, asset: str, key: str) -> str:
    materialization = _records(instance, asset, key, 1)[0].asset_materialization
    assert materialization is not None and materialization.tags is not None
    return materialization.tags["dagster/data_version"]


def ranged_versions(instance: dg.DagsterInstance, asset: str, key: str, before: int) -> str:
    """The data version of the partition's latest materialization ``before`` runs ago."""
    run_ids = list(dict.fromkeys(r.run_id for r in _records(instance, asset, key, 10)))
    record = next(r for r in _records(instance, asset, key, 10) if r.run_id == run_ids[before])
    assert record.asset_materialization is not None and record.asset_materialization.tags is not None
    return record.asset_materialization.tags["dagster/data_version"]


@pytest.fixture
def sensor_setup(tmp_path: Path):
    source = tmp_path / "src"
    source.mkdir()
    instance = dg.DagsterInstance.ephemeral()
    resources = _resources(tmp_path, source)
    return source, instance, resources


def _tick(instance: dg.DagsterInstance, resources: dict, cursor: str | None) -> dg.SensorResult:
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
    result = trajectory_folder_sensor(context)
    assert isinstance(result, dg.SensorResult)
    return result


def test_sensor_launches_each_file_content_once(sensor_setup) -> None:
    source, instance, resources = sensor_setup
    real_shapes.claude_edit_variants(source / "one.jsonl")
    first = _tick(instance, resources, None)
    assert first.run_requests is not None and first.dynamic_partitions_requests is not None
    assert [request.partition_key for request in first.run_requests] == [EDIT_TOOL_VARIANTS_KEY]
    assert first.dynamic_partitions_requests[0].partition_keys == [EDIT_TOOL_VARIANTS_KEY]
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, first.dynamic_partitions_requests[0].partition_keys)

    second = _tick(instance, resources, first.cursor)
    assert not second.run_requests and not second.dynamic_partitions_requests
    assert second.skip_reason

    with (source / "one.jsonl").open("a") as handle:
        handle.write("\n")
    third = _tick(instance, resources, second.cursor)
    assert third.run_requests is not None
    assert [request.partition_key for request in third.run_requests] == [EDIT_TOOL_VARIANTS_KEY]
    assert not third.dynamic_partitions_requests, "a changed file is re-materialized, never a second partition"
    assert third.run_requests[0].run_key != first.run_requests[0].run_key


def test_sensor_adopts_a_partition_someone_else_added_and_launches_its_changes(sensor_setup) -> None:
    source, instance, resources = sensor_setup
    real_shapes.claude_edit_variants(source / "one.jsonl")
    key = EDIT_TOOL_VARIANTS_KEY
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, [key])  # as the UI, GraphQL or the CLI does
    first = _tick(instance, resources, None)
    assert not first.run_requests and not first.dynamic_partitions_requests
    assert first.cursor is not None
    assert key in json.loads(first.cursor)
    with (source / "one.jsonl").open("a") as handle:
        handle.write("\n")
    changed = _tick(instance, resources, first.cursor)
    assert changed.run_requests is not None
    assert [request.partition_key for request in changed.run_requests] == [key]


def test_sensors_start_running_only_where_the_environment_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SENSORS_ENV, raising=False)
    assert default_sensor_status() == dg.DefaultSensorStatus.STOPPED
    monkeypatch.setenv(SENSORS_ENV, "running")
    assert default_sensor_status() == dg.DefaultSensorStatus.RUNNING
    monkeypatch.setenv(SENSORS_ENV, "off")
    assert default_sensor_status() == dg.DefaultSensorStatus.STOPPED


def test_report_sensor_requests_the_report_job_after_each_successful_pipeline_run() -> None:
    assert report_refresh_sensor.job_name == REPORT_JOB
    with dg.instance_for_test() as instance:
        run = instance.create_run_for_job(defs.resolve_job_def("trajectory_pipeline"), run_id="0" * 32)
        context = dg.build_run_status_sensor_context(
            sensor_name="report_refresh_sensor",
            dagster_instance=instance,
            dagster_run=run,
            dagster_event=dg.DagsterEvent(event_type_value="PIPELINE_SUCCESS", job_name=run.job_name),
        )
        request = report_refresh_sensor(context)
    assert isinstance(request, dg.RunRequest)
    assert request.run_key == f"report-after-{run.run_id}"


def test_a_partition_added_by_hand_is_registered_when_it_converts(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    real_shapes.claude_edit_variants(source / "one.jsonl")
    key = EDIT_TOOL_VARIANTS_KEY
    instance = dg.DagsterInstance.ephemeral()
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, [key])
    result = dg.materialize([convert], instance=instance, partition_key=key, resources=_resources(tmp_path, source))
    assert result.success
    record = json.loads((tmp_path / "ws" / "conversion" / key / "record.json").read_text())
    assert record["status"] == "converted"


def test_sensor_runs_get_the_same_pool_limits_as_cli_runs(sensor_setup) -> None:
    _source, instance, resources = sensor_setup
    _tick(instance, resources, None)
    slots = {
        pool: instance.event_log_storage.get_concurrency_info(pool).slot_count
        for pool in pool_limits(resources["pipeline"].options())
    }
    assert slots == pool_limits(resources["pipeline"].options())


def test_dagster_cli_materializes_one_partition(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    real_shapes.claude_edit_variants(source / "edit-tool-variants.jsonl")
    workspace = Workspace(root=tmp_path / "ws")
    key = register_sources(workspace, source).new[0]
    home = tmp_path / "home"
    home.mkdir()
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        assert trajectories.name is not None
        instance.add_dynamic_partitions(trajectories.name, [key])
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "TRAJ2ENV_WORKSPACE": str(workspace.root),
        "TRAJ2ENV_CONFIG": str(_config(tmp_path, source)),
    }
    dagster = Path(sys.executable).parent / "dagster"
    completed = subprocess.run(
        [
            str(dagster),
            "asset",
            "materialize",
            "-m",
            "traj2env_assets.definitions",
            "--select",
            "convert",
            "--partition",
            key,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert json.loads((workspace.root / "conversion" / key / "record.json").read_text())["status"] == "converted"
