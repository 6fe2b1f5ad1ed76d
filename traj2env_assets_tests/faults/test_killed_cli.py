"""``traj2env generate`` killed at five points of its work (SIGKILL) and once with Ctrl-C
(SIGINT), then run again on the same workspace: the rerun finishes, publishes the same
tasks (ids and file hashes) as an uninterrupted run, and leaves no container of its
runs, no orphaned staging folder, no killed copy and no run lock; no run stays in
progress and no pool slot stays held.

Real processes, engine and Dagster instance. How each point is recognised, and how
exactly, is said in ``killed_cli.POINTS``.
"""

from __future__ import annotations

import signal
from pathlib import Path

import dagster as dg
import docker
import pytest

from traj2env_assets.cli import INTERRUPTED_EXIT
from traj2env_assets.defs.pools import DOCKER_BUILD_POOL, DOCKER_TRIAL_POOL
from traj2env_assets.defs.run_liveness import IN_PROGRESS
from traj2env_assets.docker_engine.connection import connect
from traj2env_assets_tests.faults.killed_cli import (
    POINTS,
    Workdir,
    candidate_images,
    kill_at,
    leftovers,
    make_workdir,
    published,
    remove_images,
    run_cli,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NOTHING_LEFT: dict[str, list[str]] = {"containers": [], "orphaned_staging": [], "publishing": [], "run_locks": []}


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return connect()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Workdir:
    """The uninterrupted run every rerun must match."""
    work = make_workdir(tmp_path_factory.mktemp("baseline"))
    run_cli(work)
    assert published(work), "the baseline published nothing"
    return work


def assert_rerun_recovers(client: docker.DockerClient, work: Workdir, baseline: Workdir) -> None:
    run_cli(work)
    assert published(work) == published(baseline)
    assert leftovers(client, work) == NOTHING_LEFT
    with dg.DagsterInstance.from_config(str(work.home)) as instance:
        assert instance.get_runs(filters=dg.RunsFilter(statuses=IN_PROGRESS)) == []
        for pool in (DOCKER_BUILD_POOL, DOCKER_TRIAL_POOL):
            assert instance.event_log_storage.get_concurrency_info(pool).active_run_ids == set()


@pytest.mark.parametrize("point", list(POINTS))
def test_kill_9_then_rerun(client: docker.DockerClient, baseline: Workdir, tmp_path: Path, point: str) -> None:
    if point == "image_build":
        remove_images(client, candidate_images(baseline))
    work = make_workdir(tmp_path)
    assert kill_at(client, work, point) == -signal.SIGKILL
    assert_rerun_recovers(client, work, baseline)


def test_ctrl_c_exits_130_cleans_up_and_the_rerun_recovers(
    client: docker.DockerClient, baseline: Workdir, tmp_path: Path
) -> None:
    work = make_workdir(tmp_path)
    assert kill_at(client, work, "trial_matrix", signal.SIGINT) == INTERRUPTED_EXIT
    # Cleaned up on the way out, before any rerun: its containers and its run lock.
    left = leftovers(client, work)
    assert left["containers"] == [] and left["run_locks"] == []
    with dg.DagsterInstance.from_config(str(work.home)) as instance:
        assert instance.get_runs(filters=dg.RunsFilter(statuses=IN_PROGRESS)) == []
        # The daemon's run retries never rerun what the user stopped.
        assert all(run.tags.get("dagster/max_retries") == "0" for run in instance.get_runs())
    assert_rerun_recovers(client, work, baseline)
