"""Workspace invariants the Dagster asset checks assert.

A staging directory is orphaned when no current candidate stands behind it: its
candidate is no longer in its trajectory's mining index, its status does not point at
it, or it is a temporary directory left by an interrupted write.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    read_mining,
    read_status,
)


def _referenced(workspace: Workspace, family: str, partition_key: str, task_id: str, staged: Path) -> bool:
    mining = read_mining(workspace, family, partition_key)
    if mining is None or task_id not in mining.task_ids:
        return False
    try:
        status = read_status(workspace, CandidateRef(family=family, partition_key=partition_key, task_id=task_id))
    except (OSError, ValidationError):
        return False
    return status.image is not None and Path(status.image.staged_path) == staged


def orphaned_staging_dirs(workspace: Workspace) -> list[Path]:
    """``candidates/<family>/<key>/<task id>/staging/<name>`` directories nothing refers to."""
    orphans = []
    for staging in workspace.every_staging_dir():
        task_dir = staging.parent
        partition_key, family = task_dir.parent.name, task_dir.parent.parent.name
        for staged in sorted(p for p in staging.iterdir() if p.is_dir()):
            if not _referenced(workspace, family, partition_key, task_dir.name, staged):
                orphans.append(staged)
    return orphans
