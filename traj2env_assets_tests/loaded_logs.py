"""A log file converted and replayed as the pipeline does it, for tests on real shapes and
the real corpus alike."""

from __future__ import annotations

from pathlib import Path

from atif import Trajectory

from traj2env_assets.formats.convert import convert_source
from traj2env_assets.replay import ReplayRecord, replay_trajectory, write_record


def load_trajectory(path: Path) -> Trajectory:
    converted = convert_source(path)
    assert converted.trajectory is not None, converted.record.detail
    return converted.trajectory


def replay_record(trajectory: Trajectory, directory: Path, project_root: str | None = None) -> ReplayRecord:
    write_record(replay_trajectory(trajectory, project_root=project_root), directory)
    return ReplayRecord.load(directory)


def npm_check_exit_codes(trajectory: Trajectory) -> list[int | None]:
    """The recorded exit code of every ``… && npm run check`` bash call, in order."""
    codes = []
    for step in trajectory.steps:
        results = {r.source_call_id: r for r in (step.observation.results if step.observation else [])}
        for call in step.tool_calls or []:
            if call.function_name == "bash" and call.arguments.get("command", "").endswith("&& npm run check"):
                codes.append((results[call.tool_call_id].extra or {}).get("exit_code"))
    return codes
