"""The repair family's stages over the workspace, one function per Dagster asset.

Files under ``<workspace>/repair/<partition key>/``:

- ``mining.json``              :class:`RepairMining` — every candidate's summary and the cache key
- ``<task id>/candidate.json`` :class:`RepairCandidate` — the project, the fix, the check
- ``<task id>/progress.json``  :class:`CandidateProgress` — what each later stage decided
- ``<task id>/staging/<task id>/`` the Harbor task, staged privately until its trials pass

Every stage skips work whose inputs did not change: mining is keyed by the replay's
input hash, calibration and trials by the image's content hash.

Skip reasons of the later stages (exact strings): ``dependencies_not_installable``
(a Node check whose package.json the replay never saw), ``check_not_verifiable``
(no failing test ids the verifier can track), ``image_build_failed``,
``check_passes_before_fix``, ``check_fails_differently``, ``trials_failed``,
``duplicate`` (a task with this id is already published).
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from traj2env_assets.checks import parse_check_result
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import ImageBuildFailedError
from traj2env_assets.docker_engine.sandbox import ContainerLimits, exec_with_deadline, sandbox
from traj2env_assets.docker_engine.trial import TrialTask
from traj2env_assets.families.repair.candidates import RepairCandidate, mine_repair_candidates
from traj2env_assets.families.repair.task import (
    DependenciesNotInstallable,
    UnverifiableCheck,
    repair_task_spec,
)
from traj2env_assets.formats.stage import read_conversion
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.publish import publish_task
from traj2env_assets.replay import ReplayRecord
from traj2env_assets.replay.models import ReplayOutcome
from traj2env_assets.replay.stage import read_outcome
from traj2env_assets.workspace import STAGE_REPLAY, Workspace, atomic_write_json

STAGE_REPAIR = "repair"
MINER_VERSION = "1"
CALIBRATION_TIMEOUT_S = 300
T = TypeVar("T")
CandidateStatus = Literal["candidate", "dropped", "calibrated", "trials_passed", "published"]


class CandidateSummary(BaseModel):
    task_id: str
    status: str
    reason: str | None = None
    detail: str | None = None
    check: str
    tool: str
    failing_ids: list[str] = Field(default_factory=list)
    fixed_paths: list[str] = Field(default_factory=list)


class RepairMining(BaseModel):
    """``mining.json``."""

    input_hash: str
    miner_version: str = MINER_VERSION
    skipped_reason: str | None = None
    candidates: list[CandidateSummary] = Field(default_factory=list)
    cached: bool = False


class Calibration(BaseModel):
    image: str
    passed: bool | None = None
    exit_code: int | None = None
    failing_ids: list[str] = Field(default_factory=list)
    output_tail: str = ""


class CandidateProgress(BaseModel):
    """``<task id>/progress.json``: the candidate's state after the latest stage."""

    task_id: str
    status: CandidateStatus
    reason: str | None = None
    detail: str | None = None
    image: str | None = None
    image_content_hash: str | None = None
    image_built: bool | None = None
    calibration: Calibration | None = None
    trial_rewards: dict[str, float | None] = Field(default_factory=dict)
    trials_passed: bool | None = None
    trials_failures: str | None = None
    trials_key: str | None = None
    """Image tag and task-directory hash the trials ran against: a change to either reruns them."""
    trials_seconds: float | None = None
    trials_file: str | None = None
    published_path: str | None = None

    def drop(self, reason: str, detail: str) -> CandidateProgress:
        return self.model_copy(update={"status": "dropped", "reason": reason, "detail": detail})


def partition_dir(workspace: Workspace, partition_key: str) -> Path:
    return workspace.stage_dir(STAGE_REPAIR, partition_key)


def _candidate_dir(workspace: Workspace, partition_key: str, task_id: str) -> Path:
    return partition_dir(workspace, partition_key) / task_id


def read_mining(workspace: Workspace, partition_key: str) -> RepairMining | None:
    path = partition_dir(workspace, partition_key) / "mining.json"
    try:
        return RepairMining.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def read_candidate(workspace: Workspace, partition_key: str, task_id: str) -> RepairCandidate:
    path = _candidate_dir(workspace, partition_key, task_id) / "candidate.json"
    return RepairCandidate.model_validate_json(path.read_text(encoding="utf-8"))


