"""Stage 9, publish: a candidate whose trials passed moves from staging into the destination.

``traj2env_assets.publish`` does the move (whole or not at all, never over another
task). A task this candidate published earlier stays its own; a directory with the same
id from anywhere else makes this candidate a ``duplicate``. A candidate that would hide a
test another task of the dataset shows its agent, or show one another task hides, is
``hidden_tests_leak`` (``traj2env_assets.harbor.leaks``); candidates that hide fewer tests
publish first, so a repair task keeps the tests it shows and the build task that would
hide them is the one dropped.
"""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.families.contract import Drop
from traj2env_assets.harbor.leaks import TaskTests, leaks_between, task_tests
from traj2env_assets.lifecycle.status import (
    CandidateStatus,
    save_status,
    staged_task_dir,
)
from traj2env_assets.publish import publish_task
from traj2env_assets.workspace import Workspace


def _dataset_tests(destination: Path) -> dict[str, TaskTests]:
    if not destination.is_dir():
        return {}
    return {path.name: task_tests(path) for path in sorted(destination.iterdir()) if (path / "task.toml").is_file()}


def publish(workspace: Workspace, destination: Path, statuses: list[CandidateStatus]) -> list[CandidateStatus]:
    published = []
    ready = [status for status in statuses if status.ready_for("publish")]
    staged = {status.task_id: task_tests(staged_task_dir(workspace, status.ref)) for status in ready}
    dataset = _dataset_tests(destination)
    for status in sorted(ready, key=lambda status: len(staged[status.task_id].hidden)):
        if status.published_path and Path(status.published_path).is_dir():
            published.append(save_status(workspace, status.passed("publish")))
            continue
        others = [tests for task_id, tests in dataset.items() if task_id != status.task_id]
        if leaks := leaks_between(staged[status.task_id], others):
            drop = Drop(reason="hidden_tests_leak", detail="; ".join(leaks[:3]) + (f" (+{len(leaks) - 3})" if len(leaks) > 3 else ""))
            published.append(save_status(workspace, status.dropped("publish", drop)))
            continue
        outcome = publish_task(staged_task_dir(workspace, status.ref), destination, status.task_id)
        if outcome.status == "duplicate":
            drop = Drop(reason="duplicate", detail=f"a task with this id already exists at {outcome.path}")
            published.append(save_status(workspace, status.dropped("publish", drop)))
        else:
            dataset[status.task_id] = staged[status.task_id]
            published.append(save_status(workspace, status.passed("publish", published_path=outcome.path)))
    return published
