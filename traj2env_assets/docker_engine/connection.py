"""The connection to the Docker engine, and the platform a build targets.

The engine is found the usual way (``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``,
``DOCKER_CERT_PATH``), so pointing the pipeline at a remote engine needs no code.
"""

from __future__ import annotations

import docker
from docker.errors import DockerException, ImageNotFound

from traj2env_assets.conventions import IMAGE_PLATFORM

# Builds and runs target the task images' platform unless the pipeline says otherwise.
DEFAULT_PLATFORM = IMAGE_PLATFORM
NATIVE_PLATFORM = "native"


class EngineUnavailableError(RuntimeError):
    """The Docker engine cannot be reached."""


def connect(timeout_s: int = 120) -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
    except DockerException as exc:
        raise EngineUnavailableError(f"cannot reach the Docker engine: {exc}") from exc
    return client


def engine_platform(client: docker.DockerClient) -> str:
    version = client.version()
    return f"{version['Os']}/{version['Arch']}"


def resolve_platform(client: docker.DockerClient, platform: str) -> str:
    """``native`` means the engine's own os/arch; anything else is used as given."""
    return engine_platform(client) if platform == NATIVE_PLATFORM else platform


def image_present(client: docker.DockerClient, name: str) -> bool:
    try:
        client.images.get(name)
    except ImageNotFound:
        return False
    return True
