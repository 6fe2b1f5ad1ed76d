"""The replay stage per partition: gate, skip reasons, atomic output, cache; and the Dagster asset."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.config import RunConfigFile, RunSettings
from traj2env_assets.defs.partitions import trajectories
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.layout import Workspace
from traj2env_assets.replay import ReplayOutcome, ReplayRecord
from traj2env_assets.stages.replay.asset import replay
from traj2env_assets.stages.replay.partition import replay_partition
from traj2env_assets.stages.scan.gate import GateOutcome, ScanVerdict
from traj2env_assets_tests.replay.builders import ROOT, SessionBuilder

KEY = "calc-session"


def _stage_inputs(root: Path, outcome: GateOutcome | None = "clean", trajectory: str | None = None) -> Workspace:
    workspace = Workspace(root=root)
    session = (
        SessionBuilder()
        .user("fix calc")
        .call("Write", {"file_path": f"{ROOT}/calc.py", "content": "def add(a, b):\n    return a - b\n"})
        .bash("pytest -q", "FAILED test_calc.py::test_add\n1 failed", exit_code=1)
        .call("Edit", {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"})
        .bash("pytest -q", "1 passed")
    )
    conversion = workspace.trajectory_file(KEY)
    conversion.parent.mkdir(parents=True, exist_ok=True)
    conversion.write_text(trajectory if trajectory is not None else session.build().model_dump_json(exclude_none=True))
    if outcome is not None:
        atomic_write_json(workspace.verdict_file(KEY), ScanVerdict(outcome=outcome))
    return workspace


def _outcome(workspace: Workspace) -> ReplayOutcome:
    return ReplayOutcome.model_validate_json((workspace.replay_dir(KEY) / "outcome.json").read_text())


def test_replays_writes_record_and_fidelity_then_caches(tmp_path: Path) -> None:
    workspace = _stage_inputs(tmp_path / "ws")
    first = replay_partition(workspace, KEY)
    assert (first.outcome.status, first.cached) == ("replayed", False)
    fidelity = json.loads((workspace.replay_dir(KEY) / "fidelity.json").read_text())
    assert (fidelity["edits_applied"], fidelity["commands"], fidelity["files_rebuilt"]) == (2, 2, 1)
    record = ReplayRecord.load(workspace.replay_dir(KEY))
    assert record.files_before(1) == {"calc.py": "def add(a, b):\n    return a + b\n"}
    again = replay_partition(workspace, KEY)
    assert again.cached and again.fidelity == first.fidelity and again.data_version == first.data_version
    changed = replay_partition(workspace, KEY, code_version="replay-next")
    assert not changed.cached and changed.data_version != first.data_version


def test_blocked_missing_and_invalid_inputs_are_skipped_with_reasons(tmp_path: Path) -> None:
    blocked = _stage_inputs(tmp_path / "blocked", outcome="blocked")
    assert replay_partition(blocked, KEY).outcome.reason == "gate"
    assert not (blocked.replay_dir(KEY) / "fidelity.json").exists()
    unscanned = _stage_inputs(tmp_path / "unscanned", outcome=None)
    assert replay_partition(unscanned, KEY).outcome.reason == "scan_missing"
    invalid = _stage_inputs(tmp_path / "invalid", trajectory='{"schema_version": "ATIF-v1.7", "steps": "nope"}')
    result = replay_partition(invalid, KEY)
    assert (result.outcome.status, result.outcome.reason) == ("skipped", "invalid_trajectory")
    assert _outcome(invalid).detail
    missing = Workspace(root=tmp_path / "missing")
    atomic_write_json(missing.verdict_file(KEY), ScanVerdict(outcome="clean"))
    assert replay_partition(missing, KEY).outcome.reason == "conversion_missing"


def test_an_unexpected_replay_error_is_recorded_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = _stage_inputs(tmp_path / "ws")

    def broken(trajectory: object, **_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("traj2env_assets.stages.replay.partition.replay_trajectory", broken)
    result = replay_partition(workspace, KEY)
    assert (result.outcome.status, result.outcome.reason, result.outcome.detail) == (
        "skipped",
        "replay_error",
        "RuntimeError: boom",
    )
    assert sorted(p.name for p in workspace.replay_dir(KEY).iterdir()) == ["outcome.json"]


def test_a_blocked_rerun_replaces_an_earlier_record(tmp_path: Path) -> None:
    workspace = _stage_inputs(tmp_path / "ws")
    replay_partition(workspace, KEY)
    atomic_write_json(workspace.verdict_file(KEY), ScanVerdict(outcome="blocked"))
    assert replay_partition(workspace, KEY).outcome.reason == "gate"
    assert sorted(p.name for p in workspace.replay_dir(KEY).iterdir()) == ["outcome.json"]


def test_asset_materializes_with_fidelity_metadata_and_is_cached_on_rerun(tmp_path: Path) -> None:
    _stage_inputs(tmp_path / "ws")
    instance = dg.DagsterInstance.ephemeral()
    assert trajectories.name is not None
    instance.add_dynamic_partitions(trajectories.name, [KEY])
    resources = {"pipeline": PipelineResource.from_settings(RunSettings.resolve(RunConfigFile(), tmp_path / "ws"))}
    assets: list[dg.AssetsDefinition | dg.AssetSpec] = [replay, dg.AssetSpec("scan", partitions_def=trajectories)]
    result = dg.materialize(assets, instance=instance, partition_key=KEY, resources=resources)
    assert result.success
    event = result.asset_materializations_for_node("replay")[0]
    meta = event.metadata
    assert (meta["status"].value, meta["cached"].value) == ("replayed", False)
    assert (meta["edits_applied"].value, meta["commands"].value) == (2, 2)
    fidelity = meta["fidelity"].value
    assert isinstance(fidelity, str)
    assert "| files_rebuilt | 1 |" in fidelity
    rerun = dg.materialize(assets, instance=instance, partition_key=KEY, resources=resources)
    rerun_event = rerun.asset_materializations_for_node("replay")[0]
    assert rerun_event.metadata["cached"].value is True
    assert rerun_event.tags is not None and event.tags is not None
    assert rerun_event.tags["dagster/data_version"] == event.tags["dagster/data_version"]


def test_a_large_trajectory_is_streamed_with_the_same_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _stage_inputs(tmp_path / "whole")
    replay_partition(whole, KEY)
    streamed = _stage_inputs(tmp_path / "streamed")
    monkeypatch.setattr("traj2env_assets.stages.replay.partition.STREAM_THRESHOLD_BYTES", 0)

    def not_whole(trajectory: object) -> None:
        raise AssertionError("loaded whole")

    monkeypatch.setattr("traj2env_assets.stages.replay.partition.replay_trajectory", not_whole)
    assert replay_partition(streamed, KEY).outcome.status == "replayed"
    for name in ("record.json", "manifests.jsonl", "fidelity.json"):
        assert (streamed.replay_dir(KEY) / name).read_bytes() == (whole.replay_dir(KEY) / name).read_bytes()
    assert not any(p.name.startswith(".timeline-") for p in streamed.replay_dir(KEY).iterdir())
    broken = _stage_inputs(tmp_path / "broken", trajectory='{"schema_version": "ATIF-v1.7", "steps": [{"step_id": 1')
    result = replay_partition(broken, KEY)
    assert (result.outcome.status, result.outcome.reason) == ("skipped", "invalid_trajectory")
