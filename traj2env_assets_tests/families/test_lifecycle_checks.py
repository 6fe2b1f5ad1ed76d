"""The asset checks on the report asset fail when they should, and mining leaves no stale candidate behind."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.stages.candidates.mining import mine_partition
from traj2env_assets.stages.report.orphaned_staging import orphaned_staging_dirs
from traj2env_assets.stages.report.report import REPORT_FILE, report_disagreements
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider


@pytest.fixture
def toy(tmp_path: Path, fake_provider: FakeProvider):
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        pipeline = ToyPipeline(tmp_path, ["claude-code/python-pytest-fix.jsonl"], fake_provider, instance)
        pipeline.run(llm=None)  # no model: the candidate stops at the proposal, no Docker needed
        yield pipeline


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def test_checks_pass_on_a_consistent_workspace(toy: ToyPipeline) -> None:
    _, report_run = toy.run(llm=None)
    assert _checks(report_run) == {"report_matches_stage_files": True, "no_orphaned_staging": True}


def test_a_staging_directory_no_candidate_refers_to_fails_the_check(toy: ToyPipeline) -> None:
    [candidate] = toy.candidates()
    task_dir = toy.workspace.partition_dir("toy", toy.keys[0]) / candidate["task_id"]
    stray = task_dir / "staging" / candidate["task_id"]
    stray.mkdir(parents=True)
    leftover = toy.workspace.partition_dir("toy", toy.keys[0]) / "gone-task" / "staging" / "gone-task"
    leftover.mkdir(parents=True)

    assert sorted(orphaned_staging_dirs(toy.workspace)) == sorted([leftover, stray])
    _, report_run = toy.run(llm=None)
    assert _checks(report_run)["no_orphaned_staging"] is False


def test_a_report_that_disagrees_with_the_status_files_is_found(toy: ToyPipeline) -> None:
    destination = toy.workspace.root / "trajectory-tasks"
    report = json.loads((destination / REPORT_FILE).read_text())
    assert report_disagreements(toy.workspace, toy.families.names(), destination) == []
    report["candidates"][0]["status"] = "published"
    (destination / REPORT_FILE).write_text(json.dumps(report))

    [difference] = report_disagreements(toy.workspace, toy.families.names(), destination)
    assert "report says ('published', 'llm_not_configured')" in difference
    assert "stage files say ('dropped', 'llm_not_configured')" in difference


def test_mining_a_changed_input_removes_candidates_it_no_longer_finds(
    toy: ToyPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = toy.families.by_name("toy")
    stale = toy.workspace.partition_dir("toy", toy.keys[0]) / "stale-task" / "staging" / "stale-task"
    stale.mkdir(parents=True)
    monkeypatch.setattr(type(family), "version", "2")

    mining = mine_partition(toy.workspace, family, toy.keys[0])

    assert not mining.cached
    assert not stale.parent.parent.exists()
    assert [p.name for p in toy.workspace.partition_dir("toy", toy.keys[0]).iterdir() if p.is_dir()] == mining.task_ids
