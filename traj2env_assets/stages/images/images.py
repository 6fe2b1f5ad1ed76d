"""Stage 6, task images: the Harbor task staged privately, and one environment image per candidate.

Planning is cheap and needs no build: the family's task spec is written to
``<task id>/staging/<task id>/`` (kept as it is when the spec did not change) and the
image of its ``environment/`` is looked up by content hash. Only candidates without an
image go on to :func:`build_candidate_image`, one Dagster op each. Skip reasons: the
family's (``CandidateRejected``), ``secret_in_task`` (a secret detector still fires after
redaction, ``traj2env_assets.harbor.secrets``; also a failed build of an environment the
redaction changed) and ``image_build_failed``.

The image is a cache of the staged ``environment/``: the Docker stages after this one call
:func:`with_image_present`, which rebuilds it (same content, same tag) when it left the
engine between stages — ``traj2env prune``, ``docker image prune``, another process's
cleanup — instead of failing on a missing image (the engine would try to pull it).
"""

from __future__ import annotations

import shutil

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import BuiltImage, ImageBuildFailedError
from traj2env_assets.families.contract import CandidateRejected, Drop, Family
from traj2env_assets.families.registry import Families
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.layout import TaskLayout, Workspace
from traj2env_assets.lifecycle.duplicates import dropped_as_duplicate
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    CandidateStatus,
    ImageRecord,
    read_status,
    save_status,
    staged_task_dir,
)
from traj2env_assets.stages.task_specs import blamed_on_redaction, redacted_task_spec, spec_key

LOG_TAIL_CHARS = 4000


def _with_image(status: CandidateStatus, image: BuiltImage) -> CandidateStatus:
    return status.passed("images", image=_image_record(status, image))


def _image_record(status: CandidateStatus, image: BuiltImage) -> ImageRecord:
    assert status.image is not None  # staged before any image is looked up
    return status.image.model_copy(
        update={"tag": image.tag, "content_hash": image.content_hash, "built": image.built, "seconds": image.seconds}
    )


def stage_task(workspace: Workspace, family: Family, status: CandidateStatus, org: str) -> CandidateStatus:
    """Write the candidate's Harbor task, secrets redacted (unless the same spec is staged already)."""
    try:
        redaction = redacted_task_spec(workspace, family, status, org)
    except CandidateRejected as rejected:
        # No task, so no staging directory either (an earlier spec may have left one).
        shutil.rmtree(staged_task_dir(workspace, status.ref).parent, ignore_errors=True)
        return save_status(workspace, status.dropped("images", rejected.drop, image=None))
    key = spec_key(redaction.spec)
    staged = staged_task_dir(workspace, status.ref)
    if not (status.image and status.image.spec_key == key and staged.is_dir()):
        write_task(redaction.spec, staged.parent)
    record = ImageRecord(
        spec_key=key,
        staged_path=str(staged),
        redactions=[str(finding) for finding in redaction.findings],
        redacted_files=redaction.redacted_files,
    )
    # Staged but without an image yet: the candidate has passed the proposal, nothing after it.
    return save_status(workspace, status.passed("proposals", image=record))


def plan_images(
    workspace: Workspace, families: Families, engine: DockerEngine, statuses: list[CandidateStatus], org: str
) -> tuple[list[CandidateStatus], list[CandidateRef]]:
    """Stage every ready candidate; returns the candidates decided now and those that need a build."""
    decided, to_build = [], []
    for status in statuses:
        if not status.ready_for("images"):
            continue
        if (duplicate := dropped_as_duplicate(workspace, status, "images")) is not None:
            decided.append(duplicate)
            continue
        staged = stage_task(workspace, families.by_name(status.family), status, org)
        if staged.drop is not None:
            decided.append(staged)
            continue
        image = engine.find(TaskLayout(staged_task_dir(workspace, staged.ref)).environment_dir)
        if image is None:
            to_build.append(staged.ref)
        else:
            decided.append(save_status(workspace, _with_image(staged, image)))
    return decided, to_build


def build_candidate_image(workspace: Workspace, engine: DockerEngine, ref: CandidateRef) -> CandidateStatus:
    status = read_status(workspace, ref)
    try:
        image = engine.build(TaskLayout(staged_task_dir(workspace, ref)).environment_dir)
    except ImageBuildFailedError as exc:
        return save_status(workspace, status.dropped("images", blamed_on_redaction(status, image_build_drop(exc))))
    return save_status(workspace, _with_image(status, image))


def image_build_drop(exc: ImageBuildFailedError) -> Drop:
    return Drop(reason=exc.reason, detail=f"{exc}\n{exc.log_tail}"[-LOG_TAIL_CHARS:])


def with_image_present(workspace: Workspace, engine: DockerEngine, status: CandidateStatus) -> CandidateStatus:
    """``status`` once its image is in the engine: rebuilt from the staged environment if it
    is gone (a changed base image gives it a new tag, recorded). Raises
    :class:`ImageBuildFailedError` when the rebuild fails."""
    assert status.image is not None and status.image.tag is not None  # past the image stage
    if engine.has_image(status.image.tag):
        return status
    image = engine.build(TaskLayout(staged_task_dir(workspace, status.ref)).environment_dir)
    return save_status(workspace, status.model_copy(update={"image": _image_record(status, image)}))
