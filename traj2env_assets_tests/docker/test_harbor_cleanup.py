"""What ``docker compose down`` leaves of a Harbor trial, the environment removes."""

from __future__ import annotations

import uuid

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.harbor.no_network_environment import remove_compose_project

pytestmark = pytest.mark.docker


def test_a_trials_leftover_container_network_and_volume_are_removed(engine: DockerEngine) -> None:
    project = f"calc-fix__{uuid.uuid4().hex[:7]}__env"
    other = f"calc-fix__{uuid.uuid4().hex[:7]}__env"
    labels = {"com.docker.compose.project": project, **engine.container_labels}
    client = engine.client
    network = client.networks.create(f"{project}_default", labels=labels)
    volume = client.volumes.create(f"{project}_logs", labels=labels)
    container = client.containers.create(
        "python:3.13-slim",
        ["sleep", "60"],
        labels=labels,
        network=network.name,
        volumes={volume.name: {"bind": "/logs", "mode": "rw"}},
    )
    container.start()
    kept = client.networks.create(f"{other}_default", labels={"com.docker.compose.project": other})
    try:
        removed = remove_compose_project(project)

        assert sorted(item.split()[0] for item in removed) == ["container", "network", "volume"]
        filters = {"label": f"com.docker.compose.project={project}"}
        assert client.containers.list(all=True, filters=filters) == []
        assert client.networks.list(filters=filters) == [] and client.volumes.list(filters=filters) == []
        assert remove_compose_project(project) == []  # a clean down leaves nothing to do
        assert client.networks.get(kept.id).name == f"{other}_default"  # another trial is untouched
    finally:
        kept.remove()
