"""A reviewer's accept or reject, recorded in the dataset manifest and the task's label.

A generated task is ``unverified`` (``[metadata.repo2env] evaluation.label``) until a
reviewer accepts it, as the product notes' quality loop says; a rejection keeps it (or
puts it back) at ``unverified`` and is recorded with its note. The manifest keeps every
decision; the latest per task is the one in force.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_write_json, atomic_write_text
from traj2env_assets.harbor.dataset import (
    MANIFEST_FILE,
    Decision,
    TaskReview,
    dataset_lock,
    read_manifest,
    read_task_toml,
    write_dataset,
)
from traj2env_assets.layout import TaskLayout
from traj2env_assets.stages.report.funnel import refresh_dataset_quality

LABELS: dict[Decision, Literal["verified", "unverified"]] = {"accept": "verified", "reject": "unverified"}


class ReviewRow(BaseModel):
    task_id: str
    family: str
    difficulty: str
    label: str
    decision: Decision | None
    card: Path | None


class UnknownTaskError(ValueError):
    """No published task of that id in the dataset."""


def review_rows(dataset: Path) -> list[ReviewRow]:
    """Every task of the manifest with its label, difficulty and latest decision."""
    manifest = read_manifest(dataset)
    latest = {review.task_id: review.decision for review in manifest.reviews}
    rows = []
    for task in manifest.tasks:
        toml = read_task_toml(dataset / task.task_id)
        card = TaskLayout(dataset / task.task_id).card_path
        rows.append(
            ReviewRow(
                task_id=task.task_id,
                family=task.family,
                difficulty=toml.metadata.difficulty,
                label=toml.metadata.repo2env.evaluation.label,
                decision=latest.get(task.task_id),
                card=card if card.is_file() else None,
            )
        )
    return rows


def record_review(dataset: Path, task_id: str, decision: Decision, note: str = "", reviewer: str = "") -> TaskReview:
    """Set the task's evaluation label from ``decision`` and add the review to the manifest."""
    with dataset_lock(dataset):
        manifest = read_manifest(dataset)
        if task_id not in {task.task_id for task in manifest.tasks}:
            raise UnknownTaskError(f"{dataset} has no task {task_id!r} (see `traj2env review {dataset}`)")
        toml = read_task_toml(dataset / task_id)
        toml.metadata.repo2env.evaluation.label = LABELS[decision]
        atomic_write_text(TaskLayout(dataset / task_id).config_path, toml.to_toml())
        review = TaskReview(
            task_id=task_id,
            decision=decision,
            note=note,
            reviewer=reviewer,
            at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        # The task's content hash changed with its label: rebuild the manifest, then add the review.
        rebuilt = write_dataset(
            dataset, name=manifest.name, org=manifest.org, seed=manifest.seed, fraction=manifest.test_fraction
        )
        atomic_write_json(dataset / MANIFEST_FILE, rebuilt.model_copy(update={"reviews": [*rebuilt.reviews, review]}))
        refresh_dataset_quality(dataset)
    return review
