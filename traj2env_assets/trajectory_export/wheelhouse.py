"""The harness image's Python packages, downloaded on the host.

Inside ``docker build`` PyPI is unreachable, so the Dockerfile installs with
``pip install --no-index --find-links wheelhouse``. The wheels are for the image's
interpreter (CPython 3.13 on Linux, this machine's architecture), pinned to the versions
installed here so the harness runs with the SDK the tests ran with.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from traj2env_assets.conventions import IMAGE_PYTHON_VERSION
from traj2env_assets.trajectory_export.layout import HARNESS_REQUIREMENTS, REQUIREMENTS_FILE


class WheelhouseError(RuntimeError):
    pass


def pinned_requirements() -> list[str]:
    return [f"{name}=={importlib.metadata.version(name)}" for name in HARNESS_REQUIREMENTS]


def _pip() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        if found := shutil.which(name):
            return [found]
    raise WheelhouseError("no pip found to download the harness wheels; pass --wheelhouse DIR")


def download_wheelhouse(target: Path) -> Path:
    """Download the pinned requirements and their dependencies as wheels into ``target``."""
    # Unlike the task images (conventions.IMAGE_PLATFORM), the harness image is built for this
    # machine, where the export runs it.
    machine = platform.machine()
    target.mkdir(parents=True, exist_ok=True)
    platforms = [f"{tag}_{machine}" for tag in ("manylinux_2_28", "manylinux_2_17", "manylinux2014", "linux")]
    requirements = pinned_requirements()
    argv = [
        *_pip(),
        "download",
        "--quiet",
        "--dest",
        str(target),
        "--only-binary=:all:",
        "--python-version",
        IMAGE_PYTHON_VERSION,
        "--implementation",
        "cp",
        "--abi",
        f"cp{IMAGE_PYTHON_VERSION.replace('.', '')}",
        *(arg for tag in platforms for arg in ("--platform", tag)),
        *requirements,
    ]
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if completed.returncode != 0:
        raise WheelhouseError(f"pip download failed: {completed.stderr[-2000:]}")
    (target / REQUIREMENTS_FILE).write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return target


def copy_wheelhouse(source: Path, target: Path) -> Path:
    """Reuse a wheelhouse made earlier (it must carry its requirements.txt)."""
    if not (source / REQUIREMENTS_FILE).is_file():
        raise WheelhouseError(f"{source} has no {REQUIREMENTS_FILE}: not a wheelhouse made by traj2env export")
    shutil.copytree(source, target)
    return target
