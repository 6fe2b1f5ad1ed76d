"""Containers of dead runs, removed when a run starts.

A container carries its run's lock file and host (``traj2env_assets.docker_engine.labels``);
one whose run's lock can be taken on this host belongs to a process that is gone, and
nothing else will remove it. Only the project's container roles are looked at (never
a container Harbor or a user started from a project image), never a container of a live
run, and never one without a lock (the deployment's runs, tests' own containers).
"""

from __future__ import annotations

import socket
from pathlib import Path

import docker

from traj2env_assets.docker_engine.labels import RUN_HOST_LABEL, RUN_LOCK_LABEL
from traj2env_assets.docker_engine.prune import container_name, our_containers
from traj2env_assets.docker_engine.sandbox import remove_quietly
from traj2env_assets.run_locks import is_dead


def reap_dead_runs(client: docker.DockerClient) -> list[str]:
    """Remove the project's containers of dead runs of this host; returns their names."""
    host = socket.gethostname()
    reaped = []
    for container in our_containers(client):
        labels = container.attrs.get("Labels") or {}
        lock = labels.get(RUN_LOCK_LABEL)
        if lock is not None and labels.get(RUN_HOST_LABEL) == host and is_dead(Path(lock)):
            remove_quietly(container)
            reaped.append(container_name(container))
    return reaped
