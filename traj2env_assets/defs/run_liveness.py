"""Runs whose process is gone: found by their run lock, failed, and their pool slots freed.

The in-process CLI has no daemon: a killed ``traj2env generate`` leaves its run
``STARTED`` forever, holding whatever pool slots it had claimed, and every later run on
the workspace waits for them. Each CLI run therefore executes under a run lock
(``traj2env_assets.run_locks``), named on the run by the ``traj2env/run_lock`` tag, and
every CLI start releases runs whose lock can be taken. Runs without the tag (launched
by the deployment's daemon) are left to Dagster's run monitoring, which frees the slots
of ended runs (``free_slots_after_run_end_seconds`` in ``deploy/dagster.yaml``).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import dagster as dg

from traj2env_assets.docker_engine.connection import EngineUnavailableError, connect
from traj2env_assets.docker_engine.reap import reap_dead_runs
from traj2env_assets.run_locks import RUN_LOCK_DIR, dead_run_lock, hold_run_lock

RUN_LOCK_TAG = "traj2env/run_lock"
IN_PROGRESS = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def run_lock_dir(instance: dg.DagsterInstance) -> Path:
    return Path(instance.root_directory) / RUN_LOCK_DIR


def execute_locked(
    job: dg.JobDefinition, instance: dg.DagsterInstance, *, tags: dict[str, str], **kwargs: Any
) -> dg.ExecuteInProcessResult:
    """``job.execute_in_process`` holding the run's lock, named on the run by its tag."""
    run_id = str(uuid.uuid4())
    with hold_run_lock(run_lock_dir(instance), run_id) as lock:
        return job.execute_in_process(
            instance=instance, run_id=run_id, tags={**tags, RUN_LOCK_TAG: str(lock)}, **kwargs
        )


def release_dead_work(instance: dg.DagsterInstance) -> None:
    """What a CLI run does first: remove the containers of dead runs (while their locks
    still say they are dead), then fail those runs and free their slots."""
    try:
        reap_dead_runs(connect())
    except EngineUnavailableError:
        pass  # Their containers still exit by themselves at their deadline.
    release_dead_runs(instance)


def release_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Fail every in-progress run of ``instance`` whose lock can be taken and free its pool
    slots; returns their ids. A run whose lock is held is alive and left alone."""
    released = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=IN_PROGRESS)):
        lock = run.tags.get(RUN_LOCK_TAG)
        if lock is None:
            continue
        with dead_run_lock(Path(lock)) as dead:
            if not dead:
                continue
            current = instance.get_run_by_id(run.run_id)
            if current is None or current.status not in IN_PROGRESS:
                continue
            instance.report_run_failed(current, f"process gone: run lock {lock} was free (the process running it died)")
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            Path(lock).unlink(missing_ok=True)
            released.append(run.run_id)
    return released
