"""The replay stage for one partition: read the converted trajectory, replay, write.

Input ``<workspace>/conversion/<key>/trajectory.json``; output the whole directory
``<workspace>/replay/<key>/`` written atomically, with ``outcome.json`` last in
meaning: it holds the input hash and code version, so an unchanged rerun is a cache
hit. A trajectory the scan gate blocked (or not yet scanned), a missing conversion or an invalid document
is recorded as ``skipped`` with a reason, never raised; so is an unexpected error in
replay itself (``replay_error``, with the exception in ``detail``), so one trajectory
cannot fail a batch run.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from atif import Trajectory
from pydantic import BaseModel, ValidationError

from traj2env_assets.atomic_files import atomic_directory, atomic_write_json
from traj2env_assets.layout import ReplayLayout, Workspace
from traj2env_assets.replay.engine import ReplayResult, replay_streamed, replay_trajectory, session_cwd
from traj2env_assets.replay.models import ReplayFidelity, ReplayOutcome
from traj2env_assets.replay.record import write_record
from traj2env_assets.replay.stream import StepsNotLast, StreamedTrajectory, StreamError, read_streamed
from traj2env_assets.repositories import (
    Repositories,
    RepositoryRecord,
    find_coverage,
    judge_agreement,
    load_files,
    resolve_commit,
    session_start,
)
from traj2env_assets.sources import source_for_key
from traj2env_assets.stages.scan.gate import read_verdict

REPLAY_CODE_VERSION = "replay-5"
STREAM_THRESHOLD_BYTES = 64 * 1024 * 1024
"""Trajectory files larger than this are replayed a step at a time."""


class ReplayStageResult(BaseModel):
    partition_key: str
    path: Path
    outcome: ReplayOutcome
    cached: bool
    fidelity: ReplayFidelity | None = None
    repository: RepositoryRecord | None = None

    @property
    def data_version(self) -> str:
        return hashlib.sha256(f"{self.outcome.input_hash}:{self.outcome.code_version}".encode()).hexdigest()[:16]


def _input_hash(source: Path, gate_reason: str | None, repository: RepositoryRecord | None = None) -> str:
    """SHA-256 of the trajectory file's bytes (read in chunks), the gate's word and the
    repository commit and tree the replay starts from (an unchanged pair reruns nothing)."""
    digest = hashlib.sha256()
    if source.is_file():
        with source.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    else:
        digest.update(b"<missing>")
    digest.update((gate_reason or "allowed").encode())
    if repository is not None:
        digest.update(repository.key.encode())
    return digest.hexdigest()


def _empty(directory: Path) -> None:
    """Drop whatever a failed replay left in the staging directory (a spilled timeline)."""
    shutil.rmtree(directory)
    directory.mkdir()


def _first_timestamp(streamed: StreamedTrajectory) -> str | None:
    return next((step.timestamp for step in streamed.steps() if step.timestamp), None)


def _head_and_start(source: Path) -> tuple[StreamedTrajectory, str | None]:
    """The trajectory without its steps and its first timestamp, reading no more than that."""
    try:
        # The conversion stage writes steps last (stages/convert/conversion.py trajectory_json).
        streamed = read_streamed(source, steps_last=True)
        return streamed, _first_timestamp(streamed)
    except StepsNotLast:
        streamed = read_streamed(source)
        return streamed, _first_timestamp(streamed)


def replay_file(source: Path, staging: Path, seed: dict[str, str] | None = None) -> ReplayResult:
    """Replay the trajectory file; a large one a step at a time (see :mod:`.stream`)."""
    if source.stat().st_size > STREAM_THRESHOLD_BYTES:
        try:
            return replay_streamed(read_streamed(source, steps_last=True), staging, seed)
        except StepsNotLast:
            return replay_streamed(read_streamed(source), staging, seed)
    return replay_trajectory(Trajectory.model_validate_json(source.read_bytes()), seed=seed)


def repository_for(
    workspace: Workspace, partition_key: str, source: Path, repositories: Repositories
) -> RepositoryRecord | None:
    """The checkout covering the session and the commit current at its first timestamp
    (read from the trajectory's head and first steps only), or None when none covers it."""
    try:
        streamed, start = _head_and_start(source)
    except (ValidationError, StreamError):
        return None
    try:
        session_file: Path | None = Path(source_for_key(workspace, partition_key).path)
    except KeyError:
        session_file = None
    coverage = find_coverage(repositories, session_cwd(streamed.header), session_file)
    return None if coverage is None else resolve_commit(coverage, session_start(start))


def _replay_on_repository(
    source: Path, staging: Path, record: RepositoryRecord
) -> tuple[ReplayResult, RepositoryRecord]:
    """Replay on the commit's files; when the log does not confirm them, again without."""
    record, files = load_files(record)
    if not files:
        return replay_file(source, staging), record
    result = replay_file(source, staging, files)
    check = result.seed_check
    record = judge_agreement(record, check.agreeing if check else 0, check.differing if check else 0, len(files))
    if record.status == "used":
        return result, record
    _empty(staging)
    return replay_file(source, staging), record


def read_repository(target: Path) -> RepositoryRecord | None:
    """``repository.json`` of a replay directory (only when a checkout covered the session)."""
    try:
        return RepositoryRecord.model_validate_json(ReplayLayout(target).repository_file.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def gate_reason(workspace: Workspace, partition_key: str) -> str | None:
    """None when the scan gate lets the trajectory through, else the skip reason."""
    verdict = read_verdict(workspace, partition_key)
    if verdict is None:
        return "scan_missing"
    return None if verdict.allows_downstream else "gate"


def read_outcome(target: Path) -> ReplayOutcome | None:
    """``outcome.json`` of a replay directory, or None when it is missing or unreadable."""
    try:
        return ReplayOutcome.model_validate_json(ReplayLayout(target).outcome_file.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def read_fidelity(target: Path) -> ReplayFidelity | None:
    """``fidelity.json`` of a replay directory (written only for replayed trajectories)."""
    try:
        return ReplayFidelity.model_validate_json(ReplayLayout(target).fidelity_file.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def _read_cached(target: Path, input_hash: str, code_version: str) -> ReplayOutcome | None:
    outcome = read_outcome(target)
    if outcome is None or outcome.input_hash != input_hash or outcome.code_version != code_version:
        return None
    return outcome


def replay_partition(
    workspace: Workspace,
    partition_key: str,
    code_version: str = REPLAY_CODE_VERSION,
    repositories: Repositories | None = None,
) -> ReplayStageResult:
    """``repositories``: the ``source.repositories`` option (None: replay alone)."""
    target = workspace.replay_dir(partition_key)
    source = workspace.trajectory_file(partition_key)
    blocked = gate_reason(workspace, partition_key)
    repository = None
    if repositories is not None and blocked is None and source.is_file():
        repository = repository_for(workspace, partition_key, source, repositories)
    input_hash = _input_hash(source, blocked, repository)
    cached = _read_cached(target, input_hash, code_version)
    if cached is not None:
        return ReplayStageResult(
            partition_key=partition_key,
            path=target,
            outcome=cached,
            cached=True,
            fidelity=read_fidelity(target),
            repository=read_repository(target),
        )

    outcome = ReplayOutcome(status="skipped", input_hash=input_hash, code_version=code_version)
    fidelity: ReplayFidelity | None = None
    with atomic_directory(target) as staging:
        if blocked is not None:
            outcome.reason = blocked
        elif not source.is_file():
            outcome.reason = "conversion_missing"
        else:
            try:
                if repository is None:
                    result = replay_file(source, staging)
                else:
                    result, repository = _replay_on_repository(source, staging, repository)
            except (ValidationError, StreamError) as error:
                outcome.reason = "invalid_trajectory"
                outcome.detail = str(error)[:2000]
                _empty(staging)
            except Exception as error:  # noqa: BLE001 - one trajectory must not fail a batch run
                outcome.reason = "replay_error"
                outcome.detail = f"{type(error).__name__}: {error}"[:2000]
                _empty(staging)
            else:
                try:
                    write_record(result, staging)
                except Exception as error:  # noqa: BLE001 - one trajectory must not fail a batch run
                    outcome.reason = "replay_error"
                    outcome.detail = f"{type(error).__name__}: {error}"[:2000]
                    _empty(staging)
                else:
                    outcome.status = "replayed"
                    fidelity = result.record.fidelity
                    if repository is not None:
                        atomic_write_json(ReplayLayout(staging).repository_file, repository)
        atomic_write_json(ReplayLayout(staging).outcome_file, outcome)
    return ReplayStageResult(
        partition_key=partition_key,
        path=target,
        outcome=outcome,
        cached=False,
        fidelity=fidelity,
        repository=repository if outcome.status == "replayed" else None,
    )
