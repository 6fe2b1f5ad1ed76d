"""Harbor's docker environment with ``no-network`` enforced by ``network_mode: none``,
resource caps on every container, and host-mounted log folders cleaned after each run.

Harbor's local docker environment (0.25 and 0.26 alike) implements ``no-network`` with
an egress-control sidecar, and only after a kernel probe that runs
``alpine:3.23.4@sha256:5b10f4...``; the sidecar image is built ``FROM
gogost/gost:3.2.7-nightly...@sha256:afc013...``. Both are digest references, which an
engine resolves only for an image pulled from a registry (a locally built or tagged image
never carries that repository digest), and no option skips the probe. On an engine that
cannot pull, the probe fails, the environment reports ``disable_internet=False`` and
Harbor rejects every ``no-network`` task (``network_mode='no-network' is not supported by
EnvironmentType.DOCKER environment``). This subclass skips the probe and instead adds
Harbor's own ``docker-compose-no-network.yaml`` (``services.main.network_mode: none``),
the file Harbor's remote providers use for the same policy. The container has no network
interface besides loopback, which is stricter than the sidecar's deny-all; dynamic
per-phase policies and allowlists stay unsupported, so such tasks are still rejected.

Hardening, because the agent is adversarial: a pids limit, ``no-new-privileges``, and a
CPU and memory cap where the task sets none (the same caps as traj2env's own trials).
The agent writes into ``/logs/agent``, a bind mount of the host's jobs folder: once the
container is done, no file there keeps a setuid or setgid bit and no symlink there
points outside its folder (see :func:`sanitize_host_folder`).

Cleanup: Harbor's ``stop`` logs a failed ``docker compose down`` and goes on; under load
(two test workers, CI) that left a trial's containers and networks behind. After Harbor's
own ``down``, whatever still carries the trial's compose project label is removed.

Run Harbor with it::

    harbor run -p DATASET -a oracle \
        --env traj2env_assets.harbor.no_network_environment:NoNetworkDockerEnvironment
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import tempfile
from pathlib import Path

from docker.errors import NotFound
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.docker import COMPOSE_NO_NETWORK_PATH
from harbor.environments.docker.docker import (
    DockerEnvironment,
    _sanitize_docker_compose_project_name,
)
from harbor.models.task.config import NetworkMode
from harbor.models.trial.config import ResourceMode

from traj2env_assets.docker_engine.connection import connect
from traj2env_assets.harbor.dataset import HARBOR_ENVIRONMENT

IMPORT_PATH = HARBOR_ENVIRONMENT
PIDS_LIMIT = 512
DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 4096


def sanitize_host_folder(root: Path) -> list[str]:
    """Drop setuid/setgid bits and remove symlinks resolving outside ``root``; returns what changed."""
    changed: list[str] = []
    top = os.path.realpath(root)
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                target = os.path.realpath(path)
                if target != top and not target.startswith(top + os.sep):
                    os.unlink(path)
                    changed.append(f"removed link {path} -> {target}")
            elif info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
                changed.append(f"cleared setuid/setgid on {path}")
    return changed


class NoNetworkDockerEnvironment(DockerEnvironment):
    _hardening_dir: tempfile.TemporaryDirectory[str] | None = None

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
        if self._hardening_dir is not None:
            paths.append(Path(self._hardening_dir.name) / "hardening.json")
        return paths

    def _hardening(self) -> dict[str, object]:
        main: dict[str, object] = {"pids_limit": PIDS_LIMIT, "security_opt": ["no-new-privileges:true"]}
        if self._resource_limit_value("cpu", auto_mode=ResourceMode.LIMIT) is None:
            main["cpus"] = DEFAULT_CPUS
        if self._resource_limit_value("memory", auto_mode=ResourceMode.LIMIT) is None:
            main["mem_limit"] = f"{DEFAULT_MEMORY_MB}m"
        return {"services": {"main": main}}

    async def start(self, force_build: bool) -> None:
        self._hardening_dir = tempfile.TemporaryDirectory(prefix="traj2env-harbor-")
        (Path(self._hardening_dir.name) / "hardening.json").write_text(json.dumps(self._hardening()))
        await super().start(force_build)

    async def prepare_logs_for_host(self) -> None:
        await super().prepare_logs_for_host()
        # Every bind mount of the trial, whichever of them Harbor itself chowns.
        for mount in self._mounts:
            source = mount.get("source")
            if not mount.get("read_only") and source and Path(source).is_dir():
                for change in sanitize_host_folder(Path(source)):
                    self.logger.warning(f"traj2env: {change}")

    async def stop(self, delete: bool) -> None:
        try:
            await super().stop(delete)
        finally:
            if self._hardening_dir is not None:
                self._hardening_dir.cleanup()
                self._hardening_dir = None
            if not self._keep_containers:
                project = _sanitize_docker_compose_project_name(self.session_id)
                for leftover in await asyncio.to_thread(remove_compose_project, project):
                    self.logger.warning(f"traj2env: removed {leftover} left after docker compose down")


def remove_compose_project(project: str) -> list[str]:
    """Remove the containers, networks and volumes labelled with compose ``project``; returns
    what was removed (nothing when ``docker compose down`` did its job)."""
    client = connect()
    labelled = {"label": f"com.docker.compose.project={project}"}
    removed: list[str] = []
    # Containers first: a network or volume in use cannot be removed.
    kinds = (("container", client.containers), ("network", client.networks), ("volume", client.volumes))
    try:
        for kind, collection in kinds:
            for item in collection.list(filters=labelled):
                try:
                    item.remove(**({"force": True, "v": True} if kind == "container" else {}))
                except NotFound:
                    continue  # gone meanwhile
                removed.append(f"{kind} {item.name}")
    finally:
        client.close()
    return removed
