"""Publishing staged tasks: a task reaches ``<destination>/<task-id>/`` only whole, and never over another.

A family stages each task privately under the workspace; publishing copies the staged
directory next to the destination under a temporary name and renames it into place.
An existing task directory with the same id is preserved (``duplicate``), so a rerun
that fails, or finds the same task again, never deletes or half-writes a published task.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

PublishStatus = Literal["published", "duplicate"]


class PublishOutcome(BaseModel):
    status: PublishStatus
    path: str


def publish_task(staged: Path, destination: Path, task_id: str) -> PublishOutcome:
    target = destination / task_id
    if target.exists():
        return PublishOutcome(status="duplicate", path=str(target))
    destination.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(dir=destination, prefix=f".{task_id}.", suffix=".publishing"))
    try:
        shutil.copytree(staged, temporary, dirs_exist_ok=True, symlinks=True)
        try:
            # rename(2) onto an existing non-empty directory fails, so a concurrent
            # publisher of the same id cannot be overwritten.
            os.rename(temporary, target)
        except OSError:
            if target.exists():
                return PublishOutcome(status="duplicate", path=str(target))
            raise
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    return PublishOutcome(status="published", path=str(target))
