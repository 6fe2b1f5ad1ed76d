"""A run waiting for a pool slot sleeps, says which run holds it, and gives up in time.

The slot is held by a live run in another process (``slot_holder``: its lock is held,
so nothing releases it); the waiter is a real in-process run on the same instance.
CPU is compared with wall time over the whole wait: Dagster's own loop spins one core
(a ratio near 1); asleep, the ratio is the run's start-up and a few claim checks.
"""

from __future__ import annotations

import time
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.cli import dagster_home
from traj2env_assets.defs.pool_wait import (
    PoolWaits,
    PoolWaitTimeout,
    sleeping_pool_waits,
)
from traj2env_assets.defs.pools import DOCKER_TRIAL_POOL
from traj2env_assets.defs.run_liveness import execute_locked
from traj2env_assets_tests.faults.killed_cli import (
    RUN_TIMEOUT_S,
    make_workdir,
    start_cli,
)
from traj2env_assets_tests.recovery.slot_holder import set_trial_slots
from traj2env_assets_tests.recovery.test_run_liveness import (  # noqa: F401
    instance,
    start_holder,
    wait_for_slot,
)

MAX_WAIT_S = 10.0
MAX_CPU_RATIO = 0.4
CLI_MAX_WAIT_S = 5


@dg.op(pool=DOCKER_TRIAL_POOL)
def needs_the_slot() -> None:
    pass


@dg.job
def waiter() -> None:
    needs_the_slot()


def test_a_waiting_run_sleeps_names_the_holder_and_gives_up(instance: dg.DagsterInstance) -> None:  # noqa: F811
    set_trial_slots(instance)
    holder = start_holder(Path(instance.root_directory))
    shown: list[str | None] = []
    try:
        holder_run = wait_for_slot(instance, holder)
        waits = PoolWaits(MAX_WAIT_S, shown.append)
        wall, cpu = time.monotonic(), time.process_time()
        with sleeping_pool_waits(waits):
            result = execute_locked(waiter, instance, tags={}, raise_on_error=False)
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    finally:
        holder.kill()
        holder.wait()

    assert not result.success
    expected = f"waiting for {DOCKER_TRIAL_POOL} slot held by run {holder_run}"
    assert expected in shown
    assert waits.gave_up is not None and waits.gave_up.startswith(expected)
    try:
        waits.raise_if_gave_up()
    except PoolWaitTimeout as error:
        assert "gave up after 10 s" in str(error)
    assert wall >= MAX_WAIT_S
    assert cpu / wall < MAX_CPU_RATIO, f"{cpu:.1f} s of CPU in {wall:.1f} s of waiting"
    # The waiter's pending claim is gone with it: the holder's slot is the only entry.
    assert instance.event_log_storage.get_concurrency_info(DOCKER_TRIAL_POOL).pending_run_ids == set()


@pytest.mark.docker
def test_generate_exits_1_when_a_live_run_keeps_the_slot_past_max_pool_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole command (Docker): its calibration step waits for the slot a live run holds,
    and after ``--max-pool-wait`` the command stops with exit 1 and names the holder."""
    work = make_workdir(tmp_path / "work", user="pool wait test")
    monkeypatch.setenv("DAGSTER_HOME", str(work.home))
    holder = start_holder(dagster_home(work.workspace))
    try:
        with dg.DagsterInstance.from_config(str(work.home)) as opened:
            holder_run = wait_for_slot(opened, holder)
        code = start_cli(work, "--max-pool-wait", str(CLI_MAX_WAIT_S)).wait(timeout=RUN_TIMEOUT_S)
    finally:
        holder.kill()
        holder.wait()
    output = " ".join((work.root / "cli.log").read_text().split())
    assert code == 1, output[-2000:]
    assert f"waiting for {DOCKER_TRIAL_POOL} slot held by run {holder_run}" in output
    assert f"gave up after {CLI_MAX_WAIT_S} s" in output
