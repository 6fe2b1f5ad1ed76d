"""Pydantic models of the replay record files under ``<workspace>/replay/<key>/``.

- ``record.json``     -> :class:`ReplayRecordFile` (timeline, per-file summary, refused paths)
- ``manifests.jsonl`` -> one :class:`Manifest` per checkpoint (each shell command and
  each user request, in order): the change to the project files since the previous
  checkpoint (a delta, so the file grows with the changes, not with commands x files)
- ``deltas.jsonl`` and ``blobs/`` -> file versions (see :mod:`.content_store`)
- ``fidelity.json``   -> :class:`ReplayFidelity`
- ``outcome.json``    -> :class:`ReplayOutcome` (always written; says replayed or skipped)
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

RECORD_SCHEMA = "traj2env.replay/1"


def dump_json(model: BaseModel) -> bytes:
    """``model.model_dump_json()`` as UTF-8: the serializer's own bytes, without
    model_dump_json's decode and a file writer's encode."""
    return model.__pydantic_serializer__.to_json(model)


FileAction = Literal[
    "write",
    "edit",
    "read",
    "patch",
    "heredoc",
    "redirect",
    "pre_image",
    "delete",
    "move",
    "copy",
    "lost",
    "repository",
]
"""What happened to a file. ``lost`` means its content is no longer known exactly;
``repository``: taken from the commit current at the session's start."""

ShellEffects = Literal["none", "tracked", "opaque"]
"""``none``: reads only; ``tracked``: every file change it made is modelled (heredoc,
redirect, rm/mv/cp, apply_patch, sed -i marking a file lost); ``opaque``: it may have
changed files we cannot see (a script, ``npm run``, a build, an installer)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserRequest(_Model):
    kind: Literal["user_request"] = "user_request"
    request_index: int
    """Position among the user requests (0-based); the key of ``files_before_request``."""
    step_id: int
    text: str
    timestamp: str | None = None


class ShellCommand(_Model):
    kind: Literal["shell_command"] = "shell_command"
    command_index: int
    """Position among the shell commands (0-based); the key of ``files_before``."""
    step_id: int
    tool_call_id: str
    tool_name: str
    command: str
    cwd: str | None = None
    """Working directory relative to the project root ('' = root); None if outside or unknown."""
    exit_code: int | None = None
    output: str = ""
    is_error: bool | None = None
    timestamp: str | None = None
    effects: ShellEffects = "none"
    subagent: str | None = None
    """The embedded sub-agent trajectory id when the call came from one (``step_id`` is
    then the sub-agent's own step)."""


class FileEvent(_Model):
    kind: Literal["file_event"] = "file_event"
    step_id: int
    tool_call_id: str | None = None
    tool_name: str
    path: str
    action: FileAction
    applied: bool
    """False when the operation could not be applied (see ``reason``)."""
    reason: str | None = None
    content_hash: str | None = None
    """The file's version after the event, when known."""
    timestamp: str | None = None
    subagent: str | None = None


TimelineEvent = Annotated[UserRequest | ShellCommand | FileEvent, Field(discriminator="kind")]


class RefusedPath(_Model):
    step_id: int
    tool_call_id: str | None = None
    tool_name: str
    raw_path: str
    reason: str


class FileProvenance(_Model):
    step_id: int
    action: FileAction
    reason: str | None = None


class FileSummary(_Model):
    state: Literal["present", "deleted", "lost"]
    content_hash: str | None = None
    lost_reason: str | None = None
    history: list[FileProvenance] = Field(default_factory=list)


class ReplayFidelity(_Model):
    """How much of the session's file state replay could rebuild."""

    files_rebuilt: int = 0
    """Files whose final content is known exactly."""
    files_lost: int = 0
    """Files referenced or changed whose final content is not known."""
    files_deleted: int = 0
    edits_applied: int = 0
    """Writes, edits, patches and shell writes applied (tool result not an error)."""
    edits_failed: int = 0
    edits_failed_by_reason: dict[str, int] = Field(default_factory=dict)
    edits_rejected: int = 0
    """Edits whose tool result was an error or missing: not applied, by design."""
    full_reads: int = 0
    resyncs: int = 0
    """Times a full read or a recorded pre-image disagreed with the replayed content."""
    unsafe_paths: int = 0
    unsafe_paths_by_reason: dict[str, int] = Field(default_factory=dict)
    commands: int = 0
    opaque_commands: int = 0
    user_requests: int = 0
    events: int = 0
    duplicate_tool_calls: int = 0
    stored_bytes: int = 0
    """Bytes of file content stored for all snapshots (blobs + deltas)."""


class Manifest(_Model):
    """The project files at one checkpoint (just before a shell command or a user
    request), as a change since the previous checkpoint (the first one is relative to
    an empty project)."""

    checkpoint: int
    command_index: int | None = None
    request_index: int | None = None
    set: dict[str, str] = Field(default_factory=dict)
    """path -> content hash, for files whose known content changed."""
    removed: list[str] = Field(default_factory=list)
    """Files that no longer exist or whose content is no longer known."""
    lost: list[str] = Field(default_factory=list)
    """Files that became unknown (also listed in ``removed``)."""
    found: list[str] = Field(default_factory=list)
    """Files that stopped being lost (known again or deleted)."""


class SubagentProject(_Model):
    """A sub-agent that worked under its own directory, outside the session's project:
    replayed there on its own, since its files are not the session's."""

    project_root: str
    files: dict[str, FileSummary] = Field(default_factory=dict)
    refused_paths: list[RefusedPath] = Field(default_factory=list)
    fidelity: ReplayFidelity = Field(default_factory=ReplayFidelity)


class ReplayRecordFile(_Model):
    schema_version: str = RECORD_SCHEMA
    project_root: str | None = None
    source_format: str | None = None
    session_id: str | None = None
    timeline: list[TimelineEvent] = Field(default_factory=list)
    files: dict[str, FileSummary] = Field(default_factory=dict)
    refused_paths: list[RefusedPath] = Field(default_factory=list)
    fidelity: ReplayFidelity = Field(default_factory=ReplayFidelity)
    subagent_projects: dict[str, SubagentProject] = Field(default_factory=dict)
    """By sub-agent trajectory id; the session's own figures leave them out."""


class ReplayOutcome(_Model):
    """``outcome.json``: the stage's verdict for one partition, and the cache key."""

    status: Literal["replayed", "skipped"]
    reason: str | None = None
    """For ``skipped``: ``gate`` (scan gate blocked it), ``scan_missing`` (no verdict yet),
    ``conversion_missing``, ``replay_error`` (a bug in replay; ``detail`` has it),
    ``invalid_trajectory``."""
    detail: str | None = None
    input_hash: str
    code_version: str
