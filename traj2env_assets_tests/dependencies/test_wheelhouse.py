"""Resolving requirements as of a date into a wheelhouse for the image's platform
(real uv and pip against PyPI, which the host reaches; builds do not need to)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from traj2env_assets.dependencies import DependencyResolutionError, build_wheelhouse

pytestmark = pytest.mark.slow


def test_resolves_as_of_the_trajectory_time_for_cpython_3_13_manylinux(tmp_path: Path, monkeypatch) -> None:
    house = build_wheelhouse(["attrs", "python-dateutil"], "2024-01-01T00:00:00Z", tmp_path)
    # attrs 23.2.0 (2023-12-31) is the newest release before 2024; 24.1.0 came in August.
    assert house.pins == ["attrs==23.2.0", "python-dateutil==2.8.2", "six==1.16.0"]
    assert sorted(w.name for w in house.wheels) == [
        "attrs-23.2.0-py3-none-any.whl",
        "python_dateutil-2.8.2-py2.py3-none-any.whl",
        "six-1.16.0-py2.py3-none-any.whl",
    ]
    assert all(path.is_file() for path in house.wheel_paths(tmp_path).values())

    def no_network(*args, **kwargs):
        raise AssertionError("a cached resolution must not run uv or pip")

    monkeypatch.setattr(subprocess, "run", no_network)
    assert build_wheelhouse(["python-dateutil", "attrs"], "2024-01-01T00:00:00Z", tmp_path) == house


def test_binary_wheels_are_the_image_platforms(tmp_path: Path) -> None:
    house = build_wheelhouse(["pyyaml==6.0.2"], "2025-01-01T00:00:00Z", tmp_path)
    (wheel,) = [w.name for w in house.wheels]
    assert wheel.startswith("PyYAML-6.0.2-cp313-cp313-") and "manylinux" in wheel and "x86_64" in wheel


def test_unresolvable_requirements_say_why(tmp_path: Path) -> None:
    with pytest.raises(DependencyResolutionError, match=r"(?s)uv pip compile failed.*attrs==999.0"):
        build_wheelhouse(["attrs==999.0"], None, tmp_path)
