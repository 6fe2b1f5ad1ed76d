"""A run that takes the ``docker_trial`` slot and keeps it until its process is killed.

``python -m traj2env_assets_tests.recovery.slot_holder <dagster home>`` executes a
one-op job in-process under its run lock, as ``traj2env generate`` does; the op sits in
the pool and sleeps, so the run stays ``STARTED`` holding the slot.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import dagster as dg

from traj2env_assets.defs.pools import DOCKER_TRIAL_POOL
from traj2env_assets.defs.run_liveness import execute_locked

HOLDER_JOB = "slot_holder"


@dg.op(pool=DOCKER_TRIAL_POOL)
def hold_slot() -> None:
    while True:
        time.sleep(1)


@dg.job(name=HOLDER_JOB)
def slot_holder() -> None:
    hold_slot()


def set_trial_slots(instance: dg.DagsterInstance) -> None:
    instance.event_log_storage.set_concurrency_slots(DOCKER_TRIAL_POOL, 1)


def slot_holders(instance: dg.DagsterInstance) -> set[str]:
    return instance.event_log_storage.get_concurrency_info(DOCKER_TRIAL_POOL).active_run_ids


def main(home: Path) -> None:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        set_trial_slots(instance)
        execute_locked(slot_holder, instance, tags={})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
