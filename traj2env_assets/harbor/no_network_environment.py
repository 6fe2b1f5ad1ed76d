"""Harbor's docker environment with ``no-network`` enforced by ``network_mode: none``.

Harbor 0.25's local docker environment implements ``no-network`` with an egress-control
sidecar, and only after a kernel probe that runs
``alpine:3.23.4@sha256:5b10f4...`` (a digest-pinned image a registry-less engine cannot
have: a local image never carries that repository digest). Without the probe the
environment reports ``disable_internet=False`` and Harbor rejects every ``no-network``
task. This subclass skips the probe and instead adds Harbor's own
``docker-compose-no-network.yaml`` (``services.main.network_mode: none``), the file
Harbor's remote providers use for the same policy. The container has no network
interface besides loopback, which is stricter than the sidecar's deny-all; dynamic
per-phase policies and allowlists stay unsupported, so such tasks are still rejected.

Run Harbor with it::

    harbor run -p DATASET -a oracle \
        -e traj2env_assets.harbor.no_network_environment:NoNetworkDockerEnvironment
"""

from __future__ import annotations

from pathlib import Path

from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.docker import COMPOSE_NO_NETWORK_PATH
from harbor.environments.docker.docker import DockerEnvironment
from harbor.models.task.config import NetworkMode

IMPORT_PATH = "traj2env_assets.harbor.no_network_environment:NoNetworkDockerEnvironment"


class NoNetworkDockerEnvironment(DockerEnvironment):
    @classmethod
    def _egress_control_kernel_support(cls) -> bool:
        return False

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return super().capabilities.model_copy(update={"disable_internet": True})

    @property
    def _docker_compose_paths(self) -> list[Path]:
        paths = super()._docker_compose_paths
        if self.network_policy.network_mode == NetworkMode.NO_NETWORK:
            paths.append(COMPOSE_NO_NETWORK_PATH)
        return paths