def read_progress(workspace: Workspace, partition_key: str, task_id: str) -> CandidateProgress | None:
    path = _candidate_dir(workspace, partition_key, task_id) / "progress.json"
    try:
        return CandidateProgress.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def _save_progress(workspace: Workspace, partition_key: str, progress: CandidateProgress) -> CandidateProgress:
    atomic_write_json(_candidate_dir(workspace, partition_key, progress.task_id) / "progress.json", progress)
    return progress


def _replay_input_hash(workspace: Workspace, partition_key: str) -> tuple[str, ReplayOutcome | None]:
    outcome = read_outcome(workspace.stage_dir(STAGE_REPLAY, partition_key))
    if outcome is None:
        return "<no replay>", None
    return hashlib.sha256(f"{outcome.input_hash}\0{outcome.code_version}".encode()).hexdigest(), outcome


def mine_partition(workspace: Workspace, partition_key: str) -> RepairMining:
    """Mine the partition's replay record; unchanged input → the previous result."""
    input_hash, outcome = _replay_input_hash(workspace, partition_key)
    previous = read_mining(workspace, partition_key)
    if previous and previous.input_hash == input_hash and previous.miner_version == MINER_VERSION:
        return previous.model_copy(update={"cached": True})
    mining = RepairMining(input_hash=input_hash)
    if outcome is None or outcome.status != "replayed":
        mining.skipped_reason = outcome.reason if outcome else "replay_missing"
    else:
        record = ReplayRecord.load(workspace.stage_dir(STAGE_REPLAY, partition_key))
        for candidate in mine_repair_candidates(record, partition_key):
            atomic_write_json(_candidate_dir(workspace, partition_key, candidate.task_id) / "candidate.json", candidate)
            _save_progress(
                workspace,
                partition_key,
                CandidateProgress(
                    task_id=candidate.task_id, status=candidate.status, reason=candidate.reason, detail=candidate.detail
                ),
            )
            mining.candidates.append(
                CandidateSummary(
                    task_id=candidate.task_id,
                    status=candidate.status,
                    reason=candidate.reason,
                    detail=candidate.detail,
                    check=candidate.check.command.strip(),
                    tool=candidate.check.tool,
                    failing_ids=candidate.failing_ids,
                    fixed_paths=sorted([*candidate.fixed_files, *candidate.deleted_files]),
                )
            )
    atomic_write_json(partition_dir(workspace, partition_key) / "mining.json", mining)
    return mining


def active_candidates(workspace: Workspace, partition_key: str) -> list[str]:
    mining = read_mining(workspace, partition_key)
    return [c.task_id for c in mining.candidates if c.status == "candidate"] if mining else []


def staged_task_dir(workspace: Workspace, partition_key: str, task_id: str) -> Path:
    return _candidate_dir(workspace, partition_key, task_id) / "staging" / task_id


