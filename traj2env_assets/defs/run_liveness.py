"""Runs whose process is gone: found by their run lock, failed, and their pool slots freed.

The in-process CLI has no daemon: a killed ``traj2env generate`` leaves its run
``STARTED`` forever, holding whatever pool slots it had claimed, and every later run on
the workspace waits for them. Each CLI run therefore executes under a run lock
(``traj2env_assets.run_locks``), named on the run by the ``traj2env/run_lock`` tag, and
every CLI start releases runs whose lock in the instance's ``run-locks`` folder can be
taken. Runs without a lock (launched by the deployment's daemon) are left to Dagster's
run monitoring, which frees the slots of ended runs (``free_slots_after_run_end_seconds``
in ``deploy/dagster.yaml``).
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any

import dagster as dg

from traj2env_assets.defs.interrupts import NO_DAEMON_RETRIES, raise_if_interrupted
from traj2env_assets.docker_engine.connection import EngineUnavailableError, connect
from traj2env_assets.docker_engine.reap import reap_dead_runs
from traj2env_assets.run_locks import (
    RUN_LOCK_DIR,
    dead_run_lock,
    hold_run_lock,
    run_id_of,
    run_locks,
)

RUN_LOCK_TAG = "traj2env/run_lock"
IN_PROGRESS = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def run_lock_dir(instance: dg.DagsterInstance) -> Path:
    return Path(instance.root_directory) / RUN_LOCK_DIR


def execute_locked(
    job: dg.JobDefinition, instance: dg.DagsterInstance, *, tags: dict[str, str], **kwargs: Any
) -> dg.ExecuteInProcessResult:
    """``job.execute_in_process`` holding the run's lock, named on the run by its tag.
    A run that Ctrl-C stopped raises KeyboardInterrupt once its lock is released."""
    run_id = str(uuid.uuid4())
    with hold_run_lock(run_lock_dir(instance), run_id) as lock:
        result = job.execute_in_process(
            instance=instance, run_id=run_id, tags={**tags, **NO_DAEMON_RETRIES, RUN_LOCK_TAG: str(lock)}, **kwargs
        )
    raise_if_interrupted(result)
    return result


def release_dead_work(instance: dg.DagsterInstance) -> None:
    """What a CLI run does first: remove the containers of dead runs (while their locks
    still say they are dead), then fail those runs and free their slots."""
    # Without an engine, their containers still exit by themselves at their deadline.
    with contextlib.suppress(EngineUnavailableError):
        reap_dead_runs(connect())
    release_dead_runs(instance)


def release_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Fail every in-progress run of ``instance`` whose lock can be taken, free its pool
    slots and remove its lock; returns their ids. A run whose lock is held is alive and
    left alone. A lock without a run in progress (killed before its run was created, or
    between its end and the lock's removal) is only removed."""
    released = []
    for lock in run_locks(run_lock_dir(instance)):
        with dead_run_lock(lock) as dead:
            if not dead:
                continue
            run = instance.get_run_by_id(run_id_of(lock))
            if run is not None and run.status in IN_PROGRESS:
                instance.report_run_failed(run, f"process gone: run lock {lock} was free (the process running it died)")
                instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
                released.append(run.run_id)
            lock.unlink(missing_ok=True)
    return released
