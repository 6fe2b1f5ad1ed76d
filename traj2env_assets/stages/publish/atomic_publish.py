"""Publishing staged tasks: a task reaches ``<destination>/<task-id>/`` only whole, and never over another.

A family stages each task privately under the workspace; publishing copies the staged
directory next to the destination under a temporary name and renames it into place; a
copy left by a publisher killed mid-copy (``kill -9``) is removed by the next publish of
that task.
An existing task directory with the same id is preserved (``duplicate``), so a rerun
that fails, or finds the same task again, never deletes or half-writes a published task.
A ``vet`` check runs on the copy, the exact files about to land; a complaint leaves the
destination untouched (``refused``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

PublishStatus = Literal["published", "duplicate", "refused"]


class PublishOutcome(BaseModel):
    status: PublishStatus
    path: str
    detail: str = ""
    """Why ``vet`` refused the task."""


_PUBLISHING_SUFFIX = ".publishing"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_publishing(destination: Path, task_id: str) -> list[Path]:
    """Remove copies of ``task_id`` left half-made by a publisher that was killed (its
    process id, in the copy's name, no longer runs). Returns what was removed."""
    removed = []
    for leftover in destination.glob(f".{task_id}.*{_PUBLISHING_SUFFIX}"):
        pid = leftover.name[len(task_id) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(leftover, ignore_errors=True)
            removed.append(leftover)
    return removed


def publish_task(
    staged: Path,
    destination: Path,
    task_id: str,
    vet: Callable[[Path], str | None] | None = None,
    added: Mapping[str, str] | None = None,
) -> PublishOutcome:
    """``added``: files (relative path -> text) written into the copy before ``vet`` sees it."""
    target = destination / task_id
    if target.exists():
        return PublishOutcome(status="duplicate", path=str(target))
    destination.mkdir(parents=True, exist_ok=True)
    sweep_stale_publishing(destination, task_id)
    temporary = Path(tempfile.mkdtemp(dir=destination, prefix=f".{task_id}.{os.getpid()}.", suffix=_PUBLISHING_SUFFIX))
    try:
        shutil.copytree(staged, temporary, dirs_exist_ok=True, symlinks=True)
        for relative, text in (added or {}).items():
            (temporary / relative).write_text(text, encoding="utf-8")
        refusal = vet(temporary) if vet is not None else None
        if refusal is not None:
            return PublishOutcome(status="refused", path=str(target), detail=refusal)
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
