"""A killed run releases what it held at the next start; a live run is never touched.

Real processes and a real SQLite instance: the holder (``slot_holder``) executes a run
that claims the ``docker_trial`` slot, and is either SIGKILLed (dead: its run stays
``STARTED`` with the slot) or left running (alive: its run lock is held).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.cli import dagster_home
from traj2env_assets.defs.run_liveness import RUN_LOCK_TAG, release_dead_runs
from traj2env_assets_tests.recovery.slot_holder import HOLDER_JOB, slot_holders

HOLD_TIMEOUT_S = 120


def start_holder(home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "traj2env_assets_tests.recovery.slot_holder", str(home)],
        env={**os.environ, "DAGSTER_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for_slot(instance: dg.DagsterInstance, holder: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + HOLD_TIMEOUT_S
    while time.monotonic() < deadline:
        if held := slot_holders(instance):
            return held.pop()
        assert holder.poll() is None, "the slot holder exited"
        time.sleep(0.2)
    raise AssertionError("the slot holder never claimed the slot")


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    home = dagster_home(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as opened:
        yield opened


def test_a_killed_run_is_failed_and_its_slot_freed(instance: dg.DagsterInstance) -> None:
    holder = start_holder(Path(instance.root_directory))
    run_id = wait_for_slot(instance, holder)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    run = instance.get_run_by_id(run_id)
    assert run is not None and run.status == dg.DagsterRunStatus.STARTED and run.job_name == HOLDER_JOB
    lock = Path(run.tags[RUN_LOCK_TAG])
    assert lock.exists()

    assert release_dead_runs(instance) == [run_id]

    run = instance.get_run_by_id(run_id)
    assert run is not None and run.status == dg.DagsterRunStatus.FAILURE
    failure = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    event = failure[-1].event_log_entry.dagster_event
    assert event is not None
    assert "process gone" in (event.message or "")
    assert slot_holders(instance) == set()
    assert not lock.exists()
    assert release_dead_runs(instance) == []


def test_a_live_run_is_never_touched(instance: dg.DagsterInstance) -> None:
    holder = start_holder(Path(instance.root_directory))
    try:
        run_id = wait_for_slot(instance, holder)
        assert release_dead_runs(instance) == []
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.STARTED
        assert slot_holders(instance) == {run_id}
        assert Path(run.tags[RUN_LOCK_TAG]).exists()
    finally:
        holder.kill()
        holder.wait()
