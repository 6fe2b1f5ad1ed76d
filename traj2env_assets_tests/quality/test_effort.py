"""Session effort over a replay timeline, and the difficulty label's thresholds."""

from __future__ import annotations

from traj2env_assets.quality.effort import SessionEffort, difficulty, measure_effort
from traj2env_assets.replay.models import FileEvent, ShellCommand, TimelineEvent, UserRequest


def _run(index: int, step: int, exit_code: int, at: str, subagent: str | None = None) -> ShellCommand:
    return ShellCommand(
        command_index=index,
        step_id=step,
        tool_call_id=f"c{index}",
        tool_name="Bash",
        command="pytest -q",
        exit_code=exit_code,
        timestamp=at,
        subagent=subagent,
    )


def _edit(step: int, path: str, applied: bool = True) -> FileEvent:
    return FileEvent(step_id=step, tool_name="Edit", path=path, action="edit", applied=applied)


TIMELINE: list[TimelineEvent] = [
    UserRequest(request_index=0, step_id=1, text="fix the tests", timestamp="2026-01-01T10:00:00Z"),
    _run(0, 2, 0, "2026-01-01T10:00:05Z"),  # before the window
    _run(1, 3, 1, "2026-01-01T10:01:00Z"),  # the failing check opens it
    _edit(4, "calc.py"),
    _edit(5, "calc.py", applied=False),
    _run(2, 6, 1, "2026-01-01T10:03:00Z"),
    _run(3, 3, 1, "2026-01-01T10:03:30Z", subagent="sub-1"),  # a sub-agent's own step 3
    _edit(7, "util.py"),
    _run(4, 8, 0, "2026-01-01T10:05:30Z"),  # the passing run closes it
    _run(5, 9, 2, "2026-01-01T10:30:00Z"),  # after the window
]


def test_effort_counts_the_main_agent_between_the_failing_and_the_passing_run() -> None:
    effort = measure_effort(
        TIMELINE,
        3,
        8,
        before={"calc.py": b"a\nb\nc\n", "util.py": None, "same.py": b"x\n"},
        after={"calc.py": b"a\nB\nc\nd\n", "util.py": b"def f():\n    return 1\n", "same.py": b"x\n"},
        window="fail_to_pass",
    )
    assert effort == SessionEffort(
        window="fail_to_pass",
        agent_steps=6,
        commands=3,
        failed_commands=2,
        edits=2,
        wall_seconds=270.0,
        files_changed=2,
        lines_changed=5,
    )


def test_without_timestamps_there_is_no_wall_time() -> None:
    timeline = [_run(0, 1, 1, ""), _run(1, 2, 0, "")]
    assert measure_effort(timeline, 1, 2, {}, {}, "request").wall_seconds is None


def _effort(**figures: float | None) -> SessionEffort:
    base = {
        "window": "fail_to_pass",
        "agent_steps": 3,
        "commands": 2,
        "failed_commands": 1,
        "edits": 1,
        "wall_seconds": 60.0,
        "files_changed": 1,
        "lines_changed": 4,
    }
    return SessionEffort.model_validate({**base, **figures})


def test_difficulty_thresholds() -> None:
    assert difficulty(_effort()) == "easy"
    assert difficulty(_effort(wall_seconds=None)) == "easy"
    assert difficulty(_effort(files_changed=2)) == "medium"
    assert difficulty(_effort(lines_changed=21)) == "medium"
    assert difficulty(_effort(failed_commands=3)) == "medium"
    assert difficulty(_effort(wall_seconds=300.0)) == "medium"
    assert difficulty(_effort(files_changed=5)) == "hard"
    assert difficulty(_effort(lines_changed=200)) == "hard"
    assert difficulty(_effort(failed_commands=6)) == "hard"
    assert difficulty(_effort(wall_seconds=1800.0)) == "hard"