def trials_key(image_tag: str, task_dir: Path) -> str:
    """The image plus every file of the staged task (tests, solution, instruction)."""
    digest = hashlib.sha256(image_tag.encode())
    for path in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        digest.update(f"\0{path.relative_to(task_dir).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _calibrate(engine: DockerEngine, image: str, candidate: RepairCandidate) -> Calibration:
    """Run the recorded check in the image, before the fix, with networking off."""
    workdir = "/workspace/" + candidate.cwd if candidate.cwd else "/workspace"
    limits = ContainerLimits(memory=engine.container_memory, cpus=engine.trial_cpus, pids=engine.pids_limit)
    with sandbox(engine.client, image, role="probe", limits=limits, labels=engine.container_labels) as container:
        run = exec_with_deadline(
            container,
            shlex.join(candidate.check.argv) + " 2>&1",
            timeout_s=CALIBRATION_TIMEOUT_S,
            workdir=workdir,
            env={"CI": "1", "NO_COLOR": "1"},
        )
    result = parse_check_result(candidate.check, run.output_tail, run.exit_code)
    return Calibration(
        image=image,
        passed=result.passed,
        exit_code=run.exit_code,
        failing_ids=result.failing_ids,
        output_tail=run.output_tail[-2000:],
    )


def _calibration_verdict(candidate: RepairCandidate, calibration: Calibration) -> tuple[str, str] | None:
    if calibration.passed:
        return "check_passes_before_fix", "the check passes in the image before the fix"
    if set(calibration.failing_ids) != set(candidate.failing_ids):
        expected = ", ".join(sorted(candidate.failing_ids)) or "none"
        got = ", ".join(sorted(calibration.failing_ids)) or "none"
        return "check_fails_differently", f"recorded failures: {expected}; in the image: {got}"
    return None


def prepare_candidate(
    workspace: Workspace,
    partition_key: str,
    task_id: str,
    engine: DockerEngine,
    *,
    org: str,
    source_model: str | None,
) -> CandidateProgress:
    """Write the task, build its image and check the failure reproduces; cached by image hash."""
    candidate = read_candidate(workspace, partition_key, task_id)
    progress = CandidateProgress(task_id=task_id, status="candidate")
    try:
        spec = repair_task_spec(candidate, source_trace=partition_key, source_model=source_model, org=org)
    except DependenciesNotInstallable as exc:
        return _save_progress(workspace, partition_key, progress.drop("dependencies_not_installable", str(exc)))
    except UnverifiableCheck as exc:
        return _save_progress(workspace, partition_key, progress.drop("check_not_verifiable", str(exc)))
    written = write_task(spec, staged_task_dir(workspace, partition_key, task_id).parent)
    try:
        image = engine.build(written.environment_dir)
    except ImageBuildFailedError as exc:
        return _save_progress(
            workspace, partition_key, progress.drop("image_build_failed", f"{exc}\n{exc.log_tail}"[-4000:])
        )
    progress = progress.model_copy(
        update={
            "image": image.tag,
            "image_content_hash": image.content_hash,
            "image_built": image.built,
            "trials_key": trials_key(image.tag, written.path),
        }
    )
    previous = read_progress(workspace, partition_key, task_id)
    if previous and previous.calibration and previous.calibration.image == image.tag:
        calibration = previous.calibration
    else:
        calibration = _calibrate(engine, image.tag, candidate)
    progress = progress.model_copy(update={"calibration": calibration})
    verdict = _calibration_verdict(candidate, calibration)
    if verdict is not None:
        return _save_progress(workspace, partition_key, progress.drop(*verdict))
    # Trials from an earlier run of the same image still stand; a task this candidate
    # already published stays its own (not a duplicate of another).
    if previous and previous.trials_key == progress.trials_key and previous.trials_passed is not None:
        progress = progress.model_copy(
            update={
                "trial_rewards": previous.trial_rewards,
                "trials_passed": previous.trials_passed,
                "trials_failures": previous.trials_failures,
                "trials_seconds": previous.trials_seconds,
                "trials_file": previous.trials_file,
            }
        )
    if previous and previous.published_path:
        progress = progress.model_copy(update={"published_path": previous.published_path})
    return _save_progress(workspace, partition_key, progress.model_copy(update={"status": "calibrated"}))


def trial_candidate(
    workspace: Workspace, partition_key: str, task_id: str, engine: DockerEngine, *, parallelism: int
) -> tuple[CandidateProgress, bool]:
    """Run the control matrix; returns the progress and whether trials actually ran."""
    progress = read_progress(workspace, partition_key, task_id)
    if progress is None or progress.status not in ("calibrated", "trials_passed", "published"):
        raise ValueError(f"{task_id} is not ready for trials")
    if progress.trials_passed is not None:
        if not progress.trials_passed:
            return _save_progress(
                workspace, partition_key, progress.drop("trials_failed", progress.trials_failures or "")
            ), False
        return _save_progress(workspace, partition_key, progress.model_copy(update={"status": "trials_passed"})), False
    staged = staged_task_dir(workspace, partition_key, task_id)
    image = progress.image or ""
    matrix = engine.run_matrix(TrialTask(image=image, task_dir=staged), parallelism=parallelism)
    trials_file = _candidate_dir(workspace, partition_key, task_id) / "trials.json"
    atomic_write_json(trials_file, matrix)
    failed = [f"{r.control}: {r.reward} (expected {r.expected_reward})" for r in matrix.results if not r.passed]
    progress = progress.model_copy(
        update={
            "trial_rewards": matrix.rewards(),
            "trials_passed": matrix.passed,
            "trials_failures": "; ".join(failed) or None,
            "trials_seconds": matrix.seconds,
            "trials_file": str(trials_file),
        }
    )
    if not matrix.passed:
        return _save_progress(workspace, partition_key, progress.drop("trials_failed", progress.trials_failures or "")), True
    return _save_progress(workspace, partition_key, progress.model_copy(update={"status": "trials_passed"})), True


def publish_candidate(workspace: Workspace, partition_key: str, task_id: str, destination: Path) -> CandidateProgress:
    progress = read_progress(workspace, partition_key, task_id)
    if progress is None or progress.status not in ("trials_passed", "published"):
        raise ValueError(f"{task_id} has not passed its trials")
    if progress.published_path and Path(progress.published_path).is_dir():
        # Published by an earlier run of this same candidate: not a duplicate of another.
        return _save_progress(workspace, partition_key, progress.model_copy(update={"status": "published"}))
    outcome = publish_task(staged_task_dir(workspace, partition_key, task_id), destination, task_id)
    if outcome.status == "duplicate":
        return _save_progress(
            workspace, partition_key, progress.drop("duplicate", f"a task with this id already exists at {outcome.path}")
        )
    return _save_progress(
        workspace, partition_key, progress.model_copy(update={"status": "published", "published_path": outcome.path})
    )


def for_each_candidate(
    work: Callable[[str, str], T], pairs: list[tuple[str, str]], jobs: int
) -> list[T]:
    """Run ``work(partition_key, task_id)`` for every pair, ``jobs`` at a time (Docker does the heavy lifting)."""
    if jobs <= 1 or len(pairs) <= 1:
        return [work(key, task_id) for key, task_id in pairs]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda pair: work(*pair), pairs))


