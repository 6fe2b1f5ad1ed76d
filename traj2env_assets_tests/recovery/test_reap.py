"""A run start reaps the containers of dead runs, and only those (real engine)."""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker.models.containers import Container

from traj2env_assets.docker_engine.connection import connect
from traj2env_assets.docker_engine.labels import (
    DEADLINE_LABEL,
    PROJECT_LABEL,
    PROJECT_VALUE,
    ROLE_LABEL,
    is_project_container,
    run_labels,
)
from traj2env_assets.docker_engine.reap import reap_dead_runs
from traj2env_assets.docker_engine.sandbox import (
    DEADLINE_GRACE_S,
    ContainerLimits,
    remove_quietly,
    start_container,
)
from traj2env_assets.run_locks import hold_run_lock, run_lock_path

pytestmark = [pytest.mark.docker]

BASE = "python:3.13-slim"
SESSION_LABEL = "traj2env.test_session"


@pytest.fixture
def client() -> docker.DockerClient:
    return connect()


@pytest.fixture
def session() -> Iterator[dict[str, str]]:
    labels = {SESSION_LABEL: uuid.uuid4().hex}
    yield labels
    for container in connect().containers.list(all=True, filters={"label": f"{SESSION_LABEL}={labels[SESSION_LABEL]}"}):
        remove_quietly(container)


@pytest.fixture
def project_image(client: docker.DockerClient) -> Iterator[str]:
    """A task image as the project builds them: its labels are inherited by its containers."""
    dockerfile = f'FROM {BASE}\nLABEL {PROJECT_LABEL}="{PROJECT_VALUE}" {ROLE_LABEL}="task-image"\n'
    image, _ = client.images.build(
        fileobj=io.BytesIO(dockerfile.encode()), tag=f"traj2env/reap-test:{uuid.uuid4().hex[:8]}"
    )
    yield image.tags[0]
    client.images.remove(image.id, force=True)


def exists(container: Container) -> bool:
    try:
        container.reload()
    except docker.errors.NotFound:
        return False
    return True


def test_containers_of_a_dead_run_go_and_all_others_stay(
    client: docker.DockerClient, project_image: str, session: dict[str, str], tmp_path: Path
) -> None:
    # A dead run's lock: the file is there and nobody holds it (its process is gone).
    dead_lock = run_lock_path(tmp_path, "dead-run")
    dead_lock.touch()
    dead = {**session, **run_labels("dead-run", str(dead_lock))}
    limits = ContainerLimits(memory="256m")
    with hold_run_lock(tmp_path, "live-run") as live_lock:
        live = {**session, **run_labels("live-run", str(live_lock))}
        started = time.time()
        dead_agent = start_container(client, project_image, role="agent", limits=limits, labels=dead, work_s=60)
        dead_probe = start_container(client, project_image, role="probe", limits=limits, labels=dead, work_s=60)
        dead_probe.kill()  # an exited container of a dead run is reaped too
        live_agent = start_container(client, project_image, role="agent", limits=limits, labels=live, work_s=60)
        # Started from a project image (it inherits the project label) by someone else:
        # Harbor, a user. It carries a dead run's labels, and is still not ours.
        foreign = client.containers.run(project_image, ["sleep", "120"], detach=True, labels=dead)
        assert not is_project_container(foreign.labels) and is_project_container(dead_agent.labels)

        reaped = reap_dead_runs(client)

        assert {dead_agent.name, dead_probe.name} <= set(reaped)
        assert not exists(dead_agent) and not exists(dead_probe)
        assert exists(live_agent) and exists(foreign)
        assert live_agent.name not in reaped and foreign.name not in reaped
    # Every container exits by itself at its deadline: no `sleep infinity`.
    assert live_agent.attrs["Config"]["Entrypoint"] == ["sleep", str(60 + DEADLINE_GRACE_S)]
    deadline = int(live_agent.labels[DEADLINE_LABEL])
    assert started + 60 + DEADLINE_GRACE_S - 5 <= deadline <= time.time() + 60 + DEADLINE_GRACE_S + 5
