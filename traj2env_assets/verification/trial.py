"""The trial runner: one control in an agent container, the verdict in a fresh verifier.

Agent phase: a container from the task image with networking off (``none``), the
``container_memory`` cap, a pids limit, a CPU limit and a wall-clock timeout runs the
control, is stopped, and only the submission is copied out (``/workspace`` for project
tasks, ``/workdir/answer.txt`` for qa), without special files, links that leave it or
setuid bits. The agent container never has ``/tests``.

Verifier phase: a fresh container from the pristine image gets the submission in place
of ``/workspace`` and the task's ``tests/`` at ``/tests``; ``tests/test.sh`` (see
``traj2env_assets.harbor.scripts``) restores test configuration, runs the tests as an
unprivileged user and writes ``/logs/verifier/reward.txt``, which is read back.

Both containers are always removed. :func:`run_matrix` also labels every container with
the matrix run id and sweeps that label if it is interrupted.

Usage::

    task = TrialTask(image=image.tag, task_dir=written.path)
    matrix = run_matrix(engine, task, parallelism=2)
    matrix.passed, [(r.control, r.reward) for r in matrix.results]
"""

from __future__ import annotations

import tarfile
import tempfile
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path, PurePosixPath
from typing import IO, Any

import docker
from docker.errors import APIError
from docker.models.containers import Container
from pydantic import BaseModel

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.errors import is_transient_engine_error
from traj2env_assets.docker_engine.labels import CONTROL_LABEL
from traj2env_assets.docker_engine.sandbox import (
    ExecOutcome,
    TrialSettings,
    copy_out,
    exec_with_deadline,
    kill_quietly,
    put_files,
    remove_quietly,
    sandbox,
    sanitized,
    start_container,
)
from traj2env_assets.harbor.task_spec import ANSWER_FILE, WORKSPACE
from traj2env_assets.layout import TaskLayout
from traj2env_assets.verification.controls import DEFAULT_CONTROLS, Control
from traj2env_assets.verification.verifier import run_verifier

RUN_LABEL = "traj2env.trial_run"
PROJECT_SUBMISSION = WORKSPACE
QA_SUBMISSION = ANSWER_FILE


class TrialTask(BaseModel):
    image: str
    task_dir: Path
    submission_path: str = PROJECT_SUBMISSION


class TrialResult(BaseModel):
    control: str
    expected_reward: float
    reward: float | None
    passed: bool
    agent: ExecOutcome
    verifier: ExecOutcome | None
    verdict: dict[str, Any] | None
    test_output_tail: str
    submission_bytes: int
    seconds: float


class MatrixResult(BaseModel):
    results: list[TrialResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    def rewards(self) -> dict[str, float | None]:
        return {result.control: result.reward for result in self.results}


def run_trial(
    engine: DockerEngine,
    task: TrialTask,
    control: Control,
    *,
    settings: TrialSettings | None = None,
    run_id: str | None = None,
) -> TrialResult:
    """One control's trial on ``engine``, in its trial settings unless ``settings`` are given."""
    settings = settings or engine.trial_settings()
    client = engine.client
    started = time.monotonic()
    labels = {
        **settings.labels,
        CONTROL_LABEL: control.name,
        RUN_LABEL: run_id or uuid.uuid4().hex,
    }
    # The verifier's container starts while the agent works: a fresh container from the
    # pristine image that nothing reaches until the submission is copied in.
    starter = ThreadPoolExecutor(max_workers=1)
    verifier_box = starter.submit(
        start_container,
        client,
        task.image,
        role="verifier",
        limits=settings.limits,
        labels=labels,
        # It waits for the agent, then verifies.
        work_s=settings.agent_timeout_s + settings.verifier_timeout_s,
    )
    try:
        agent, submission = _agent_phase(client, task, control, settings, labels)
        with submission:
            submission_bytes = submission.seek(0, 2)
            submission.seek(0)
            verifier, reward, verdict, output = _verifier_phase(verifier_box.result(), task, submission, settings)
    finally:
        starter.shutdown(wait=True)
        if verifier_box.exception() is None:
            remove_quietly(verifier_box.result())
    return TrialResult(
        control=control.name,
        expected_reward=control.expected_reward,
        reward=reward,
        passed=reward is not None and reward == control.expected_reward,
        agent=agent,
        verifier=verifier,
        verdict=verdict,
        test_output_tail=output,
        submission_bytes=submission_bytes,
        seconds=round(time.monotonic() - started, 3),
    )


def run_matrix(
    engine: DockerEngine,
    task: TrialTask,
    controls: Sequence[Control] = DEFAULT_CONTROLS,
    *,
    settings: TrialSettings | None = None,
    parallelism: int = 1,
) -> MatrixResult:
    run_id = uuid.uuid4().hex
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=max(1, parallelism))
    futures: list[Future[TrialResult]] = []
    try:
        for control in (control for control in controls if control.applies_to(task.task_dir)):
            futures.append(pool.submit(run_trial, engine, task, control, settings=settings, run_id=run_id))
        # A failed trial surfaces at once, not after the trials submitted before it.
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in done:
            if (error := future.exception()) is not None:
                raise error
        results = [future.result() for future in futures]
    except BaseException:
        # Removing a trial's containers ends it, so keep sweeping until every running
        # trial has stopped; a trial between phases may create one more container.
        pool.shutdown(wait=False, cancel_futures=True)
        while not all(future.done() for future in futures):
            sweep_run(engine.client, run_id)
            wait(futures, timeout=0.5)
        sweep_run(engine.client, run_id)
        raise
    pool.shutdown(wait=True)
    return MatrixResult(results=results, seconds=round(time.monotonic() - started, 3))


