"""Labels carried by every image, container, network and volume the project creates.

``prune`` finds leftovers by ``traj2env.project``; ``traj2env.role`` tells base images
(expensive to rebuild, kept by default) from task images and trial containers. Every
container also names the Dagster run that started it (``run_id``), that run's lock file
and host (``run_lock``, ``run_host``: how a later run tells whether its process is gone)
and the time it exits by itself (``deadline``, Unix seconds).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Literal

PROJECT_LABEL = "traj2env.project"
PROJECT_VALUE = "traj2env"
ROLE_LABEL = "traj2env.role"
CONTENT_HASH_LABEL = "traj2env.content_hash"
CONTROL_LABEL = "traj2env.control"
RUN_ID_LABEL = "traj2env.run_id"
RUN_LOCK_LABEL = "traj2env.run_lock"
RUN_HOST_LABEL = "traj2env.run_host"
DEADLINE_LABEL = "traj2env.deadline"

Role = Literal["base", "task-image", "agent", "verifier", "probe"]
# Containers inherit their image's labels, so a container that Harbor (or a user) starts
# from one of our images carries the project label too; only these roles are ours.
CONTAINER_ROLES = frozenset({"agent", "verifier", "probe"})


def is_project_container(labels: Mapping[str, str]) -> bool:
    """Whether a container with these labels is one the project started: the one place
    that says so (a container started from a task image inherits the project label, but
    its role is the image's)."""
    return labels.get(PROJECT_LABEL) == PROJECT_VALUE and labels.get(ROLE_LABEL) in CONTAINER_ROLES


def run_labels(run_id: str, run_lock: str | None) -> dict[str, str]:
    """The labels that tie a container to its run; ``run_lock`` is None for runs that hold
    no lock (launched by the deployment's daemon), whose containers are never reaped."""
    labels = {RUN_ID_LABEL: run_id, RUN_HOST_LABEL: socket.gethostname()}
    if run_lock is not None:
        labels[RUN_LOCK_LABEL] = run_lock
    return labels


def project_labels(role: Role, **extra: str) -> dict[str, str]:
    labels = {PROJECT_LABEL: PROJECT_VALUE, ROLE_LABEL: role}
    labels.update({f"traj2env.{key}": value for key, value in extra.items()})
    return labels


def project_filter() -> dict[str, str]:
    """The ``filters`` argument that selects everything the project created."""
    return {"label": f"{PROJECT_LABEL}={PROJECT_VALUE}"}
