"""What the converters keep in ATIF ``extra`` dicts for later stages.

ATIF has no field for exit codes, error flags, per-command working directories or
Claude Code's file pre-images, but replay and the miners need them. Every converter
writes them under these names and nothing else; a key is present only when the
source log recorded the value.

- ``Trajectory.extra``      -> :class:`TrajectoryExtra`
- ``Trajectory.agent.extra`` keeps ``cwd`` (the session's starting directory) when known.
- ``ToolCall.extra``        -> :class:`ToolCallExtra`
- ``ObservationResult.extra`` -> :class:`ObservationExtra`

Tool calls keep the source log's native tool name (``Write``, ``Edit``, ``MultiEdit``,
``Read``, ``Bash`` for Claude Code; ``exec_command``, ``shell``, ``shell_command``,
``local_shell_call``, ``apply_patch``, ``write_stdin`` for Codex; ``bash``, ``edit``,
``read``, ``write`` for pi) and its native arguments unchanged.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")


class TrajectoryExtra(_Extra):
    source_format: str | None = None
    """``atif``, ``claude-code``, ``codex`` or ``pi``."""
    source_path: str | None = None
    cwd: str | None = None
    """The session's starting working directory, when the log recorded it."""
    skipped_lines: int | None = None
    """Lines that were not valid JSON or not objects."""
    unknown_line_types: int | None = None
    duplicate_tool_calls: int | None = None
    subagent_meta: dict[str, object] | None = None
    """A Claude Code sub-agent's ``agent-<id>.meta.json`` (``agentType``, ``toolUseId``, ...)."""


class ToolCallExtra(_Extra):
    cwd: str | None = None
    """Working directory in force when the call was made (Claude Code per-line cwd,
    Codex ``workdir`` or turn cwd, pi session cwd)."""


class ObservationExtra(_Extra):
    exit_code: int | None = None
    is_error: bool | None = None
    original_file: str | None = None
    """Claude Code ``toolUseResult.originalFile``: the whole file before an Edit/Write."""
    file_content: str | None = None
    """Claude Code ``toolUseResult.file.content`` of a Read."""
    file_start_line: int | None = None
    file_num_lines: int | None = None
    file_total_lines: int | None = None
