"""Base images without a registry: pull when a registry answers, else build from Debian.

Task Dockerfiles start ``FROM`` the public images a user expects (``python:3.13-slim``,
``node:20-slim``, named in ``traj2env_assets.conventions``) so published tasks rebuild
anywhere. On a machine with no registry the same names are filled by local stand-ins: a
Debian trixie ``minbase`` rootfs made with ``debootstrap``, completed with ``apt-get``
inside a chroot (debootstrap's own ``--include`` resolver misses dependencies, e.g.
npm's), and loaded with ``docker import`` under the public name. A stand-in must honestly
match its tag: trixie ships Python 3.13 and Node.js 20, and :func:`ensure_base_images` checks the version
inside the imported image before it reports success.

A stand-in may carry more than the public image, never less: ``tmux`` is added because
Harbor's ``terminus-2`` agent (``traj2env rollout``) drives a tmux session in the task
container and, with the task's networking off, cannot install it there. A stand-in built
from an older spec (its ``traj2env.packages`` label lacks a package) is rebuilt; the import
replaces the tag in place, so the name is never missing for the other users of the engine.

Usage::

    client = engine.connect()
    for outcome in ensure_base_images(client):
        print(outcome.name, outcome.status)   # found / pulled / built
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import docker
from docker.errors import APIError
from pydantic import BaseModel

from traj2env_assets.conventions import IMAGE_NODE_MAJOR, IMAGE_PYTHON_VERSION, NODE_BASE_IMAGE, PYTHON_BASE_IMAGE
from traj2env_assets.docker_engine.connection import image_present
from traj2env_assets.docker_engine.labels import project_labels

DEBIAN_MIRROR = "http://deb.debian.org/debian"
STAND_IN_LABEL = "traj2env.stand_in_for"
PACKAGES_LABEL = "traj2env.packages"
# Harbor's terminus-2 agent runs its shell in tmux inside the task container (see above).
AGENT_PACKAGES = ["tmux"]
BaseImageStatus = Literal["found", "pulled", "built"]


class BaseImageSpec(BaseModel):
    """A public image name and how to make an honest local stand-in for it."""

    name: str
    suite: str = "trixie"
    packages: list[str]
    setup: str
    env: dict[str, str]
    cmd: list[str]
    version_command: list[str]
    version_prefix: str


class BaseImageOutcome(BaseModel):
    name: str
    status: BaseImageStatus
    image_id: str
    version: str
    seconds: float


class BaseImageBuildError(RuntimeError):
    """A stand-in could not be built or does not match its tag."""


_DEFAULT_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}

PYTHON_SLIM = BaseImageSpec(
    name=PYTHON_BASE_IMAGE,
    packages=["python3", "python3-pip", "python3-venv", "python3-pytest", "python-is-python3", *AGENT_PACKAGES],
    # The official image lets `pip install` write to the system site; Debian's PEP 668
    # marker would refuse it, so the stand-in drops the marker to behave the same.
    setup=(
        "rm -f /usr/lib/python3*/EXTERNALLY-MANAGED\n"
        "command -v pip >/dev/null || ln -s pip3 /usr/bin/pip\n"
        "useradd --create-home --uid 1000 --shell /bin/bash app\n"
    ),
    env={**_DEFAULT_ENV, "PYTHONDONTWRITEBYTECODE": "1"},
    cmd=["python3"],
    version_command=["python", "--version"],
    version_prefix=f"Python {IMAGE_PYTHON_VERSION}.",
)

NODE_SLIM = BaseImageSpec(
    name=NODE_BASE_IMAGE,
    packages=["nodejs", "npm", *AGENT_PACKAGES],
    # The official image has a `node` user with uid 1000.
    setup="useradd --create-home --uid 1000 --shell /bin/bash node\n",
    env=_DEFAULT_ENV,
    cmd=["node"],
    version_command=["node", "--version"],
    version_prefix=f"v{IMAGE_NODE_MAJOR}.",
)

DEFAULT_BASE_IMAGES: tuple[BaseImageSpec, ...] = (PYTHON_SLIM, NODE_SLIM)


def ensure_base_images(
    client: docker.DockerClient,
    specs: Sequence[BaseImageSpec] = DEFAULT_BASE_IMAGES,
    *,
    mirror: str = DEBIAN_MIRROR,
    work_dir: Path | None = None,
) -> list[BaseImageOutcome]:
    """Make every spec's image present: keep it, pull it, or build a stand-in."""
    outcomes: list[BaseImageOutcome] = []
    missing: list[BaseImageSpec] = []
    for spec in specs:
        started = time.monotonic()
        status: BaseImageStatus | None = None
        if image_present(client, spec.name) and not _older_stand_in(client, spec):
            status = "found"
        elif _try_pull(client, spec.name):
            status = "pulled"
        if status is None:
            missing.append(spec)
            continue
        outcomes.append(_verified(client, spec, status, time.monotonic() - started))
    if missing:
        outcomes.extend(_build_stand_ins(client, missing, mirror=mirror, work_dir=work_dir))
    order = {spec.name: index for index, spec in enumerate(specs)}
    return sorted(outcomes, key=lambda outcome: order[outcome.name])


