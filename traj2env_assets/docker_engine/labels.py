"""Labels carried by every image, container, network and volume the project creates.

``prune`` finds leftovers by ``traj2env.project``; ``traj2env.role`` tells base images
(expensive to rebuild, kept by default) from task images and trial containers.
"""

from __future__ import annotations

from typing import Literal

PROJECT_LABEL = "traj2env.project"
PROJECT_VALUE = "traj2env"
ROLE_LABEL = "traj2env.role"
CONTENT_HASH_LABEL = "traj2env.content_hash"
CONTROL_LABEL = "traj2env.control"

Role = Literal["base", "task-image", "agent", "verifier", "probe"]
# Containers inherit their image's labels, so a container that Harbor (or a user) starts
# from one of our images carries the project label too; only these roles are ours.
CONTAINER_ROLES = frozenset({"agent", "verifier", "probe"})


def project_labels(role: Role, **extra: str) -> dict[str, str]:
    labels = {PROJECT_LABEL: PROJECT_VALUE, ROLE_LABEL: role}
    labels.update({f"traj2env.{key}": value for key, value in extra.items()})
    return labels


def project_filter() -> dict[str, str]:
    """The ``filters`` argument that selects everything the project created."""
    return {"label": f"{PROJECT_LABEL}={PROJECT_VALUE}"}
