"""Apply file operations to the replay state: Codex patches and what shell commands did.

The operations come from :mod:`.apply_patch` (patch text) and :mod:`.shell_effects`
(heredocs, redirections, rm/mv/cp/mkdir/touch, in-place edits, git, formatters).
"""

from __future__ import annotations

import fnmatch
import posixpath

from traj2env_assets.replay.apply_patch import AddFile, DeleteFile, PatchError, UpdateFile, apply_update, parse_patch
from traj2env_assets.replay.content_store import Unchanged
from traj2env_assets.replay.models import FileAction
from traj2env_assets.replay.read_pieces import redaction_marker
from traj2env_assets.replay.shell_effects import (
    FileOp,
    LoseAll,
    LoseMentioned,
    LosePath,
    LoseUnder,
    MakeDir,
    MovePath,
    PatchText,
    PathRef,
    RemovePath,
    Touch,
    WriteFrom,
)
from traj2env_assets.replay.state import CallContext, ReplayState, parents


def apply_patch_text(state: ReplayState, c: CallContext, text: str, cwd: str | None, refused: bool) -> None:
    """Apply a Codex patch; ``refused``: the session says it did not apply (each file
    it names is then recorded as a rejected edit, by design not a failure)."""
    try:
        ops = parse_patch(text)
    except PatchError as error:
        if refused:
            state.fidelity.edits_rejected += 1
        else:
            # A redacted log kept no patch at all: not a grammar variant replay misses.
            state.count_failure("content_redacted" if redaction_marker(text) else error.reason)
        return
    for op in ops:
        path = state.resolve(c, op.path, cwd)
        if path is None:
            continue
        if refused:
            state.reject(c, path, "patch")
        elif isinstance(op, AddFile):
            state.set(c, path, op.content, "patch")
        elif isinstance(op, DeleteFile):
            state.delete(c, path)
        elif isinstance(op, UpdateFile):
            _patch_update(state, c, path, op, cwd)


def _patch_update(state: ReplayState, c: CallContext, path: str, op: UpdateFile, cwd: str | None) -> None:
    destination = state.resolve(c, op.move_to, cwd) if op.move_to is not None else path
    current = state.vfs.content(path)
    updated: str | None = None
    reason = "file_unknown"
    if current is not None:
        try:
            updated = apply_update(current, op.chunks) if op.chunks else current
        except PatchError as error:
            reason = error.reason
    # The patch succeeded in the session, so a moved file has left its old path even
    # when replay cannot rebuild the new content.
    if destination != path:
        state.delete(c, path, "move")
    if destination is None:
        return
    if updated is None:
        state.fail(c, destination, "patch", reason)
    else:
        state.set(c, destination, updated, "patch")


def _ref(state: ReplayState, c: CallContext, ref: PathRef) -> str | None:
    if ref.cwd is None and not ref.raw.startswith(("/", "~")):
        state.refuse(c, ref.raw, "unknown_cwd")
        return None
    return state.resolve(c, ref.raw, ref.cwd)


def _dir_ref(state: ReplayState, ref: PathRef) -> str | None:
    absolute = state.paths.absolute(ref.raw, ref.cwd) if ref.cwd is not None else None
    return state.paths.relative_dir(absolute) if isinstance(absolute, str) else None


def apply_file_op(state: ReplayState, c: CallContext, op: FileOp) -> None:
    path: str | None  # None: a reference outside the project
    if isinstance(op, WriteFrom):
        _write_from(state, c, op)
    elif isinstance(op, LosePath) and op.pattern:
        for path in _matching(state, op.target, recursive=False):
            if path in state.vfs.known:
                state.lose(c, path, op.reason)
    elif isinstance(op, LosePath):
        if (path := _ref(state, c, op.target)) is not None:
            state.lose(c, path, op.reason)
            if op.reason == "symlink":
                state.symlinks.add(path)
    elif isinstance(op, LoseUnder):
        directory = _dir_ref(state, op.directory)
        targets = list(state.vfs.known) if directory is None else state.vfs.paths_under(directory)
        if directory is not None and state.vfs.exists(directory):
            targets.append(directory)
        for path in targets:
            if path in state.vfs.known:
                state.lose(c, path, op.reason)
    elif isinstance(op, LoseAll):
        for path in list(state.vfs.known):
            state.lose(c, path, op.reason)
    elif isinstance(op, LoseMentioned):
        for path in list(state.vfs.known):
            if path in op.text or posixpath.basename(path) in op.text:
                state.lose(c, path, op.reason)
    elif isinstance(op, RemovePath):
        _remove(state, c, op)
    elif isinstance(op, MovePath):
        _move(state, c, op)
    elif isinstance(op, MakeDir):
        if (directory := _dir_ref(state, op.target)) is not None:
            state.vfs.add_dir(directory)
    elif isinstance(op, Touch):
        if (path := _ref(state, c, op.target)) is not None and not state.vfs.exists(path):
            if path in state.vfs.deleted:
                state.set(c, path, "", "redirect")
            else:
                state.lose(c, path, "touch_unknown_file")
    elif isinstance(op, PatchText):
        apply_patch_text(state, c, op.text, op.cwd, c.result.patch_refused)


