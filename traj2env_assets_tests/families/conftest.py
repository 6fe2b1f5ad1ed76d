"""Replay records of the bundled sample sessions, for the family miners."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "trajectories"


def record_for(path: Path, directory: Path) -> ReplayRecord:
    trajectory = convert_source(path).trajectory
    assert trajectory is not None
    write_record(replay_trajectory(trajectory), directory)
    return ReplayRecord.load(directory)


@pytest.fixture
def sample_record(tmp_path: Path):
    def load(relative: str) -> ReplayRecord:
        return record_for(EXAMPLES / relative, tmp_path / relative.replace("/", "_"))

    return load
