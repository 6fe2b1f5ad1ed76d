"""A candidate's Harbor task spec, as the image, calibration and trial stages all need it.

The spec every stage reads is the redacted one (``traj2env_assets.harbor.secrets``): the
image, calibration and the trial matrix run exactly what would be published.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePath

from traj2env_assets.conventions import sorted_json_sha256
from traj2env_assets.families.contract import CandidateRejected, Drop, Family, TaskSource
from traj2env_assets.harbor.secrets import METADATA_FILES, SECRET_IN_TASK, Redaction, describe, redact_task_spec
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import CandidateStatus, read_candidate, read_proposal
from traj2env_assets.quality.effort import EffortWindow, SessionEffort, measure_effort, window_steps
from traj2env_assets.replay.models import ReplayRecordFile
from traj2env_assets.replay.record import read_record_file
from traj2env_assets.repositories import RepositoryMetadata, RepositoryRecord
from traj2env_assets.stages.convert.conversion import read_conversion
from traj2env_assets.stages.replay.partition import read_repository


def task_spec_for(workspace: Workspace, family: Family, status: CandidateStatus, org: str) -> TaskSpec:
    """The candidate's spec, secrets redacted; raises ``CandidateRejected`` like the family does."""
    return redacted_task_spec(workspace, family, status, org).spec


def redacted_task_spec(workspace: Workspace, family: Family, status: CandidateStatus, org: str) -> Redaction:
    """The family's spec with its secrets redacted; raises ``CandidateRejected``
    (``secret_in_task``) when a detector still fires after the redaction."""
    redaction = redact_task_spec(_family_spec(workspace, family, status, org), workspace.secrets_cache_dir)
    if redaction.remaining:
        raise CandidateRejected(
            SECRET_IN_TASK, f"a secret detector still fires after redaction: {describe(redaction.remaining)}"
        )
    return redaction


def blamed_on_redaction(status: CandidateStatus, drop: Drop) -> Drop:
    """An image, calibration or trial drop of a task whose executed files were redacted: the
    redaction may be what broke it, and no check tells, so the candidate is dropped as
    ``secret_in_task`` (with the stage's own verdict in the detail)."""
    files = [path for path in status.image.redacted_files if path not in METADATA_FILES] if status.image else []
    if not files:
        return drop
    more = f" (+{len(files) - 3} more)" if len(files) > 3 else ""
    return Drop(
        reason=SECRET_IN_TASK,
        detail=f"fails with secrets redacted from {', '.join(files[:3])}{more}; {drop.reason}: {drop.detail}",
    )


def _family_spec(workspace: Workspace, family: Family, status: CandidateStatus, org: str) -> TaskSpec:
    conversion = read_conversion(workspace, status.partition_key)
    source = TaskSource(
        partition_key=status.partition_key,
        source_model=conversion.model_name if conversion else None,
        org=org,
        cache_root=workspace.cache_dir,
        wheelhouse_dir=str(workspace.wheelhouse_dir),
    )
    candidate = read_candidate(workspace, family, status)
    spec = family.task_spec(candidate, read_proposal(workspace, family, status), source)
    window = family.effort_window(candidate)
    replay = workspace.replay_dir(status.partition_key)
    record = read_record_file(replay)
    repository = read_repository(replay)
    return spec.model_copy(
        update={
            "repository": repository_metadata(repository),
            "project": project_name(record, repository),
            "session_effort": session_effort(record, spec, window) if window and record else None,
        }
    )


def session_effort(record: ReplayRecordFile, spec: TaskSpec, window: EffortWindow) -> SessionEffort | None:
    """The session's effort over ``window``, the change being the spec's reference against
    its starting project; None when the replay record lacks the window's anchors."""
    steps = window_steps(record.timeline, window)
    if steps is None:
        return None
    changed = [*spec.solution_files, *spec.solution_deleted]
    before = {path: spec.project_files.get(path) for path in changed}
    after = {path: spec.solution_files.get(path) for path in changed}
    return measure_effort(record.timeline, *steps, before, after, window.window)


def project_name(record: ReplayRecordFile | None, repository: RepositoryRecord | None) -> str | None:
    """The name of the directory the session worked in (its repository's, when one was used)."""
    if repository is not None and repository.status == "used":
        return PurePath(repository.path).name or None
    if record is None or not record.project_root:
        return None
    return PurePath(record.project_root).name or None


def repository_metadata(record: RepositoryRecord | None) -> RepositoryMetadata | None:
    """The checkout and commit the partition's replay started from, when one was used."""
    if record is None or record.status != "used" or record.commit is None:
        return None
    return RepositoryMetadata(
        path=record.path,
        branch=record.branch,
        commit=record.commit,
        files_from_repository=record.files_from_repository,
        files_differing=record.files_differing,
    )


def digest_of(*parts: object) -> str:
    """A stable key over JSON-able parts (bytes enter as their sha256)."""

    def plain(value: object) -> object:
        if isinstance(value, bytes):
            return hashlib.sha256(value).hexdigest()
        if isinstance(value, PurePath):
            return value.as_posix()
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    return sorted_json_sha256([plain(p) for p in parts])


def spec_key(spec: TaskSpec) -> str:
    # Fields at their empty default stay out: the key is what it was before they existed, so
    # no rebuild on upgrade.
    empty = {
        name
        for name in ("repository", "existing_tests_left_out", "session_effort", "project")
        if not getattr(spec, name)
    }
    return digest_of(spec.model_dump(exclude=empty or None))
