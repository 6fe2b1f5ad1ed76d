"""The Dockerfile lines that install a Python project's declared dependencies offline.

Shared by every family whose image runs a Python project's tests (repair, extend): the
project's declared requirements (``declared_requirements``) plus the check's own tool are
resolved on the host into the workspace's wheelhouse, as of the trajectory's time, copied
into the build context and installed with ``pip install --no-index``, so builds need no
network.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import BaseModel, Field

from traj2env_assets.dependencies.declared import declared_requirements
from traj2env_assets.dependencies.requirements import trajectory_date, trajectory_time
from traj2env_assets.dependencies.system_libraries import system_library_lines
from traj2env_assets.dependencies.wheelhouse import (
    DependencyResolutionError,
    build_wheelhouse,
)

IMAGE_WHEELS = "/tmp/traj2env-wheels"
# uv's words for a package it may not build: "Because pydes==2.0.1 has no usable wheels".
_NO_WHEEL = re.compile(
    r"[Bb]ecause (?:all versions of |only )?([A-Za-z0-9][A-Za-z0-9._-]*)[^\n]*? has no (?:usable )?wheels"
)


class DependenciesNotInstallable(ValueError):
    """The project's dependencies cannot be installed in the image: requirements that do not
    resolve into wheels (the message names them and carries uv's reason), or no wheelhouse."""


class EnvironmentPlan(BaseModel):
    """The Dockerfile lines installing the project's dependencies, and the host files
    (wheels) they need in the build context."""

    lines: list[str] = Field(default_factory=list)
    context_files: dict[str, str] = Field(default_factory=dict)


def python_environment(
    files: Mapping[str, str], timestamp: str | None, wheelhouse_dir: Path | None, tool: str = "pytest"
) -> EnvironmentPlan:
    """Install what the project in ``files`` declares plus ``tool`` (a package name), pinned to
    ``timestamp``. Raises :class:`DependenciesNotInstallable`."""
    declared = declared_requirements(files)
    if not declared and tool == "pytest":
        # Nothing declared: the tests need only pytest, which the offline stand-in of the
        # python image has; anywhere else a pinned pytest is installed.
        date = trajectory_date(timestamp)
        pin = f" --exclude-newer {date}" if date else ""
        install = (
            "python3 -m pip install --no-cache-dir --break-system-packages uv && "
            f"uv pip install --system --break-system-packages{pin} pytest"
        )
        return EnvironmentPlan(lines=[f'RUN python3 -c "import pytest" 2>/dev/null || ({install})'])
    names = {canonicalize_name(Requirement(line).name) for line in declared}
    requirements = declared + ([tool] if canonicalize_name(tool) not in names else [])
    if wheelhouse_dir is None:
        raise DependenciesNotInstallable(
            f"the project needs {', '.join(requirements)} and no wheelhouse directory was given to resolve them into"
        )
    try:
        house = build_wheelhouse(requirements, trajectory_time(timestamp), wheelhouse_dir)
    except DependencyResolutionError as exc:
        wheelless = list(dict.fromkeys(_NO_WHEEL.findall(str(exc))))
        lead = f"no wheel for {', '.join(wheelless)}; " if wheelless else ""
        raise DependenciesNotInstallable(f"{lead}{', '.join(requirements)}: {exc}") from exc
    wheels = house.wheel_paths(wheelhouse_dir)
    install = (
        f"python3 -m pip install --no-cache-dir --no-index --find-links {IMAGE_WHEELS} "
        "--break-system-packages --ignore-installed --disable-pip-version-check "
        + " ".join(shlex.quote(pin) for pin in house.pins)
    )
    return EnvironmentPlan(
        lines=[
            *system_library_lines(house.pins),
            f"COPY wheels/ {IMAGE_WHEELS}/",
            f"RUN {install} && rm -rf {IMAGE_WHEELS}",
        ],
        context_files={f"wheels/{name}": str(path) for name, path in wheels.items()},
    )
