"""Replay: rebuild a session's project files over a virtual filesystem.

Reading a record (what the miners use)::

    from traj2env_assets.replay import ReplayRecord, ShellCommand, UserRequest, FileEvent

    record = ReplayRecord.load(workspace.replay_dir(key))
    for event in record.timeline:             # ordered: UserRequest | ShellCommand | FileEvent
        ...
    for command in record.shell_commands():   # ShellCommand: command_index, command, cwd,
        files = record.files_before(command.command_index)   # exit_code, output, effects, ...
        unknown = record.lost_before(command.command_index)
    for request in record.user_requests():    # UserRequest: request_index, step_id, text, timestamp
        project = record.files_before_request(request.request_index)  # as the previous request left it
    record.lost_files                         # {path: reason} at the end
    record.files                              # {path: FileSummary(state, content_hash, history)}
    record.final_files()                      # {path: content} known at the end
    record.fidelity                           # ReplayFidelity

Paths are POSIX paths relative to the project root (the session's starting
directory, ``record.record.project_root``). ``files_before(i)`` holds only files whose
content is known exactly; files referenced or changed but not known are in
``lost_before(i)`` with a reason in ``FileSummary``. ``ShellCommand.effects`` says
whether a command only read files (``none``), made file changes replay modelled
(``tracked``) or may have changed files replay cannot see (``opaque``: scripts,
builds, unknown npm scripts); a miner that needs "file edits and nothing else"
between two commands checks it. ``ShellCommand.output`` is the command's own output
(a Codex exec header is removed).

On disk (``<workspace>/replay/<key>/``): ``outcome.json`` (replayed or skipped, with
the cache key), ``record.json``, ``manifests.jsonl`` (one delta per shell command and per user request),
``blobs/`` and ``deltas.jsonl`` (file versions), ``fidelity.json``.

Modules: ``engine`` walks the trajectory and handles each native tool; ``state`` is
the bookkeeping every change goes through; ``file_ops`` applies patches and shell
file operations; ``shell_syntax``/``shell_effects`` read shell commands;
``apply_patch`` is Codex's patch format; ``text_edits`` and ``read_pieces`` are
edits and reads; ``paths`` keeps everything inside the project; ``vfs`` and
``content_store`` hold the files; ``record`` writes and reads records. The replay stage's
per-partition entry point (``replay_partition``) is ``traj2env_assets.stages.replay.partition``.
"""

from traj2env_assets.replay.engine import ReplayResult, replay_trajectory
from traj2env_assets.replay.models import (
    FileEvent,
    FileSummary,
    RefusedPath,
    ReplayFidelity,
    ReplayOutcome,
    ShellCommand,
    UserRequest,
)
from traj2env_assets.replay.record import ReplayRecord, write_record

__all__ = [
    "FileEvent",
    "FileSummary",
    "RefusedPath",
    "ReplayFidelity",
    "ReplayOutcome",
    "ReplayRecord",
    "ReplayResult",
    "ShellCommand",
    "UserRequest",
    "replay_trajectory",
    "write_record",
]
