"""Stage 9, publish: a candidate whose trials passed moves from staging into the destination.

``traj2env_assets.publish`` does the move (whole or not at all, never over another
task). A task this candidate published earlier stays its own; a directory with the same
id from anywhere else makes this candidate a ``duplicate``. A candidate that hides a test
another task shows its agent (a published task or another candidate of this publish) is
``hidden_tests_leak`` (``traj2env_assets.harbor.leaks``): the task that hides is the one
dropped, so a repair task keeps the tests it shows and the build task that would hide them
goes. "Another task" is every live (not dropped) candidate staged anywhere in the
workspace, not only this partition's: partitions publish one by one, and the hider must go
whichever partition comes first. A candidate that shows a test a task published earlier
hides is dropped the same way, since a published task is never taken back.

The last gate: every task is scanned for secrets once more as it is published (the copy
about to land in the destination). The spec was redacted before the image was built, so a
finding here is a bug, or a secret the calibrated task derived (a behaviour-gate answer);
the task is not published and the candidate is dropped as ``secret_in_task``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from traj2env_assets.families.contract import Drop
from traj2env_assets.harbor.leaks import (
    TaskTests,
    hidden_and_shown_elsewhere,
    shown_and_hidden_elsewhere,
    task_tests,
)
from traj2env_assets.harbor.secrets import SECRET_IN_TASK, describe, scan_task_dir
from traj2env_assets.lifecycle.status import (
    STAGE_CANDIDATES,
    STATUS_FILE,
    CandidateStatus,
    save_status,
    staged_task_dir,
)
from traj2env_assets.lifecycle.tasks import SECRETS_CACHE
from traj2env_assets.publish import publish_task
from traj2env_assets.workspace import Workspace


def _dataset_tests(destination: Path) -> dict[str, TaskTests]:
    if not destination.is_dir():
        return {}
    return {path.name: task_tests(path) for path in sorted(destination.iterdir()) if (path / "task.toml").is_file()}


def _live_staged_tests(workspace: Workspace) -> dict[str, TaskTests]:
    """The tests of every candidate of the workspace that has a staged task and no drop."""
    found = {}
    for path in sorted((workspace.root / STAGE_CANDIDATES).glob(f"*/*/*/{STATUS_FILE}")):
        status = CandidateStatus.model_validate_json(path.read_text(encoding="utf-8"))
        staged = staged_task_dir(workspace, status.ref)
        if status.drop is None and status.image is not None and staged.is_dir():
            found[status.task_id] = task_tests(staged)
    return found


def _secrets_vet(workspace: Workspace) -> Callable[[Path], str | None]:
    def vet(task_dir: Path) -> str | None:
        findings = scan_task_dir(task_dir, workspace.root / SECRETS_CACHE)
        if not findings:
            return None
        return f"a secret detector fires on the task being published (after redaction): {describe(findings)}"

    return vet


def publish(workspace: Workspace, destination: Path, statuses: list[CandidateStatus]) -> list[CandidateStatus]:
    published = []
    ready = [status for status in statuses if status.ready_for("publish")]
    staged = _live_staged_tests(workspace) if ready else {}
    staged.update({status.task_id: task_tests(staged_task_dir(workspace, status.ref)) for status in ready})
    dataset = _dataset_tests(destination)
    for status in ready:
        if status.published_path and Path(status.published_path).is_dir():
            published.append(save_status(workspace, status.passed("publish")))
            continue
        tests = staged[status.task_id]
        live = [other for task_id, other in staged.items() if task_id != status.task_id]
        earlier = [other for task_id, other in dataset.items() if task_id != status.task_id]
        leaks = hidden_and_shown_elsewhere(tests, [*live, *earlier]) + shown_and_hidden_elsewhere(tests, earlier)
        if leaks:
            more = f" (+{len(leaks) - 3} more)" if len(leaks) > 3 else ""
            drop = Drop(reason="hidden_tests_leak", detail="; ".join(leaks[:3]) + more)
            published.append(save_status(workspace, status.dropped("publish", drop)))
            continue
        outcome = publish_task(
            staged_task_dir(workspace, status.ref), destination, status.task_id, vet=_secrets_vet(workspace)
        )
        if outcome.status == "refused":
            drop = Drop(reason=SECRET_IN_TASK, detail=outcome.detail)
            published.append(save_status(workspace, status.dropped("publish", drop)))
        elif outcome.status == "duplicate":
            drop = Drop(reason="duplicate", detail=f"a task with this id already exists at {outcome.path}")
            published.append(save_status(workspace, status.dropped("publish", drop)))
        else:
            dataset[status.task_id] = tests
            published.append(save_status(workspace, status.passed("publish", published_path=outcome.path)))
    return published
