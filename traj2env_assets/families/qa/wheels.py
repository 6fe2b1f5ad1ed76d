"""The analysis packages a qa image installs offline: pandas and pyarrow wheels, fetched once on the host.

A qa agent reads parquet and CSV files, so its image needs pandas and pyarrow. The
Dockerfile must not reach PyPI (a build may run where only the context is available),
so ``pip download`` fetches the wheels for the image's Python (3.13, linux x86_64) into
``<cache root>/qa/wheels/<key>/`` once; every qa task's build context links them and the
Dockerfile checks each sha256 before ``pip install --no-index``. Versions are pinned
here (one line to change) and recorded in the Dockerfile.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from filelock import FileLock
from pydantic import BaseModel, ConfigDict

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.conventions import IMAGE_PYTHON_VERSION, file_sha256, wheel_platform_tag
from traj2env_assets.layout import QaCacheLayout

ANALYSIS_PACKAGES = ("pandas==3.1.1", "pyarrow==26.0.1")
# In this order: the wheels' cache folder is keyed by it.
PLATFORMS = (wheel_platform_tag("manylinux2014"), wheel_platform_tag("manylinux_2_28"))
DOWNLOAD_TIMEOUT_S = 600
MANIFEST = "wheels.json"


class WheelsUnavailable(RuntimeError):
    """``pip download`` failed (PyPI unreachable, no wheel for the platform)."""


class Wheel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path
    sha256: str


class WheelSet(BaseModel):
    """``wheels.json``: the wheels a completed download left, with their digests."""

    model_config = ConfigDict(extra="forbid")

    packages: list[str]
    wheels: list[Wheel]


def _directory(cache_root: Path) -> Path:
    key = hashlib.sha256("\0".join([*ANALYSIS_PACKAGES, IMAGE_PYTHON_VERSION, *PLATFORMS]).encode()).hexdigest()[:16]
    return QaCacheLayout(cache_root).wheels_dir(key)


def _download(target: Path) -> WheelSet:
    with tempfile.TemporaryDirectory(dir=target.parent) as staging:
        argv = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "--python-version",
            IMAGE_PYTHON_VERSION,
            "--implementation",
            "cp",
            *(f"--platform={platform}" for platform in PLATFORMS),
            "--dest",
            staging,
            *ANALYSIS_PACKAGES,
        ]
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise WheelsUnavailable(f"pip download timed out after {DOWNLOAD_TIMEOUT_S}s") from exc
        if result.returncode != 0:
            raise WheelsUnavailable(
                f"pip download exited {result.returncode}: {(result.stderr or result.stdout)[-1500:]}"
            )
        shutil.rmtree(target, ignore_errors=True)
        Path(staging).rename(target)
        # The staging directory is gone now; recreate it so the context manager's cleanup succeeds.
        Path(staging).mkdir()
    wheels = [Wheel(path=path, sha256=file_sha256(path)) for path in sorted(target.glob("*.whl"))]
    found = WheelSet(packages=list(ANALYSIS_PACKAGES), wheels=wheels)
    atomic_write_json(target / MANIFEST, found)
    return found


def analysis_wheels(cache_root: Path) -> WheelSet:
    """The wheels, downloaded on first use; raises :class:`WheelsUnavailable`."""
    target = _directory(cache_root)
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        try:
            return WheelSet.model_validate_json((target / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return _download(target)