def _write_from(state: ReplayState, c: CallContext, op: WriteFrom) -> None:
    path = _ref(state, c, op.target)
    if path is None:
        return
    pieces: list[str] = []
    for part in op.parts:
        if isinstance(part, str):
            pieces.append(part)
            continue
        source = _ref(state, c, part)
        if source == path:
            # The shell truncates a `>` target before the command reads it; with `>>`
            # cat refuses to read its own output file.
            if not op.append:
                state.set(c, path, "", "redirect")
            return
        text = state.vfs.content(source) if source is not None else None
        if text is None:
            state.lose(c, path, "shell_copy_unknown_source")
            return
        pieces.append(text)
    text = "".join(pieces)
    action: FileAction = "heredoc" if op.action == "heredoc" else "redirect"
    if not op.append:
        state.set(c, path, text, action)
        return
    base = state.vfs.content(path)
    if base is None and path not in state.vfs.deleted:
        state.lose(c, path, "append_to_unknown_file")
        return
    kept = base or ""
    state.set(c, path, kept + text, action, Unchanged(len(kept), 0))


def _matching(state: ReplayState, target: PathRef, recursive: bool) -> list[str]:
    """Known or lost files a glob names (with ``recursive``, also files under a match)."""
    absolute = state.paths.absolute(target.raw, target.cwd) if target.cwd else None
    pattern = state.paths.relative_dir(absolute) if isinstance(absolute, str) else None
    if pattern is None:
        return []
    return [
        path
        for path in [*state.vfs.known, *state.vfs.lost]
        if fnmatch.fnmatchcase(path, pattern)
        or (recursive and any(fnmatch.fnmatchcase(prefix, pattern) for prefix in parents(path)))
    ]


def _remove(state: ReplayState, c: CallContext, op: RemovePath) -> None:
    path: str | None  # None: a reference outside the project
    if op.pattern:
        for path in _matching(state, op.target, op.recursive):
            state.delete(c, path)
        return
    if _dir_ref(state, op.target) == "":
        # `rm -rf .` (or the project's own absolute path) empties the project.
        for path in state.vfs.paths_under(""):
            state.delete(c, path)
        return
    path = _ref(state, c, op.target)
    if path is None:
        return
    for inside in state.vfs.paths_under(path):
        state.delete(c, inside)
    state.delete(c, path)


def _move(state: ReplayState, c: CallContext, op: MovePath) -> None:
    source = _ref(state, c, op.source)
    destination = _ref(state, c, op.destination)
    if destination is None:
        if source is not None and not op.keep_source:
            state.lose(c, source, "moved_outside_project")
        return
    if source is None:
        state.lose(c, destination, "shell_copy_unknown_source")
        return
    if op.destination.raw.endswith("/") or state.vfs.is_dir(destination):
        destination = posixpath.join(destination, posixpath.basename(source))
    action: FileAction = "copy" if op.keep_source else "move"
    moves = (
        [(source, destination)]
        if state.vfs.exists(source)
        else [(inside, destination + inside[len(source) :]) for inside in state.vfs.paths_under(source)]
    )
    if not moves:
        state.lose(c, destination, "shell_copy_unknown_source")
        return
    for old, new in moves:
        text = state.vfs.content(old)
        if text is None:
            state.lose(c, new, state.vfs.lost.get(old, "shell_copy_unknown_source"))
        else:
            state.set(c, new, text, action)
        if not op.keep_source:
            state.delete(c, old, "move")
