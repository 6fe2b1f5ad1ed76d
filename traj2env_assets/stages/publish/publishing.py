"""Stage 9, publish: a candidate whose trials passed moves from staging into the destination.

``traj2env_assets.stages.publish.atomic_publish`` does the move (whole or not at all, never over another
task). A task this candidate published earlier stays its own; a directory with the same
id from anywhere else makes this candidate a ``duplicate``. A candidate that hides a test
another task shows its agent (a published task or another candidate of this publish) is
``hidden_tests_leak`` (``traj2env_assets.stages.hidden_tests_leak``; the trials stage drops
early the hiders this would drop, before their matrices): the task that hides is the one
dropped, so a repair task keeps the tests it shows and the build task that would hide them
goes. "Another task" is every live (not dropped) candidate staged anywhere in the
workspace, not only this partition's: partitions publish one by one, and the hider must go
whichever partition comes first. A candidate that shows a test a task published earlier
hides is dropped the same way, since a published task is never taken back. A candidate
whose work another candidate claims first is ``duplicate_of`` it: mining decided with the
claims it saw, publishing decides again (``traj2env_assets.quality.duplicates``). Caps
(``DatasetCaps``, the ``max_tasks_per_group`` and ``max_tasks_per_project`` options): a
task whose near-duplicate group already has ``per_group`` published tasks is dropped as
``group_cap``, one whose project has ``per_project`` as ``project_cap``
(``traj2env_assets.quality.near_duplicates``); publishes take turns, so the count holds
with ``jobs`` > 1, and the first to publish keeps its place.

The last gate: every task is scanned for secrets once more as it is published (the copy
about to land in the destination). The spec was redacted before the image was built, so a
finding here is a bug, or a secret the calibrated task derived (a behaviour-gate answer);
the task is not published and the candidate is dropped as ``secret_in_task``. The task's
card (``traj2env_assets.stages.publish.card``) is added to that copy, so the scan covers it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from traj2env_assets.atomic_files import key_lock
from traj2env_assets.families.contract import Drop
from traj2env_assets.harbor.dataset import read_task_toml
from traj2env_assets.harbor.leaks import TaskTests, task_tests
from traj2env_assets.harbor.secrets import SECRET_IN_TASK, describe, scan_task_dir
from traj2env_assets.layout import CARD_FILE, TaskLayout, Workspace
from traj2env_assets.lifecycle.duplicates import dropped_as_duplicate
from traj2env_assets.lifecycle.status import (
    CandidateStatus,
    save_status,
    staged_task_dir,
)
from traj2env_assets.quality.duplicates import FixClaims
from traj2env_assets.quality.near_duplicates import near_duplicate_groups, task_signature
from traj2env_assets.stages.hidden_tests_leak import dataset_tests, leak_drop, live_staged_tests
from traj2env_assets.stages.publish.atomic_publish import publish_task
from traj2env_assets.stages.publish.card import render_card
from traj2env_assets.stages.publish.published_signatures import PublishedSignatures

GROUP_CAP = "group_cap"
PROJECT_CAP = "project_cap"


def _secrets_vet(workspace: Workspace) -> Callable[[Path], str | None]:
    def vet(task_dir: Path) -> str | None:
        findings = scan_task_dir(task_dir, workspace.secrets_cache_dir)
        if not findings:
            return None
        return f"a secret detector fires on the task being published (after redaction): {describe(findings)}"

    return vet


class DatasetCaps(BaseModel):
    """How many tasks one near-duplicate group and one project may publish."""

    model_config = ConfigDict(frozen=True)

    per_group: int = 3
    per_project: int = 25


def _over_a_cap(workspace: Workspace, destination: Path, staged_dir: Path, caps: DatasetCaps) -> Drop | None:
    """Why publishing the staged task would exceed a cap; checked against the published tasks."""
    project = read_task_toml(staged_dir).metadata.project
    published = PublishedSignatures(workspace.published_signatures_dir)
    known = (
        {
            task_dir.name: published.project_and_signature(task_dir)
            for task_dir in sorted(destination.iterdir())
            if TaskLayout(task_dir).config_path.is_file()
        }
        if destination.is_dir()
        else {}
    )
    peers = {name: ("", signature) for name, (other, signature) in known.items() if other == project}
    if project is not None and len(peers) >= caps.per_project:
        return Drop(reason=PROJECT_CAP, detail=f"{len(peers)} tasks of project {project} are published already")
    peers[staged_dir.name] = ("", task_signature(staged_dir))
    groups = near_duplicate_groups(peers)
    near = [name for name, group in groups.items() if group == groups[staged_dir.name] and name != staged_dir.name]
    if len(near) >= caps.per_group:
        more = f" (+{len(near) - 3} more)" if len(near) > 3 else ""
        return Drop(reason=GROUP_CAP, detail=f"its near-duplicates are published already: {', '.join(near[:3])}{more}")
    return None


def publish(
    workspace: Workspace, destination: Path, statuses: list[CandidateStatus], caps: DatasetCaps | None = None
) -> list[CandidateStatus]:
    caps = caps or DatasetCaps()
    published = []
    ready = [status for status in statuses if status.ready_for("publish")]
    staged = live_staged_tests(workspace) if ready else {}
    staged.update({status.task_id: task_tests(staged_task_dir(workspace, status.ref)) for status in ready})
    dataset = dataset_tests(destination)
    claims = FixClaims(workspace.dedupe_dir)
    for status in ready:
        if status.published_path and Path(status.published_path).is_dir():
            published.append(save_status(workspace, status.passed("publish")))
            continue
        # One publish at a time per workspace: the caps count what is published.
        with key_lock(workspace.dataset_lock_key):
            published.append(_publish_one(workspace, destination, status, staged, dataset, claims, caps))
    return published


def _publish_one(
    workspace: Workspace,
    destination: Path,
    status: CandidateStatus,
    staged: dict[str, TaskTests],
    dataset: dict[str, TaskTests],
    claims: FixClaims,
    caps: DatasetCaps,
) -> CandidateStatus:
    if (duplicate := dropped_as_duplicate(workspace, status, "publish")) is not None:
        return duplicate
    tests = staged[status.task_id]
    live = [other for task_id, other in staged.items() if task_id != status.task_id]
    if (leak := leak_drop(tests, live, dataset)) is not None:
        return save_status(workspace, status.dropped("publish", leak))
    staged_dir = staged_task_dir(workspace, status.ref)
    if (capped := _over_a_cap(workspace, destination, staged_dir, caps)) is not None:
        return save_status(workspace, status.dropped("publish", capped))
    outcome = publish_task(
        staged_dir,
        destination,
        status.task_id,
        vet=_secrets_vet(workspace),
        added={CARD_FILE: render_card(staged_dir, status)},
    )
    if outcome.status == "refused":
        return save_status(workspace, status.dropped("publish", Drop(reason=SECRET_IN_TASK, detail=outcome.detail)))
    if outcome.status == "duplicate":
        drop = Drop(reason="duplicate", detail=f"a task with this id already exists at {outcome.path}")
        return save_status(workspace, status.dropped("publish", drop))
    dataset[status.task_id] = tests
    if status.work_key:
        claims.mark_published(status.work_key, status.task_id)
    return save_status(workspace, status.passed("publish", published_path=outcome.path))


def published_cards(statuses: list[CandidateStatus]) -> list[str]:
    """The cards of the published tasks among ``statuses``, as written next to each task."""
    paths = [TaskLayout(Path(status.published_path)).card_path for status in statuses if status.published_path]
    return [path.read_text(encoding="utf-8") for path in paths if path.is_file()]
