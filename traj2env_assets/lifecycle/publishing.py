"""Stage 9, publish: a candidate whose trials passed moves from staging into the destination.

``traj2env_assets.publish`` does the move (whole or not at all, never over another
task). A task this candidate published earlier stays its own; a directory with the same
id from anywhere else makes this candidate a ``duplicate``.
"""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.families.contract import Drop
from traj2env_assets.lifecycle.status import CandidateStatus, save_status, staged_task_dir
from traj2env_assets.publish import publish_task
from traj2env_assets.workspace import Workspace


def publish(workspace: Workspace, destination: Path, statuses: list[CandidateStatus]) -> list[CandidateStatus]:
    published = []
    for status in statuses:
        if not status.ready_for("publish"):
            continue
        if status.published_path and Path(status.published_path).is_dir():
            published.append(save_status(workspace, status.passed("publish")))
            continue
        outcome = publish_task(staged_task_dir(workspace, status.ref), destination, status.task_id)
        if outcome.status == "duplicate":
            drop = Drop(reason="duplicate", detail=f"a task with this id already exists at {outcome.path}")
            published.append(save_status(workspace, status.dropped("publish", drop)))
        else:
            published.append(save_status(workspace, status.passed("publish", published_path=outcome.path)))
    return published
