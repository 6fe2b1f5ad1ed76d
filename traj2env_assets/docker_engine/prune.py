"""Remove everything the project created, found by the project label.

Base images are kept unless asked for: rebuilding a stand-in from Debian takes minutes.
"""

from __future__ import annotations

from collections.abc import Mapping

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from pydantic import BaseModel

from traj2env_assets.docker_engine.labels import ROLE_LABEL, is_project_container, project_filter


class PruneReport(BaseModel):
    containers: list[str]
    networks: list[str]
    volumes: list[str]
    images: list[str]


def prune(client: docker.DockerClient, *, include_bases: bool = False) -> PruneReport:
    containers = []
    for container in our_containers(client):
        try:
            container.remove(force=True)
        except NotFound:
            continue
        containers.append(container_name(container))
    networks = []
    for network in client.networks.list(filters=project_filter()):
        network.remove()
        networks.append(network.name)
    volumes = []
    for volume in client.volumes.list(filters=project_filter()):
        volume.remove(force=True)
        volumes.append(volume.name)
    images = []
    for image in client.images.list(filters=project_filter()):
        if image.labels.get(ROLE_LABEL) == "base" and not include_bases:
            continue
        try:
            client.images.remove(image.id, force=True)
        except NotFound:
            continue
        except APIError as exc:
            # A child image still refers to it; the next prune removes it.
            if exc.status_code != 409:
                raise
            continue
        images.append(", ".join(image.tags) or image.short_id)
    return PruneReport(containers=containers, networks=networks, volumes=volumes, images=images)


def our_containers(client: docker.DockerClient, labels: Mapping[str, str] | None = None) -> list[Container]:
    """Containers the project started (not ones others started from our images)."""
    label_filter = [project_filter()["label"], *(f"{k}={v}" for k, v in (labels or {}).items())]
    # sparse: no per-container inspect, which races with containers being removed.
    listed = client.containers.list(all=True, sparse=True, filters={"label": label_filter})
    return [c for c in listed if is_project_container(c.attrs.get("Labels") or {})]


def container_name(container: Container) -> str:
    return container.attrs["Names"][0].lstrip("/")


def leftovers(client: docker.DockerClient, labels: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Containers (carrying ``labels`` too), networks and volumes the project left."""
    return {
        "containers": [container_name(c) for c in our_containers(client, labels)],
        "networks": [n.name for n in client.networks.list(filters=project_filter())],
        "volumes": [v.name for v in client.volumes.list(filters=project_filter())],
    }
