"""Resolve Python requirements on the host and download the image platform's wheels.

The task images are ``python:3.13-slim`` on ``linux/amd64``: uv resolves for CPython 3.13
on ``x86_64-manylinux_2_28`` (wheels only, so nothing is built in the image) as of the
trajectory's time (``--exclude-newer``), and pip downloads exactly the pinned wheels for
that platform. Layout under the wheelhouse root::

    <root>/wheels/<wheel file>        shared by every task (PyPI never reuses a file name)
    <root>/locks/<key>.json           one resolution: requirements + time + platform -> pins

A second request with the same key reads the lock and touches no network, so builds
are reproducible and work with or without network.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import uv
from filelock import FileLock
from pydantic import BaseModel, ConfigDict

from traj2env_assets.conventions import (
    IMAGE_PYTHON_VERSION,
    IMAGE_UV_PLATFORM,
    IMAGE_WHEEL_PLATFORM_TAGS,
    file_sha256,
)
from traj2env_assets.layout import WheelhouseLayout

RESOLVE_TIMEOUT_S = 300
_ERROR_TAIL_CHARS = 1500


class DependencyResolutionError(RuntimeError):
    """The requirements cannot be resolved or downloaded as wheels (the reason is uv's or pip's)."""


class WheelFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str


class Wheelhouse(BaseModel):
    """One resolution's pins and wheels (``WheelhouseLayout.wheel_file``)."""

    model_config = ConfigDict(extra="forbid")

    key: str
    requirements: list[str]
    pinned_at: str | None
    pins: list[str]
    wheels: list[WheelFile]

    def wheel_paths(self, root: Path) -> dict[str, Path]:
        return {wheel.name: WheelhouseLayout(root).wheel_file(wheel.name) for wheel in self.wheels}


def resolution_key(requirements: list[str], pinned_at: str | None) -> str:
    payload = json.dumps(
        {
            "requirements": sorted(requirements),
            "pinned_at": pinned_at,
            "python": IMAGE_PYTHON_VERSION,
            "platform": IMAGE_UV_PLATFORM,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _run(argv: list[str], what: str, stdin: str | None = None) -> str:
    try:
        result = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise DependencyResolutionError(f"{what} timed out after {RESOLVE_TIMEOUT_S}s") from exc
    if result.returncode != 0:
        raise DependencyResolutionError(
            f"{what} failed: {(result.stderr or result.stdout).strip()[-_ERROR_TAIL_CHARS:]}"
        )
    return result.stdout


def _compile(requirements: list[str], pinned_at: str | None) -> list[str]:
    argv = [
        uv.find_uv_bin(),
        "pip",
        "compile",
        "-",
        "--quiet",
        "--no-header",
        "--no-annotate",
        "--python-version",
        IMAGE_PYTHON_VERSION,
        "--python-platform",
        IMAGE_UV_PLATFORM,
        "--only-binary",
        ":all:",
        "--no-config",
    ]
    if pinned_at:
        argv += ["--exclude-newer", pinned_at]
    output = _run(argv, "uv pip compile", stdin="\n".join(requirements) + "\n")
    return [line.strip() for line in output.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def download_wheels(pins: list[str], target: Path) -> None:
    """Download exactly ``pins`` (every package pinned, no resolution) as wheels for the image's
    Python and platform into ``target``; pip keeps the wheels already there."""
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--python-version",
        IMAGE_PYTHON_VERSION,
        "--implementation",
        "cp",
        "--dest",
        str(target),
    ]
    for platform in IMAGE_WHEEL_PLATFORM_TAGS:
        argv += ["--platform", platform]
    _run([*argv, *pins], "pip download")


def _cached(lock_path: Path, root: Path) -> Wheelhouse | None:
    try:
        house = Wheelhouse.model_validate_json(lock_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    paths = house.wheel_paths(root)
    if all(paths[w.name].is_file() and paths[w.name].stat().st_size > 0 for w in house.wheels):
        return house
    return None


def build_wheelhouse(requirements: list[str], pinned_at: str | None, root: Path) -> Wheelhouse:
    """The wheels that install ``requirements`` in the image, resolved as of ``pinned_at``
    (RFC 3339 or a date) and cached under ``root``. Raises :class:`DependencyResolutionError`."""
    key = resolution_key(requirements, pinned_at)
    layout = WheelhouseLayout(root)
    lock_path = layout.lock_file(key)
    if (house := _cached(lock_path, root)) is not None:
        return house
    layout.wheels_dir.mkdir(parents=True, exist_ok=True)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path) + ".lock"):
        if (house := _cached(lock_path, root)) is not None:
            return house
        pins = _compile(requirements, pinned_at)
        wheels: list[WheelFile] = []
        with tempfile.TemporaryDirectory(dir=root, prefix=".download-") as scratch:
            download_wheels(pins, Path(scratch))
            for path in sorted(Path(scratch).glob("*.whl")):
                target = layout.wheel_file(path.name)
                if not target.is_file():
                    os.replace(path, target)
                wheels.append(WheelFile(name=path.name, sha256=file_sha256(target)))
            leftovers = [p.name for p in Path(scratch).iterdir() if p.suffix != ".whl"]
        if leftovers:
            raise DependencyResolutionError(f"pip downloaded files that are not wheels: {', '.join(leftovers)}")
        house = Wheelhouse(key=key, requirements=requirements, pinned_at=pinned_at, pins=pins, wheels=wheels)
        tmp = lock_path.with_suffix(".tmp")
        tmp.write_text(house.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, lock_path)
    return house