def _older_stand_in(client: docker.DockerClient, spec: BaseImageSpec) -> bool:
    """Our stand-in for ``spec``, built without some of its packages. An image pulled from a
    registry is the real one and is never replaced."""
    labels = client.images.get(spec.name).labels or {}
    if labels.get(STAND_IN_LABEL) != spec.name:
        return False
    return not set(spec.packages) <= set(labels.get(PACKAGES_LABEL, "").split(","))


def _try_pull(client: docker.DockerClient, name: str) -> bool:
    repository, _, tag = name.partition(":")
    try:
        client.images.pull(repository, tag=tag or "latest")
    except APIError:
        return False
    return True


def _verified(
    client: docker.DockerClient, spec: BaseImageSpec, status: BaseImageStatus, seconds: float
) -> BaseImageOutcome:
    image = client.images.get(spec.name)
    version = _run_version(client, spec)
    if not version.startswith(spec.version_prefix):
        raise BaseImageBuildError(
            f"{spec.name} reports {version!r}, which does not match its tag (expected {spec.version_prefix}...)"
        )
    return BaseImageOutcome(
        name=spec.name, status=status, image_id=image.id, version=version, seconds=round(seconds, 1)
    )


def _run_version(client: docker.DockerClient, spec: BaseImageSpec) -> str:
    output = client.containers.run(
        spec.name,
        spec.version_command,
        remove=True,
        network_mode="none",
        labels=project_labels("probe"),
    )
    return output.decode("utf-8", "replace").strip()


def _build_stand_ins(
    client: docker.DockerClient,
    specs: Sequence[BaseImageSpec],
    *,
    mirror: str,
    work_dir: Path | None,
) -> list[BaseImageOutcome]:
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        raise BaseImageBuildError(
            "no registry answered and building a stand-in needs root and debootstrap "
            "(apt-get install -y debootstrap): missing " + ", ".join(spec.name for spec in specs)
        )
    outcomes: list[BaseImageOutcome] = []
    with tempfile.TemporaryDirectory(prefix="traj2env-bases-", dir=work_dir) as tmp:
        root = Path(tmp)
        minbase_by_suite: dict[str, Path] = {}
        for spec in specs:
            started = time.monotonic()
            if spec.suite not in minbase_by_suite:
                minbase_by_suite[spec.suite] = _debootstrap(root, spec.suite, mirror)
            rootfs = root / f"rootfs-{len(outcomes)}"
            _run(["cp", "-a", str(minbase_by_suite[spec.suite]), str(rootfs)])
            _complete_rootfs(rootfs, spec)
            _import_rootfs(client, rootfs, spec)
            shutil.rmtree(rootfs)
            outcomes.append(_verified(client, spec, "built", time.monotonic() - started))
    return outcomes


def _debootstrap(root: Path, suite: str, mirror: str) -> Path:
    target = root / f"minbase-{suite}"
    _run(["debootstrap", "--variant=minbase", suite, str(target), mirror], timeout_s=1800)
    return target


def _complete_rootfs(rootfs: Path, spec: BaseImageSpec) -> None:
    env = {**_DEFAULT_ENV, "DEBIAN_FRONTEND": "noninteractive"}
    install = "apt-get update -qq && apt-get install -y -qq --no-install-recommends " + " ".join(spec.packages)
    cleanup = "apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/*.log"
    for script in (install, spec.setup, cleanup):
        _run(["chroot", str(rootfs), "/bin/sh", "-euc", script], env=env, timeout_s=1800)
    # The build host's resolver must not ship in the image.
    (rootfs / "etc" / "resolv.conf").unlink(missing_ok=True)


def _import_rootfs(client: docker.DockerClient, rootfs: Path, spec: BaseImageSpec) -> None:
    repository, _, tag = spec.name.partition(":")
    labels = project_labels("base", stand_in_for=spec.name, suite=spec.suite, packages=",".join(spec.packages))
    changes = [f"ENV {key}={value}" for key, value in spec.env.items()]
    changes += [f"LABEL {key}={value}" for key, value in labels.items()]
    changes.append("CMD " + json.dumps(spec.cmd))
    tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    assert tar.stdout is not None  # stdout=PIPE
    try:
        client.api.import_image_from_stream(tar.stdout, repository=repository, tag=tag, changes=changes)
    finally:
        tar.stdout.close()
        if tar.wait() != 0:
            raise BaseImageBuildError(f"tar of the {spec.name} rootfs failed")


def _run(argv: list[str], *, env: dict[str, str] | None = None, timeout_s: int = 600) -> None:
    result = subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=timeout_s)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
        raise BaseImageBuildError(f"{' '.join(argv[:3])} failed ({result.returncode}):\n{tail}")
