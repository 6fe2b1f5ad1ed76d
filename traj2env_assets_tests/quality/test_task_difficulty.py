"""Every family's staged task carries the session's effort and a difficulty label, on the
real Dagster graph (propose_only: no Docker) over bundled samples."""

from __future__ import annotations

import tomllib
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.harbor.dataset import read_task_toml
from traj2env_assets.harbor.writer import task_toml
from traj2env_assets.lifecycle.status import CandidateRef, read_status
from traj2env_assets.quality.effort import difficulty
from traj2env_assets.stages.task_specs import task_spec_for
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider


@pytest.fixture
def instance(tmp_path: Path):
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        yield instance


@pytest.mark.parametrize(
    ("family", "sample", "window"),
    [
        ("repair", "claude-code/python-pytest-fix.jsonl", "fail_to_pass"),
        ("extend", "codex/python-extend-feature.jsonl", "request"),
        ("build", "pi/python-build-package.jsonl", "request"),
    ],
)
def test_the_task_toml_says_how_hard_the_session_found_the_change(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance, family: str, sample: str, window: str
) -> None:
    pipeline = ToyPipeline(tmp_path, [sample], fake_provider, instance, family=family)
    result, _ = pipeline.run(propose_only=True, llm=None)
    assert result.success
    staged = [c for c in pipeline.candidates() if c["status"] == "passed_proposals"]
    assert staged, pipeline.candidates()
    ref = CandidateRef(family=family, partition_key=pipeline.keys[0], task_id=staged[0]["task_id"])
    spec = task_spec_for(
        pipeline.workspace, pipeline.families.by_name(family), read_status(pipeline.workspace, ref), "local"
    )

    # The folder the session worked in names the project (no repository was used).
    assert spec.project and "/" not in spec.project
    effort = spec.session_effort
    assert effort is not None and effort.window == window
    assert effort.files_changed == len(spec.solution_files) + len(spec.solution_deleted) > 0
    assert effort.lines_changed > 0 and effort.edits > 0 and effort.agent_steps > 0
    if family == "repair":
        assert effort.failed_commands >= 1  # the window opens on the failing check
    metadata = tomllib.loads(task_toml(spec).to_toml())["metadata"]
    assert metadata["difficulty"] == difficulty(effort) != "unknown"
    assert metadata["session_effort"]["lines_changed"] == effort.lines_changed

    # A session without timestamps has no wall time; TOML has no null, so the key is left out
    # and the task.toml must still read back.
    untimed = spec.model_copy(update={"session_effort": effort.model_copy(update={"wall_seconds": None})})
    (tmp_path / "untimed").mkdir()
    (tmp_path / "untimed" / "task.toml").write_text(task_toml(untimed).to_toml(), encoding="utf-8")
    read_back = read_task_toml(tmp_path / "untimed").metadata.session_effort
    assert read_back is not None and read_back.wall_seconds is None
    assert read_back.lines_changed == effort.lines_changed
