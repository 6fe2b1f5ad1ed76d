"""Replay one ATIF trajectory over a virtual filesystem.

Tool calls keep their native names and arguments (see ``formats/extras.py``):

- Claude Code: ``Write``, ``Edit`` (first occurrence, or every one with
  ``replace_all``), ``MultiEdit``, ``Read`` without ``offset``/``limit``, ``Bash``;
  ``original_file`` on the result is a pre-image that resyncs the file first.
- pi: ``write``, ``edit`` (``oldText``/``newText`` or ``edits[]``), ``read``, ``bash``.
- Codex: ``apply_patch`` (custom tool, or inside a shell command), ``shell``,
  ``shell_command``, ``exec_command``, ``local_shell_call``, ``write_stdin``.

A write or edit is applied only when its result exists and is not an error. Each
shell command is recorded with the project files as they were just before it.
Embedded sub-agent trajectories are replayed where the parent's call returns them.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import shlex
from dataclasses import dataclass, field
from typing import Any

from atif import Step, ToolCall, Trajectory

from traj2env_assets.replay.apply_patch import AddFile, DeleteFile, PatchError, UpdateFile, apply_update, parse_patch
from traj2env_assets.replay.content_store import ContentStore
from traj2env_assets.replay.models import (
    CommandManifest,
    FileAction,
    FileEvent,
    RefusedPath,
    ReplayFidelity,
    ReplayRecordFile,
    ShellCommand,
    UserRequest,
)
from traj2env_assets.replay.paths import ProjectPaths, Refused
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
    analyse_shell,
)
from traj2env_assets.replay.text_edits import (
    EditError,
    Replacement,
    apply_against_original,
    apply_sequential,
    decode_numbered_read,
    decode_pi_read,
)
from traj2env_assets.replay.tool_results import CallResult, read_result
from traj2env_assets.replay.vfs import VirtualFS

SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "shell_command", "exec_command", "local_shell_call"})


@dataclass
class ReplayResult:
    record: ReplayRecordFile
    manifests: list[CommandManifest]
    store: ContentStore


@dataclass
class _Call:
    step: Step
    call: ToolCall
    result: CallResult
    cwd: str | None
    subagent: str | None

    @property
    def args(self) -> dict[str, Any]:
        return self.call.arguments if isinstance(self.call.arguments, dict) else {}


def _text_arg(args: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str):
            return value
    return None


def _session_cwd(trajectory: Trajectory) -> str | None:
    for extra in (trajectory.extra, trajectory.agent.extra):
        if isinstance(extra, dict) and isinstance(extra.get("cwd"), str):
            return extra["cwd"]
    return None


@dataclass
class _Replayer:
    paths: ProjectPaths
    session_cwd: str | None
    store: ContentStore = field(default_factory=ContentStore)
    fidelity: ReplayFidelity = field(default_factory=ReplayFidelity)
    record: ReplayRecordFile = field(default_factory=ReplayRecordFile)
    manifests: list[CommandManifest] = field(default_factory=list)
    seen_calls: set[str] = field(default_factory=set)
    running: dict[str, ShellCommand] = field(default_factory=dict)
    visited_subagents: set[str] = field(default_factory=set)
    symlinks: set[str] = field(default_factory=set)
    """Paths made symlinks by ``ln``: their target is unknown, so writing through them
    could mean writing anywhere; such writes are refused."""

    def __post_init__(self) -> None:
        self.vfs = VirtualFS(self.store)

    # -- walking the trajectory -------------------------------------------------

    def run(self, trajectory: Trajectory, subagent: str | None = None) -> None:
        embedded = {sub.trajectory_id: sub for sub in trajectory.subagent_trajectories or [] if sub.trajectory_id}
        for step in trajectory.steps:
            if step.is_copied_context:
                continue
            if step.source == "user" and subagent is None and not (step.extra or {}).get("meta"):
                self._user_request(step)
            results = {r.source_call_id: r for r in (step.observation.results if step.observation else [])}
            for call in step.tool_calls or []:
                if call.tool_call_id in self.seen_calls:
                    self.fidelity.duplicate_tool_calls += 1
                    continue
                self.seen_calls.add(call.tool_call_id)
                raw_result = results.get(call.tool_call_id)
                call_cwd = (call.extra or {}).get("cwd") if isinstance(call.extra, dict) else None
                context = _Call(step, call, read_result(raw_result), call_cwd or self.session_cwd, subagent)
                self._dispatch(context)
                for ref in (raw_result.subagent_trajectory_ref or []) if raw_result else []:
                    sub = embedded.get(ref.trajectory_id or "")
                    if sub is not None and ref.trajectory_id not in self.visited_subagents:
                        self.visited_subagents.add(ref.trajectory_id or "")
                        self.run(sub, subagent=ref.trajectory_id)

    def _user_request(self, step: Step) -> None:
        message = step.message
        text = message if isinstance(message, str) else "\n".join(p.text or "" for p in message if p.type == "text")
        self.record.timeline.append(UserRequest(step_id=step.step_id, text=text, timestamp=step.timestamp))
        self.fidelity.user_requests += 1

    def _dispatch(self, c: _Call) -> None:
        name = c.call.function_name
        if name in ("Write", "write"):
            self._write(c)
        elif name in ("Edit", "MultiEdit", "edit"):
            self._edit(c)
        elif name in ("Read", "read"):
            self._read(c)
        elif name in SHELL_TOOLS:
            self._shell(c)
        elif name == "apply_patch":
            self._apply_patch_tool(c)
        elif name == "write_stdin":
            self._write_stdin(c)
        elif name == "NotebookEdit":
            raw = _text_arg(c.args, "notebook_path")
            if raw and (path := self._resolve(c, raw)) is not None:
                self._lose(c, path, "notebook_edit")

    # -- helpers ------------------------------------------------------------------

    def resolve_dir(self, raw: str, cwd: str | None) -> object:
        return self.paths.resolve_dir(raw, cwd)

    def npm_scripts(self, cwd: str) -> dict[str, str] | None:
        directory = self.paths.relative_dir(cwd)
        text = self.vfs.content(posixpath.join(directory, "package.json") if directory else "package.json") if directory is not None else None
        if text is None:
            return None
        try:
            scripts = json.loads(text).get("scripts")
        except (ValueError, AttributeError):
            return None
        return {k: v for k, v in scripts.items() if isinstance(v, str)} if isinstance(scripts, dict) else None

    def _resolve(self, c: _Call, raw: str, cwd: str | None = None) -> str | None:
        resolved = self.paths.resolve(raw, cwd if cwd is not None else c.cwd)
        if isinstance(resolved, Refused):
            self._refuse(c, raw, resolved.reason)
            return None
        if self.symlinks and any(p in self.symlinks for p in (resolved.path, *_parents(resolved.path))):
            self._refuse(c, raw, "symlink")
            return None
        return resolved.path

    def _refuse(self, c: _Call, raw: str, reason: str) -> None:
        self.record.refused_paths.append(
            RefusedPath(
                step_id=c.step.step_id,
                tool_call_id=c.call.tool_call_id,
                tool_name=c.call.function_name,
                raw_path=raw,
                reason=reason,
            )
        )
        self.fidelity.unsafe_paths += 1
        reasons = self.fidelity.unsafe_paths_by_reason
        reasons[reason] = reasons.get(reason, 0) + 1

    def _event(self, c: _Call, path: str, action: FileAction, applied: bool, reason: str | None = None) -> None:
        self.record.timeline.append(
            FileEvent(
                step_id=c.step.step_id,
                tool_call_id=c.call.tool_call_id,
                tool_name=c.call.function_name,
                path=path,
                action=action,
                applied=applied,
                reason=reason,
                content_hash=self.vfs.known.get(path),
                timestamp=c.step.timestamp,
                subagent=c.subagent,
            )
        )

    def _set(self, c: _Call, path: str, text: str, action: FileAction) -> None:
        self.vfs.set_content(path, text, action, c.step.step_id)
        if action != "read":
            self.fidelity.edits_applied += 1
        self._event(c, path, action, True)

    def _lose(self, c: _Call, path: str, reason: str) -> None:
        self.vfs.mark_lost(path, reason, c.step.step_id)
        self._event(c, path, "lost", False, reason)

    def _fail(self, c: _Call, path: str, action: FileAction, reason: str) -> None:
        self.fidelity.edits_failed += 1
        failures = self.fidelity.edits_failed_by_reason
        failures[reason] = failures.get(reason, 0) + 1
        self._event(c, path, action, False, reason)
        self.vfs.mark_lost(path, reason, c.step.step_id)

    def _reject(self, c: _Call, path: str, action: FileAction) -> None:
        self.fidelity.edits_rejected += 1
        self._event(c, path, action, False, "tool_error" if c.result.present else "no_result")

    # -- file tools ---------------------------------------------------------------

    def _write(self, c: _Call) -> None:
        raw = _text_arg(c.args, "file_path", "path")
        content = _text_arg(c.args, "content")
        if raw is None or content is None or (path := self._resolve(c, raw)) is None:
            return
        if c.result.rejected:
            self._reject(c, path, "write")
            return
        self._set(c, path, content, "write")

    def _edit_list(self, c: _Call) -> tuple[list[Replacement], bool] | None:
        args = c.args
        name = c.call.function_name
        if name == "edit":
            edits = args.get("edits")
            if isinstance(edits, list):
                pairs = [(e.get("oldText"), e.get("newText")) for e in edits if isinstance(e, dict)]
            else:
                pairs = [(args.get("oldText"), args.get("newText"))]
            if not pairs or any(not isinstance(o, str) or not isinstance(n, str) for o, n in pairs):
                return None
            return [Replacement(str(o), str(n)) for o, n in pairs], True
        raw_edits = args.get("edits") if name == "MultiEdit" else [args]
        if not isinstance(raw_edits, list):
            return None
        replacements: list[Replacement] = []
        for edit in raw_edits:
            if not isinstance(edit, dict):
                return None
            old, new = edit.get("old_string"), edit.get("new_string")
            if not isinstance(old, str) or not isinstance(new, str):
                return None
            replacements.append(Replacement(old, new, bool(edit.get("replace_all"))))
        return replacements, False

    def _edit(self, c: _Call) -> None:
        raw = _text_arg(c.args, "file_path", "path")
        if raw is None or (path := self._resolve(c, raw)) is None:
            return
        if c.result.rejected:
            self._reject(c, path, "edit")
            return
        parsed = self._edit_list(c)
        if parsed is None:
            self._fail(c, path, "edit", "invalid_arguments")
            return
        self._pre_image(c, path)
        current = self.vfs.content(path)
        if current is None:
            self._fail(c, path, "edit", "file_unknown")
            return
        edits, pi_semantics = parsed
        try:
            updated = apply_against_original(current, edits) if pi_semantics else apply_sequential(current, edits)
        except EditError as error:
            self._fail(c, path, "edit", error.reason)
            return
        self._set(c, path, updated, "edit")

    def _pre_image(self, c: _Call, path: str) -> None:
        original = c.result.extra.original_file if c.result.extra else None
        if original is None:
            return
        current = self.vfs.content(path)
        if current == original:
            return
        if current is not None:
            self.fidelity.resyncs += 1
        self.vfs.set_content(path, original, "pre_image", c.step.step_id)
        self._event(c, path, "pre_image", True)

    def _read(self, c: _Call) -> None:
        raw = _text_arg(c.args, "file_path", "path")
        if raw is None or (path := self._resolve(c, raw)) is None:
            return
        if c.result.rejected:
            return
        partial = c.args.get("offset") is not None or c.args.get("limit") is not None
        content = None if partial else self._full_read_content(c)
        if content is None:
            if not self.vfs.exists(path):
                self._lose(c, path, "partial_read")
            return
        self.fidelity.full_reads += 1
        current = self.vfs.content(path)
        if current == content:
            return
        if current is not None:
            self.fidelity.resyncs += 1
        self._set(c, path, content, "read")

    def _full_read_content(self, c: _Call) -> str | None:
        extra = c.result.extra
        if extra is not None and extra.file_content is not None:
            whole = extra.file_start_line in (None, 1) and (
                extra.file_num_lines is None
                or extra.file_total_lines is None
                or extra.file_num_lines >= extra.file_total_lines
            )
            return extra.file_content if whole else None
        if c.call.function_name == "read":
            return decode_pi_read(c.result.text)
        return decode_numbered_read(c.result.text)

    # -- shell ----------------------------------------------------------------------

    def _shell_command(self, c: _Call) -> tuple[str, str | None] | None:
        args = c.args
        workdir = _text_arg(args, "workdir", "working_directory", "cwd")
        command: Any = args.get("command", args.get("cmd"))
        action = args.get("action")
        if command is None and isinstance(action, dict):
            command = action.get("command")
            workdir = workdir or _text_arg(action, "working_directory", "workdir")
        if isinstance(command, list) and all(isinstance(part, str) for part in command):
            if len(command) >= 3 and posixpath.basename(command[0]) in ("bash", "sh", "zsh") and command[1] in ("-c", "-lc", "-l"):
                command = command[-1]
            elif command[:1] == ["apply_patch"] and len(command) == 2:
                return "apply_patch " + shlex.quote(command[1]), workdir
            else:
                command = " ".join(shlex.quote(part) for part in command)
        if not isinstance(command, str):
            return None
        return command, workdir

    def _shell(self, c: _Call) -> None:
        parsed = self._shell_command(c)
        if parsed is None:
            return
        command, workdir = parsed
        cwd = self.paths.resolve_dir(workdir, c.cwd) if workdir else c.cwd
        cwd = cwd if isinstance(cwd, str) else None
        analysis = analyse_shell(command, cwd, self)
        index = self.fidelity.commands
        self.manifests.append(self.vfs.manifest(index))
        relative_cwd = self.paths.relative_dir(cwd) if cwd else None
        is_error = c.result.is_error if c.result.present else None
        exit_code = c.result.exit_code
        if exit_code is None and c.call.function_name in ("Bash", "bash") and c.result.present:
            exit_code = None if c.result.is_error else 0
        event = ShellCommand(
            command_index=index,
            step_id=c.step.step_id,
            tool_call_id=c.call.tool_call_id,
            tool_name=c.call.function_name,
            command=command,
            cwd=relative_cwd,
            exit_code=exit_code,
            output=c.result.text,
            is_error=is_error,
            timestamp=c.step.timestamp,
            effects=analysis.effects,
            subagent=c.subagent,
        )
        self.record.timeline.append(event)
        self.fidelity.commands += 1
        if analysis.effects == "opaque":
            self.fidelity.opaque_commands += 1
        if session := c.result.running_session:
            self.running[session] = event
        if c.result.not_run:
            return
        for op in analysis.ops:
            self._apply_op(c, op)

    def _write_stdin(self, c: _Call) -> None:
        session = c.args.get("session_id")
        event = self.running.get(str(session)) if session is not None else None
        if event is None or not c.result.present:
            return
        event.output += c.result.text
        if c.result.exit_code is not None:
            event.exit_code = c.result.exit_code

    def _apply_patch_tool(self, c: _Call) -> None:
        text = _text_arg(c.args, "input", "patch", "raw")
        if text is None:
            return
        if c.result.rejected:
            self.fidelity.edits_rejected += 1
            return
        workdir = _text_arg(c.args, "workdir")
        cwd = self.paths.resolve_dir(workdir, c.cwd) if workdir else c.cwd
        self._patch(c, text, cwd if isinstance(cwd, str) else None)

    def _patch(self, c: _Call, text: str, cwd: str | None) -> None:
        try:
            ops = parse_patch(text)
        except PatchError as error:
            self.fidelity.edits_failed += 1
            reasons = self.fidelity.edits_failed_by_reason
            reasons[error.reason] = reasons.get(error.reason, 0) + 1
            return
        for op in ops:
            path = self._resolve(c, op.path, cwd)
            if path is None:
                continue
            if isinstance(op, AddFile):
                self._set(c, path, op.content, "patch")
            elif isinstance(op, DeleteFile):
                self.vfs.delete(path, c.step.step_id)
                self._event(c, path, "delete", True)
            elif isinstance(op, UpdateFile):
                self._patch_update(c, path, op, cwd)

    def _patch_update(self, c: _Call, path: str, op: UpdateFile, cwd: str | None) -> None:
        current = self.vfs.content(path)
        if current is None:
            self._fail(c, path, "patch", "file_unknown")
            return
        try:
            updated = apply_update(current, op.chunks) if op.chunks else current
        except PatchError as error:
            self._fail(c, path, "patch", error.reason)
            return
        if op.move_to is None:
            self._set(c, path, updated, "patch")
            return
        destination = self._resolve(c, op.move_to, cwd)
        self.vfs.delete(path, c.step.step_id, "move")
        self._event(c, path, "move", True)
        if destination is not None:
            self._set(c, destination, updated, "patch")

    # -- shell file operations --------------------------------------------------------

    def _ref(self, c: _Call, ref: PathRef) -> str | None:
        if ref.cwd is None and not ref.raw.startswith(("/", "~")):
            self._refuse(c, ref.raw, "unknown_cwd")
            return None
        return self._resolve(c, ref.raw, ref.cwd)

    def _dir_ref(self, ref: PathRef) -> str | None:
        absolute = self.paths.absolute(ref.raw, ref.cwd) if ref.cwd is not None else None
        return self.paths.relative_dir(absolute) if isinstance(absolute, str) else None

    def _apply_op(self, c: _Call, op: FileOp) -> None:
        if isinstance(op, WriteFrom):
            self._write_from(c, op)
        elif isinstance(op, LosePath) and op.pattern:
            for path in self._matching(op.target, recursive=False):
                if path in self.vfs.known:
                    self._lose(c, path, op.reason)
        elif isinstance(op, LosePath):
            if (path := self._ref(c, op.target)) is not None:
                self._lose(c, path, op.reason)
                if op.reason == "symlink":
                    self.symlinks.add(path)
        elif isinstance(op, LoseUnder):
            directory = self._dir_ref(op.directory)
            targets = list(self.vfs.known) if directory is None else self.vfs.paths_under(directory)
            if directory is not None and self.vfs.exists(directory):
                targets.append(directory)
            for path in targets:
                if path in self.vfs.known:
                    self._lose(c, path, op.reason)
        elif isinstance(op, LoseAll):
            for path in list(self.vfs.known):
                self._lose(c, path, op.reason)
        elif isinstance(op, LoseMentioned):
            for path in list(self.vfs.known):
                if path in op.text or posixpath.basename(path) in op.text:
                    self._lose(c, path, op.reason)
        elif isinstance(op, RemovePath):
            self._remove(c, op)
        elif isinstance(op, MovePath):
            self._move(c, op)
        elif isinstance(op, MakeDir):
            if (directory := self._dir_ref(op.target)) is not None:
                self.vfs.add_dir(directory)
        elif isinstance(op, Touch):
            if (path := self._ref(c, op.target)) is not None and not self.vfs.exists(path):
                if path in self.vfs.deleted:
                    self._set(c, path, "", "redirect")
                else:
                    self._lose(c, path, "touch_unknown_file")
        elif isinstance(op, PatchText):
            self._patch(c, op.text, op.cwd)

    def _write_from(self, c: _Call, op: WriteFrom) -> None:
        path = self._ref(c, op.target)
        if path is None:
            return
        pieces: list[str] = []
        for part in op.parts:
            if isinstance(part, str):
                pieces.append(part)
                continue
            source = self._ref(c, part)
            text = self.vfs.content(source) if source is not None else None
            if text is None:
                self._lose(c, path, "shell_copy_unknown_source")
                return
            pieces.append(text)
        text = "".join(pieces)
        if op.append:
            base = self.vfs.content(path)
            if base is None and path not in self.vfs.deleted:
                self._lose(c, path, "append_to_unknown_file")
                return
            text = (base or "") + text
        action: FileAction = "heredoc" if op.action == "heredoc" else "redirect"
        self._set(c, path, text, action)

    def _matching(self, target: PathRef, recursive: bool) -> list[str]:
        """Known or lost files a glob names (with ``recursive``, also files under a match)."""
        absolute = self.paths.absolute(target.raw, target.cwd) if target.cwd else None
        pattern = self.paths.relative_dir(absolute) if isinstance(absolute, str) else None
        if pattern is None:
            return []
        return [
            path
            for path in [*self.vfs.known, *self.vfs.lost]
            if fnmatch.fnmatchcase(path, pattern)
            or (recursive and any(fnmatch.fnmatchcase(prefix, pattern) for prefix in _parents(path)))
        ]

    def _remove(self, c: _Call, op: RemovePath) -> None:
        if op.pattern:
            for path in self._matching(op.target, op.recursive):
                self.vfs.delete(path, c.step.step_id)
                self._event(c, path, "delete", True)
            return
        path = self._ref(c, op.target)
        if path is None:
            return
        for inside in self.vfs.paths_under(path):
            self.vfs.delete(inside, c.step.step_id)
            self._event(c, inside, "delete", True)
        self.vfs.delete(path, c.step.step_id)
        self._event(c, path, "delete", True)

    def _move(self, c: _Call, op: MovePath) -> None:
        source = self._ref(c, op.source)
        destination = self._ref(c, op.destination)
        if destination is None:
            if source is not None and not op.keep_source:
                self._lose(c, source, "moved_outside_project")
            return
        if source is None:
            self._lose(c, destination, "shell_copy_unknown_source")
            return
        if op.destination.raw.endswith("/") or self.vfs.is_dir(destination):
            destination = posixpath.join(destination, posixpath.basename(source))
        action: FileAction = "copy" if op.keep_source else "move"
        moves = [(source, destination)] if self.vfs.exists(source) else [
            (inside, destination + inside[len(source) :]) for inside in self.vfs.paths_under(source)
        ]
        if not moves:
            self._lose(c, destination, "shell_copy_unknown_source")
            return
        for old, new in moves:
            text = self.vfs.content(old)
            if text is None:
                self._lose(c, new, self.vfs.lost.get(old, "shell_copy_unknown_source"))
            else:
                self._set(c, new, text, action)
            if not op.keep_source:
                self.vfs.delete(old, c.step.step_id, "move")
                self._event(c, old, "move", True)

    # -- result ---------------------------------------------------------------------------

    def finish(self) -> ReplayResult:
        vfs = self.vfs
        self.record.files = vfs.summaries()
        self.fidelity.files_rebuilt = len(vfs.known)
        self.fidelity.files_lost = len(vfs.lost)
        self.fidelity.files_deleted = sum(1 for path in vfs.deleted if path in vfs.history)
        self.fidelity.events = len(self.record.timeline)
        self.fidelity.stored_bytes = self.store.stored_bytes
        self.record.fidelity = self.fidelity
        return ReplayResult(record=self.record, manifests=self.manifests, store=self.store)


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def replay_trajectory(trajectory: Trajectory, project_root: str | None = None) -> ReplayResult:
    """Replay ``trajectory``; ``project_root`` overrides the session cwd as the root."""
    session_cwd = _session_cwd(trajectory)
    root = project_root or session_cwd
    replayer = _Replayer(paths=ProjectPaths(root), session_cwd=session_cwd or root)
    extra = trajectory.extra if isinstance(trajectory.extra, dict) else {}
    replayer.record.project_root = replayer.paths.root
    replayer.record.source_format = extra.get("source_format") if isinstance(extra.get("source_format"), str) else None
    replayer.record.session_id = trajectory.session_id
    replayer.run(trajectory)
    return replayer.finish()