def _by_partition(keys: list[str], pairs: list[tuple[str, str]], results: list[T]) -> dict[str, list[T]]:
    grouped: dict[str, list[T]] = {key: [] for key in keys}
    for (key, _), result in zip(pairs, results, strict=True):
        grouped[key].append(result)
    return grouped


def prepare_partitions(
    workspace: Workspace, keys: list[str], engine: DockerEngine, *, jobs: int, org: str
) -> dict[str, list[CandidateProgress]]:
    """Images and calibration for every active candidate of ``keys``, ``jobs`` candidates at a time."""
    pairs = [(key, task_id) for key in keys for task_id in active_candidates(workspace, key)]

    def prepare(key: str, task_id: str) -> CandidateProgress:
        conversion = read_conversion(workspace, key)
        model = conversion.model_name if conversion else None
        return prepare_candidate(workspace, key, task_id, engine, org=org, source_model=model)

    return _by_partition(keys, pairs, for_each_candidate(prepare, pairs, jobs))


def trial_partitions(
    workspace: Workspace, keys: list[str], engine: DockerEngine, *, jobs: int
) -> dict[str, list[tuple[CandidateProgress, bool]]]:
    """The control matrix for every calibrated candidate of ``keys``; (progress, whether trials ran)."""
    pairs = [
        (key, task_id)
        for key in keys
        for task_id in active_candidates(workspace, key)
        if (progress := read_progress(workspace, key, task_id))
        and progress.status in ("calibrated", "trials_passed", "published")
    ]
    # Candidates run side by side; a lone candidate runs its controls side by side instead.
    parallelism = jobs if len(pairs) == 1 else 1

    def trial(key: str, task_id: str) -> tuple[CandidateProgress, bool]:
        return trial_candidate(workspace, key, task_id, engine, parallelism=parallelism)

    return _by_partition(keys, pairs, for_each_candidate(trial, pairs, jobs))


def publish_partition(workspace: Workspace, key: str, destination: Path) -> list[CandidateProgress]:
    """Publish every candidate of ``key`` whose trials passed."""
    published = []
    for task_id in active_candidates(workspace, key):
        progress = read_progress(workspace, key, task_id)
        if progress and progress.status in ("trials_passed", "published"):
            published.append(publish_candidate(workspace, key, task_id, destination))
    return published


def progress_table(workspace: Workspace, key: str) -> str:
    """Every candidate of ``key`` as a markdown table: status, reason, trial rewards."""
    mining = read_mining(workspace, key)
    rows = []
    for summary in mining.candidates if mining else []:
        progress = read_progress(workspace, key, summary.task_id)
        status, reason = (progress.status, progress.reason) if progress else (summary.status, summary.reason)
        rewards = " ".join(
            f"{name}={reward:g}" for name, reward in (progress.trial_rewards if progress else {}).items() if reward is not None
        )
        rows.append(f"| {summary.task_id} | `{summary.check}` | {status} | {reason or ''} | {rewards} |")
    return "| task | check | status | reason | trial rewards |\n|---|---|---|---|---|\n" + "\n".join(rows)
