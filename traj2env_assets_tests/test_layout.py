"""The layout's paths, pinned: existing workspaces, caches and published tasks keep working
only while every name stays what it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from harbor.models.task.paths import TaskPaths

from traj2env_assets.layout import (
    DEFAULT_SOURCE_DIR,
    DEFAULT_WORKSPACE,
    QaCacheLayout,
    ReplayLayout,
    TaskLayout,
    WheelhouseLayout,
    Workspace,
    keyed_file,
)

ROOT = Path("/ws")
WORKSPACE = Workspace(root=ROOT)
KEY = "codex-1234"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (WORKSPACE.trajectory_file(KEY), "conversion/codex-1234/trajectory.json"),
        (WORKSPACE.conversion_record_file(KEY), "conversion/codex-1234/record.json"),
        (WORKSPACE.verdict_file(KEY), "scan/codex-1234/verdict.json"),
        (WORKSPACE.replay_dir(KEY), "replay/codex-1234"),
        (WORKSPACE.mining_file("repair", KEY), "candidates/repair/codex-1234/mining.json"),
        (WORKSPACE.sources_registry_file, "sources/registry.json"),
        (WORKSPACE.cache_dir, "cache"),
        (WORKSPACE.calibration_cache_dir, "cache/calibration"),
        (WORKSPACE.trials_cache_dir, "cache/trials"),
        (WORKSPACE.secrets_cache_dir, "cache/secrets"),
        (WORKSPACE.default_llm_cache_dir, "cache/trajectory_to_env/llm"),
        (WORKSPACE.wheelhouse_dir, "wheelhouse"),
        (WORKSPACE.dedupe_dir, "dedupe"),
        (WORKSPACE.published_signatures_dir, "dedupe/signatures"),
        (WORKSPACE.dataset_lock_key, "dedupe/dataset"),
        (WORKSPACE.llm_ledger_file("run-1"), "llm_ledger/run-1.json"),
        (WORKSPACE.default_destination, "trajectory-tasks"),
        (WORKSPACE.harbor_jobs_dir, "harbor-jobs"),
        (WORKSPACE.dagster_home, ".dagster"),
        (WORKSPACE.resolve("trajectory-spec"), "trajectory-spec"),
    ],
)
def test_workspace_paths(path: Path, expected: str) -> None:
    assert path.relative_to(ROOT).as_posix() == expected


def test_a_user_given_absolute_path_stays_where_it_is() -> None:
    assert WORKSPACE.resolve("/elsewhere/spec") == Path("/elsewhere/spec")


def test_candidate_files() -> None:
    candidate = WORKSPACE.candidate("build", KEY, "calc-fix")
    files = [
        candidate.candidate_file,
        candidate.status_file,
        candidate.proposal_file,
        candidate.trials_file,
        candidate.staged_task_dir,
    ]
    assert [path.relative_to(ROOT / "candidates/build/codex-1234/calc-fix").as_posix() for path in files] == [
        "candidate.json",
        "status.json",
        "proposal.json",
        "trials.json",
        "staging/calc-fix",
    ]


def test_every_status_and_staging_dir_are_found_across_families(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path)
    for family, task_id in (("repair", "a"), ("build", "b")):
        candidate = workspace.candidate(family, KEY, task_id)
        candidate.staged_task_dir.mkdir(parents=True)
        candidate.status_file.write_text("{}")
    assert [p.parent.name for p in workspace.every_status_file()] == ["b", "a"]
    assert [p.parent.name for p in workspace.every_staging_dir()] == ["b", "a"]


def test_replay_files() -> None:
    replay = ReplayLayout(WORKSPACE.replay_dir(KEY))
    files = [
        replay.outcome_file,
        replay.record_file,
        replay.manifests_file,
        replay.fidelity_file,
        replay.repository_file,
        replay.blobs_dir,
        replay.deltas_file,
    ]
    assert [path.name for path in files] == [
        "outcome.json",
        "record.json",
        "manifests.jsonl",
        "fidelity.json",
        "repository.json",
        "blobs",
        "deltas.jsonl",
    ]


def test_stores_and_keyed_entries() -> None:
    house = WheelhouseLayout(WORKSPACE.wheelhouse_dir)
    qa = QaCacheLayout(WORKSPACE.cache_dir)
    paths = [
        house.wheel_file("a-1-py3-none-any.whl"),
        house.lock_file("k"),
        qa.wheels_dir("k"),
        qa.pin_file("k"),
        qa.hub_dir,
        keyed_file(WORKSPACE.trials_cache_dir, "abcdef"),
    ]
    assert [path.relative_to(ROOT).as_posix() for path in paths] == [
        "wheelhouse/wheels/a-1-py3-none-any.whl",
        "wheelhouse/locks/k.json",
        "cache/qa/wheels/k",
        "cache/qa/pins/k.json",
        "cache/qa/hub",
        "cache/trials/ab/abcdef.json",
    ]


def test_defaults_relative_to_the_current_directory() -> None:
    assert DEFAULT_WORKSPACE.as_posix() == "workspace"
    assert DEFAULT_SOURCE_DIR.as_posix() == "workspace/trajectories"


def test_task_layout_agrees_with_harbor(tmp_path: Path) -> None:
    task_dir = tmp_path.resolve()  # TaskPaths resolves the folder; TaskLayout keeps it as given
    ours, harbors = TaskLayout(task_dir), TaskPaths(task_dir)
    for name in (
        "config_path",
        "instruction_path",
        "environment_dir",
        "solution_dir",
        "solve_path",
        "tests_dir",
        "test_path",
    ):
        assert getattr(ours, name) == getattr(harbors, name), name
    assert ours.card_path == harbors.readme_path


def test_task_layout_own_files_and_relative_form() -> None:
    task = TaskLayout(Path("calc-fix"))
    paths = [
        task.dockerfile_path,
        task.shown_workspace_dir,
        task.solution_files_dir,
        task.harness_dir,
        task.tracked_ids_path,
        task.pristine_paths_path,
        task.gate_ids_path,
        task.restore_dir,
        task.harness_file("answer.json"),
    ]
    assert [path.as_posix() for path in paths] == [
        "calc-fix/environment/Dockerfile",
        "calc-fix/environment/workspace",
        "calc-fix/solution/files",
        "calc-fix/tests/traj2env",
        "calc-fix/tests/traj2env/tracked_ids.txt",
        "calc-fix/tests/traj2env/pristine_paths.txt",
        "calc-fix/tests/traj2env/gate_ids.txt",
        "calc-fix/tests/traj2env/restore",
        "calc-fix/tests/traj2env/answer.json",
    ]
