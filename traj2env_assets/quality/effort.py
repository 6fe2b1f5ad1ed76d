"""How hard the recorded session found a task's change, and a difficulty label from it.

The figures come from the replay timeline between the step a family names as where the
work started (repair: the first failing run of the check; extend: the user's request;
build: the session's first request) and the step where it ended (the passing run, the
request's last event, the session's end). Only the session's own agent counts: a
sub-agent's steps are numbered in its own trajectory and cannot be placed in the window.

``difficulty`` thresholds (one owner; docs/dataset.md quotes them):

- ``hard``: any of 5+ files changed, 200+ lines changed, 6+ failed commands, 30+ minutes.
- ``easy``: all of at most 1 file, at most 20 lines, at most 2 failed commands (a repair
  window opens on one), and under 5 minutes when the log has timestamps.
- ``medium``: the rest.

Peers grade difficulty by the time an expert needs (SWE-bench Verified's annotators:
"<15 min", "15 min - 1 hour", ...); a session's own effort is the signal a log holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from traj2env_assets.replay.models import (
    FileEvent,
    ShellCommand,
    TimelineEvent,
    UserRequest,
)

Difficulty = Literal["easy", "medium", "hard"]
Window = Literal["fail_to_pass", "request"]

HARD_FILES, HARD_LINES, HARD_FAILED_COMMANDS, HARD_SECONDS = 5, 200, 6, 30 * 60
EASY_FILES, EASY_LINES, EASY_FAILED_COMMANDS, EASY_SECONDS = 1, 20, 2, 5 * 60


class EffortWindow(BaseModel):
    """Where a family says the task's work happened in the session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window: Window
    first_command: int | None = None
    """``fail_to_pass``: the failing run's and the passing run's command indexes."""
    last_command: int | None = None
    request_index: int | None = None
    """``request``: the request (0-based) whose events, up to the next request, are the work."""


class SessionEffort(BaseModel):
    """``[metadata.session_effort]`` in task.toml."""

    model_config = ConfigDict(extra="forbid")

    window: Window
    agent_steps: int
    """Distinct agent steps (turns with tool calls) in the window."""
    commands: int
    failed_commands: int
    """Commands that exited non-zero (a repair window opens on the failing check)."""
    edits: int
    """File edits the replay applied."""
    wall_seconds: float | None = None
    """Between the window's first and last timestamped event; None without timestamps (TOML has
    no null, so task.toml omits the key)."""
    files_changed: int
    lines_changed: int
    """Added plus removed lines between the task's start and reference files."""


def measure_effort(
    timeline: Sequence[TimelineEvent],
    first_step: int,
    last_step: int,
    before: Mapping[str, bytes | None],
    after: Mapping[str, bytes | None],
    window: Window,
) -> SessionEffort:
    """Effort over the main agent's events with ``first_step <= step_id <= last_step``;
    ``before``/``after``: the changed files' content at the start and in the reference
    (None: absent)."""
    events = [
        event
        for event in timeline
        if getattr(event, "subagent", None) is None and first_step <= event.step_id <= last_step
    ]
    commands = [event for event in events if isinstance(event, ShellCommand)]
    edits = [event for event in events if isinstance(event, FileEvent) and event.applied]
    steps = {event.step_id for event in events if isinstance(event, ShellCommand | FileEvent)}
    changed = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
    return SessionEffort(
        window=window,
        agent_steps=len(steps),
        commands=len(commands),
        failed_commands=sum(1 for command in commands if command.exit_code not in (0, None)),
        edits=len(edits),
        wall_seconds=_seconds([event.timestamp for event in events]),
        files_changed=len(changed),
        lines_changed=sum(_lines_changed(before.get(path), after.get(path)) for path in changed),
    )


def window_steps(timeline: Sequence[TimelineEvent], window: EffortWindow) -> tuple[int, int] | None:
    """The first and last main-agent step of ``window``; None when the timeline lacks its anchors."""
    main = [event for event in timeline if getattr(event, "subagent", None) is None]
    if window.window == "fail_to_pass":
        steps = {
            event.command_index: event.step_id
            for event in main
            if isinstance(event, ShellCommand) and event.command_index in (window.first_command, window.last_command)
        }
        if window.first_command not in steps or window.last_command not in steps:
            return None
        return steps[window.first_command], steps[window.last_command]
    requests = sorted(event.step_id for event in main if isinstance(event, UserRequest))
    if window.request_index is None or window.request_index >= len(requests):
        return None
    later = requests[window.request_index + 1 :]
    last = later[0] - 1 if later else max(event.step_id for event in main)
    return requests[window.request_index], last


def difficulty(effort: SessionEffort) -> Difficulty:
    seconds = effort.wall_seconds
    if (
        effort.files_changed >= HARD_FILES
        or effort.lines_changed >= HARD_LINES
        or effort.failed_commands >= HARD_FAILED_COMMANDS
        or (seconds is not None and seconds >= HARD_SECONDS)
    ):
        return "hard"
    if (
        effort.files_changed <= EASY_FILES
        and effort.lines_changed <= EASY_LINES
        and effort.failed_commands <= EASY_FAILED_COMMANDS
        and (seconds is None or seconds < EASY_SECONDS)
    ):
        return "easy"
    return "medium"


def _seconds(timestamps: Sequence[str | None]) -> float | None:
    moments = [moment for text in timestamps if text and (moment := _parse(text)) is not None]
    if len(moments) < 2:
        return None
    return round((max(moments) - min(moments)).total_seconds(), 3)


def _parse(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)  # 3.11+ reads a trailing Z
    except ValueError:
        return None
    # Logs mix zone-aware and naive stamps; naive ones are taken as UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _lines_changed(old: bytes | None, new: bytes | None) -> int:
    old_lines = (old or b"").decode("utf-8", "replace").splitlines()
    new_lines = (new or b"").decode("utf-8", "replace").splitlines()
    return sum(
        1
        for line in difflib.unified_diff(old_lines, new_lines, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )
