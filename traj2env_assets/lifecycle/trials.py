"""Stage 8, trials: the family's control matrix against the staged task, networking off.

Keyed by the image, every file of the staged task and the controls' names: when none
changed, the recorded matrix stands and nothing runs. A matrix where any control
misses its expected reward drops the candidate as ``trials_failed``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.trial import MatrixResult, TrialTask
from traj2env_assets.families.contract import Drop
from traj2env_assets.families.registry import family_named
from traj2env_assets.lifecycle.status import (
    TRIALS_FILE,
    CandidateRef,
    CandidateStatus,
    TrialsRecord,
    candidate_dir,
    read_candidate,
    read_status,
    save_status,
    staged_task_dir,
)
from traj2env_assets.workspace import Workspace, atomic_write_json


def trials_key(image_tag: str, task_dir: Path, controls: list[str]) -> str:
    digest = hashlib.sha256(f"{image_tag}\0{','.join(controls)}".encode())
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        digest.update(f"\0{path.relative_to(task_dir).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(workspace: Workspace, status: CandidateStatus) -> str:
    family = family_named(status.family)
    controls = [control.name for control in family.controls(read_candidate(workspace, status))]
    assert status.image is not None and status.image.tag is not None  # ready_for("trials")
    return trials_key(status.image.tag, staged_task_dir(workspace, status.ref), controls)


def _decided(workspace: Workspace, status: CandidateStatus, record: TrialsRecord) -> CandidateStatus:
    if not record.passed:
        drop = Drop(reason="trials_failed", detail=record.failures or "")
        return save_status(workspace, status.dropped("trials", drop, trials=record))
    return save_status(workspace, status.passed("trials", trials=record))


def plan_trials(
    workspace: Workspace, statuses: list[CandidateStatus]
) -> tuple[list[CandidateStatus], list[CandidateRef]]:
    """Decide every ready candidate whose matrix already ran on this key; return the rest to run."""
    decided, to_run = [], []
    for status in statuses:
        if not status.ready_for("trials"):
            continue
        if status.trials is not None and status.trials.key == _key(workspace, status):
            decided.append(_decided(workspace, status, status.trials))
        else:
            to_run.append(status.ref)
    return decided, to_run


def run_candidate_trials(
    workspace: Workspace, engine: DockerEngine, ref: CandidateRef, parallelism: int
) -> CandidateStatus:
    status = read_status(workspace, ref)
    family = family_named(status.family)
    assert status.image is not None and status.image.tag is not None
    task = TrialTask(
        image=status.image.tag, task_dir=staged_task_dir(workspace, ref), submission_path=family.submission_path
    )
    controls = family.controls(read_candidate(workspace, status))
    matrix: MatrixResult = engine.run_matrix(task, controls=controls, parallelism=parallelism)
    trials_file = candidate_dir(workspace, ref) / TRIALS_FILE
    atomic_write_json(trials_file, matrix)
    failed = [f"{r.control}: {r.reward} (expected {r.expected_reward:g})" for r in matrix.results if not r.passed]
    record = TrialsRecord(
        key=_key(workspace, status),
        passed=matrix.passed,
        rewards=matrix.rewards(),
        failures="; ".join(failed) or None,
        seconds=matrix.seconds,
        file=str(trials_file),
    )
    return _decided(workspace, status, record)