def sweep_run(client: docker.DockerClient, run_id: str, attempts: int = 5) -> None:
    """Remove every container of one matrix run (used when it is interrupted). The engine can
    fail a removal it races with (fuse-overlayfs: "failed to remove root filesystem: directory
    not empty" while the container's processes exit): the sweep goes on, and such containers
    are tried again a few times before the engine's error stands."""
    run_filter = {"label": f"{RUN_LABEL}={run_id}"}
    for attempt in range(attempts):
        failed: list[APIError] = []
        for container in client.containers.list(all=True, sparse=True, filters=run_filter):
            try:
                remove_quietly(container)
            except APIError as error:
                if not is_transient_engine_error(error):
                    raise
                failed.append(error)
        if not failed:
            return
        if attempt == attempts - 1:
            raise failed[0]
        time.sleep(0.5)


def _agent_phase(
    client: docker.DockerClient,
    task: TrialTask,
    control: Control,
    settings: TrialSettings,
    labels: dict[str, str],
) -> tuple[ExecOutcome, IO[bytes]]:
    action = control.action(task.task_dir)
    with sandbox(
        client, task.image, role="agent", limits=settings.limits, labels=labels, work_s=settings.agent_timeout_s
    ) as box:
        if action.files:
            put_files(box, action.files)
        if action.executable_files:
            put_files(box, action.executable_files, mode=0o755)
        outcome = exec_with_deadline(
            box,
            action.script,
            timeout_s=settings.agent_timeout_s,
            workdir=_agent_workdir(task.submission_path),
            env={"DEBIAN_FRONTEND": "noninteractive"},
            disk_bytes=settings.limits.disk_bytes,
        )
        # Nothing in the agent container deserves a graceful shutdown (and it may be dead
        # already: killed by a limit, or from outside).
        kill_quietly(box)
        try:
            raw = copy_out(box, task.submission_path)
        except docker.errors.NotFound:
            # No submission (an agent that wrote no answer file): nothing crosses.
            return outcome, _empty_tar()
        with raw:
            return outcome, sanitized(raw)


def _verifier_phase(
    box: Container, task: TrialTask, submission: IO[bytes], settings: TrialSettings
) -> tuple[ExecOutcome, float | None, dict[str, Any] | None, str]:
    run = run_verifier(
        box,
        TaskLayout(task.task_dir).tests_dir,
        task.submission_path,
        submission,
        timeout_s=settings.verifier_timeout_s,
        disk_bytes=settings.limits.disk_bytes,
    )
    return run.outcome, run.reward, run.verdict, run.output_tail


def _empty_tar() -> IO[bytes]:
    archive = tempfile.SpooledTemporaryFile()  # noqa: SIM115 - returned open
    tarfile.open(fileobj=archive, mode="w").close()
    archive.seek(0)
    return archive


def _agent_workdir(submission_path: str) -> str:
    if submission_path == PROJECT_SUBMISSION:
        return PROJECT_SUBMISSION
    return str(PurePosixPath(submission_path).parent)
