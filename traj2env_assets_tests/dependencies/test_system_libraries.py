"""Debian runtime libraries for Python wheels that load them (issue 23: PySide6 needs libGL,
and QtCore libglib-2.0 and libgthread-2.0)."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import docker
import pytest

from traj2env_assets.dependencies.system_libraries import (
    system_library_lines,
    system_packages,
)

QT_LIBRARIES = ["libdbus-1-3", "libegl1", "libfontconfig1", "libgl1", "libglib2.0-0", "libxkbcommon0"]


def test_qt_bindings_need_the_qt_runtime_libraries() -> None:
    assert system_packages(["PySide6==6.9.3", "requests>=2"]) == QT_LIBRARIES
    assert system_packages(["PyQt5_Qt5 ; python_version > '3'"]) == QT_LIBRARIES


def test_other_packages_and_bad_lines_need_nothing() -> None:
    assert system_packages(["requests", "numpy==2.1", "not a requirement !!"]) == []
    assert system_library_lines(["requests"]) == []


@pytest.mark.docker
def test_the_line_makes_libgl_loadable_in_the_python_image(tmp_path: Path) -> None:
    """Built for real from the Debian mirror: the library PySide6 failed on is then there."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.13-slim\n" + "\n".join(system_library_lines(["pyside6"])) + "\n"
    )
    tag = f"traj2env-test-system-libraries:{uuid.uuid4().hex[:12]}"
    client = docker.from_env()
    client.images.build(path=str(tmp_path), tag=tag, rm=True, forcerm=True)
    try:
        libraries = ("libGL.so.1", "libEGL.so.1", "libxkbcommon.so.0", "libglib-2.0.so.0", "libgthread-2.0.so.0")
        probe = f"import ctypes; [ctypes.CDLL(n) for n in {libraries!r}]"
        result = subprocess.run(
            ["docker", "run", "--rm", "--network", "none", tag, "python3", "-c", probe],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
    finally:
        client.images.remove(tag, force=True)
