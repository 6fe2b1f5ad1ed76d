"""Stage 8, trials: the family's control matrix against the staged task, networking off.

Keyed by the image, every file of the staged task but its identity (the task's name and
provenance in ``task.toml``) and every control's name, expected reward and action: when
none changed, the recorded matrix stands and nothing runs. Matrices are cached under
``<workspace>/cache/trials/<key>.json``, so candidates whose tasks differ only in identity
(one session logged in several formats, a session re-run) run one matrix between them and
the others record it as ``shared``. A matrix where any control misses its expected reward
drops the candidate as ``trials_failed`` (``secret_in_task`` when secrets were redacted from
the files the task runs: the redaction may be why). A candidate publish would drop as
``hidden_tests_leak`` is dropped here instead, before its matrix runs, and a hider's matrix
waits for the stage's second wave, after its shower's (``traj2env_assets.stages.hidden_tests_leak``).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from traj2env_assets.atomic_files import atomic_write_json, key_lock
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import ImageBuildFailedError
from traj2env_assets.families.contract import Drop, Family
from traj2env_assets.families.registry import Families
from traj2env_assets.layout import Workspace, keyed_file
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    CandidateStatus,
    TrialsRecord,
    candidate_files,
    read_candidate,
    read_status,
    save_status,
    staged_task_dir,
)
from traj2env_assets.stages.hidden_tests_leak import early_leaks
from traj2env_assets.stages.images.images import image_build_drop, with_image_present
from traj2env_assets.stages.task_specs import blamed_on_redaction
from traj2env_assets.verification.controls import Control
from traj2env_assets.verification.trial import MatrixResult, TrialTask, run_matrix

# task.toml tables that name and describe the task; no trial reads them.
_IDENTITY_TABLES = ("task", "metadata")


def trials_key(image_tag: str, task_dir: Path, controls: Sequence[Control]) -> str:
    digest = hashlib.sha256(image_tag.encode())
    for control in controls:
        action = control.action(task_dir)
        digest.update(f"\0{control.name}\0{control.expected_reward}\0".encode())
        digest.update(action.model_dump_json().encode())
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(task_dir).as_posix()
        digest.update(f"\0{relative}\0".encode())
        digest.update(_behaviour_bytes(path) if relative == "task.toml" else path.read_bytes())
    return digest.hexdigest()


def _behaviour_bytes(task_toml: Path) -> bytes:
    document = tomllib.loads(task_toml.read_text(encoding="utf-8"))
    return json.dumps({k: v for k, v in document.items() if k not in _IDENTITY_TABLES}, sort_keys=True).encode()


def _key(workspace: Workspace, family: Family, status: CandidateStatus) -> str:
    controls = family.controls(read_candidate(workspace, family, status))
    assert status.image is not None and status.image.tag is not None  # ready_for("trials")
    return trials_key(status.image.tag, staged_task_dir(workspace, status.ref), controls)


def _cache_path(workspace: Workspace, key: str) -> Path:
    return keyed_file(workspace.trials_cache_dir, key)


def _cached(workspace: Workspace, key: str) -> MatrixResult | None:
    try:
        return MatrixResult.model_validate_json(_cache_path(workspace, key).read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def _decided(workspace: Workspace, status: CandidateStatus, record: TrialsRecord) -> CandidateStatus:
    if not record.passed:
        drop = blamed_on_redaction(status, Drop(reason="trials_failed", detail=record.failures or ""))
        return save_status(workspace, status.dropped("trials", drop, trials=record))
    return save_status(workspace, status.passed("trials", trials=record))


def plan_trials(
    workspace: Workspace,
    families: Families,
    statuses: list[CandidateStatus],
    destination: Path,
    settled: frozenset[CandidateRef] = frozenset(),
    may_defer: bool = False,
) -> tuple[list[CandidateStatus], list[CandidateRef]]:
    """Decide every ready candidate whose matrix already ran on its key (its own, or another
    candidate's with the same key) and every one publish would drop as a leak
    (``stages.hidden_tests_leak``); return the rest to run, one candidate per key, but with
    ``may_defer`` (the first wave) not a hider whose shower has no verdict yet.
    ``statuses``: every candidate of the run's partitions; ``settled``: those whose step
    already ran in this run (they are not planned again)."""
    decided, uncached = [], []
    for status in statuses:
        if status.ref in settled or not status.ready_for("trials"):
            continue
        key = _key(workspace, families.by_name(status.family), status)
        if status.trials is not None and status.trials.key == key:
            decided.append(_decided(workspace, status, status.trials))
        elif (matrix := _cached(workspace, key)) is not None:
            decided.append(_recorded(workspace, status, key, matrix, shared=True))
        else:
            uncached.append((status, key))
    if not uncached:
        return decided, []
    run = list(({s.ref: s for s in statuses} | {s.ref: s for s in decided}).values())
    leaks = early_leaks(workspace, destination, [status for status, _ in uncached], run)
    to_run, planned = [], set()
    for status, key in uncached:
        if (drop := leaks.drops.get(status.ref)) is not None:
            decided.append(save_status(workspace, status.dropped("trials", drop)))
        elif not (may_defer and status.ref in leaks.after_showers) and key not in planned:
            planned.add(key)  # the others share its matrix when the stage settles
            to_run.append(status.ref)
    return decided, to_run


def run_candidate_trials(
    workspace: Workspace, family: Family, engine: DockerEngine, ref: CandidateRef, parallelism: int
) -> CandidateStatus:
    try:
        status = with_image_present(workspace, engine, read_status(workspace, ref))
    except ImageBuildFailedError as exc:
        return save_status(workspace, read_status(workspace, ref).dropped("images", image_build_drop(exc)))
    assert status.image is not None and status.image.tag is not None
    task = TrialTask(
        image=status.image.tag, task_dir=staged_task_dir(workspace, ref), submission_path=family.submission_path
    )
    controls = family.controls(read_candidate(workspace, family, status))
    key = trials_key(status.image.tag, task.task_dir, controls)
    with key_lock(_cache_path(workspace, key)):
        if (cached := _cached(workspace, key)) is not None:  # another worker ran it meanwhile
            return _recorded(workspace, status, key, cached, shared=True)
        matrix: MatrixResult = run_matrix(engine, task, controls, parallelism=parallelism)
        atomic_write_json(_cache_path(workspace, key), matrix)
    return _recorded(workspace, status, key, matrix, shared=False)


def _recorded(
    workspace: Workspace, status: CandidateStatus, key: str, matrix: MatrixResult, shared: bool
) -> CandidateStatus:
    trials_file = candidate_files(workspace, status.ref).trials_file
    atomic_write_json(trials_file, matrix)
    failed = [f"{r.control}: {r.reward} (expected {r.expected_reward:g})" for r in matrix.results if not r.passed]
    record = TrialsRecord(
        key=key,
        passed=matrix.passed,
        rewards=matrix.rewards(),
        failures="; ".join(failed) or None,
        seconds=matrix.seconds,
        file=str(trials_file),
        shared=shared,
    )
    return _decided(workspace, status, record)
