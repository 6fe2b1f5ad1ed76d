"""Replay one ATIF trajectory over a virtual filesystem.

Tool calls keep their native names and arguments (see ``formats/extras.py``):

- Claude Code: ``Write``, ``Edit`` (first occurrence, or every one with
  ``replace_all``), ``MultiEdit``, ``Read``, ``Bash``, ``NotebookEdit`` (marks the
  notebook lost); ``original_file`` on the result is a pre-image that resyncs the file.
- pi: ``write``, ``edit`` (``oldText``/``newText`` or ``edits[]``), ``read``, ``bash``.
- Codex: ``apply_patch`` (custom tool, or inside a shell command), ``shell``,
  ``shell_command``, ``exec_command``, ``local_shell_call``, ``write_stdin``; a
  successful ``cat f`` is a full read, and ``sed -n``/``head``/``tail -n +K``/``nl -ba``
  print pieces of a file (see ``shell_effects.shell_read``); chained reads are split
  among their files when the boundaries are proven (see ``shell_reads``). Content a log
  shows redacted is never taken for a file's (``content_redacted``).

A read rebuilds a file when it shows all of it, or when pieces read at offsets
cover it (see :mod:`.read_pieces`); a partial view of an unknown file marks it lost.

A write or edit is applied only when its result exists and is not an error. Each
shell command is recorded with the project files as they were just before it.
Embedded sub-agent trajectories are replayed where the parent's call returns them; a
sub-agent whose own directory lies outside the session's project is replayed with that
directory as its project, apart (``record.subagent_projects``).
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atif import Step, Trajectory

from traj2env_assets.replay.content_store import ContentStore
from traj2env_assets.replay.file_ops import apply_file_op, apply_patch_text
from traj2env_assets.replay.models import (
    Manifest,
    ReplayFidelity,
    ReplayRecordFile,
    ShellCommand,
    SubagentProject,
    UserRequest,
    dump_json,
)
from traj2env_assets.replay.npm import package_scripts
from traj2env_assets.replay.paths import ProjectPaths, Refused, normalise_dir
from traj2env_assets.replay.read_pieces import PieceAssembler, ReadChunk, parse_pi_read, redacted
from traj2env_assets.replay.shell_effects import analyse_shell, shell_read
from traj2env_assets.replay.shell_reads import split_chain
from traj2env_assets.replay.state import CallContext, ReplayState, SeedCheck
from traj2env_assets.replay.stream import StreamedTrajectory, TimelineSpill, split_at_timeline
from traj2env_assets.replay.text_edits import (
    EditError,
    Replacement,
    apply_against_original,
    apply_sequential,
    decode_numbered_read,
)
from traj2env_assets.replay.tool_results import read_result

SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "shell_command", "exec_command", "local_shell_call"})
CODEX_SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "local_shell_call"})
"""Codex has no Read tool; its reads are `cat`/`sed -n` whose output it keeps verbatim
(Claude Code and pi trim command output, so their shell reads are not used)."""


@dataclass
class ReplayResult:
    record: ReplayRecordFile
    manifests: list[Manifest]
    store: ContentStore
    spill: TimelineSpill | None = None
    """For a streamed replay: the timeline, on disk (``record.timeline`` is then empty)."""
    seed_check: SeedCheck | None = None
    """When the replay started from a repository's files: how the log's reads compared."""


def _text_arg(args: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str):
            return value
    return None


def session_cwd(trajectory: Trajectory) -> str | None:
    for extra in (trajectory.extra, trajectory.agent.extra):
        if isinstance(extra, dict) and isinstance(extra.get("cwd"), str):
            return extra["cwd"]
    return None


@dataclass
class _Replayer:
    state: ReplayState
    session_cwd: str | None
    manifests: list[Manifest] = field(default_factory=list)
    seen_calls: set[str] = field(default_factory=set)
    spill: TimelineSpill | None = None
    running: dict[str, ShellCommand] = field(default_factory=dict)
    """Codex unified-exec sessions still running, by session id."""
    visited_subagents: set[str] = field(default_factory=set)
    pieces: dict[str, PieceAssembler] = field(default_factory=dict)
    """Files read in pieces, by path, while their content is unknown."""

    @property
    def fidelity(self) -> ReplayFidelity:
        return self.state.fidelity

    # -- walking the trajectory -------------------------------------------------

    def run(self, trajectory: Trajectory, subagent: str | None = None) -> None:
        self.run_steps(trajectory.steps, trajectory, subagent)

    def run_steps(self, steps: Iterable[Step], trajectory: Trajectory, subagent: str | None = None) -> None:
        """Replay ``steps`` (the trajectory's, possibly streamed) with its embedded sub-agents."""
        embedded = {sub.trajectory_id: sub for sub in trajectory.subagent_trajectories or [] if sub.trajectory_id}
        for step in steps:
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
                context = CallContext(step, call, read_result(raw_result), call_cwd or self.session_cwd, subagent)
                self._dispatch(context)
                for ref in (raw_result.subagent_trajectory_ref or []) if raw_result else []:
                    sub = embedded.get(ref.trajectory_id or "")
                    if sub is not None and ref.trajectory_id not in self.visited_subagents:
                        self.visited_subagents.add(ref.trajectory_id or "")
                        self._subagent(sub, ref.trajectory_id or "")

    def _subagent(self, sub: Trajectory, subagent_id: str) -> None:
        """Replay a sub-agent where the parent's call returned it; one whose own directory
        lies outside the session's project works on another project, replayed on its own."""
        own = normalise_dir(session_cwd(sub))
        if own is None or self.state.paths.root is None or self.state.paths.relative_dir(own) is not None:
            self.run(sub, subagent=subagent_id)
            return
        replayer = _replayer(sub, own)
        replayer.visited_subagents = self.visited_subagents
        replayer.run(sub, subagent=subagent_id)
        result = replayer.finish()
        self.state.record.subagent_projects[subagent_id] = SubagentProject(
            project_root=own,
            files=result.record.files,
            refused_paths=result.record.refused_paths,
            fidelity=result.record.fidelity,
        )

    def _user_request(self, step: Step) -> None:
        message = step.message
        text = message if isinstance(message, str) else "\n".join(p.text or "" for p in message if p.type == "text")
        index = self.fidelity.user_requests
        self._checkpoint(Manifest(checkpoint=len(self.manifests), request_index=index))
        self.state.record.timeline.append(
            UserRequest(request_index=index, step_id=step.step_id, text=text, timestamp=step.timestamp)
        )
        self.fidelity.user_requests += 1

    def _checkpoint(self, manifest: Manifest) -> None:
        self.manifests.append(self.state.vfs.manifest(manifest))
        if self.spill is not None:
            self._spill_timeline()

    def _spill_timeline(self) -> None:
        """Move finished events to the spill, in order; a command still running (Codex
        ``write_stdin`` appends to it later) and everything after it stay in memory."""
        assert self.spill is not None
        timeline = self.state.record.timeline
        running = {id(event) for event in self.running.values()}
        done = 0
        while done < len(timeline) and id(timeline[done]) not in running:
            self.spill.write(dump_json(timeline[done]))
            done += 1
        del timeline[:done]

    def _dispatch(self, c: CallContext) -> None:
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
            if raw and (path := self.state.resolve(c, raw)) is not None:
                self.state.lose(c, path, "notebook_edit")

    # -- helpers ------------------------------------------------------------------

    def resolve_dir(self, raw: str, cwd: str | None) -> object:
        return self.state.paths.resolve_dir(raw, cwd)

    def npm_scripts(self, cwd: str) -> dict[str, str] | None:
        directory = self.state.paths.relative_dir(cwd)
        if directory is None:
            return None
        return package_scripts(self.state.vfs.content(posixpath.join(directory, "package.json")))

    # -- file tools ---------------------------------------------------------------

    def _write(self, c: CallContext) -> None:
        raw = _text_arg(c.args, "file_path", "path")
        content = _text_arg(c.args, "content")
        if raw is None or content is None or (path := self.state.resolve(c, raw)) is None:
            return
        if c.result.rejected:
            self.state.reject(c, path, "write")
            return
        self._pre_image(c, path)
        self.state.set(c, path, content, "write")

    def _edit_list(self, c: CallContext) -> tuple[list[Replacement], bool] | None:
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

    def _edit(self, c: CallContext) -> None:
        raw = _text_arg(c.args, "file_path", "path")
        if raw is None or (path := self.state.resolve(c, raw)) is None:
            return
        if c.result.rejected:
            self.state.reject(c, path, "edit")
            return
        parsed = self._edit_list(c)
        if parsed is None:
            self.state.fail(c, path, "edit", "invalid_arguments")
            return
        self._pre_image(c, path)
        current = self.state.vfs.content(path)
        if current is None:
            self.state.fail(c, path, "edit", "file_unknown")
            return
        edits, pi_semantics = parsed
        try:
            edited = apply_against_original(current, edits) if pi_semantics else apply_sequential(current, edits)
        except EditError as error:
            self.state.fail(c, path, "edit", error.reason)
            return
        self.state.set(c, path, edited.text, "edit", edited.unchanged)

    def _pre_image(self, c: CallContext, path: str) -> None:
        original = c.result.extra.original_file if c.result.extra else None
        if original is None:
            return
        current = self.state.vfs.content(path)
        if current == original:
            return
        if current is not None:
            self.fidelity.resyncs += 1
        self.state.vfs.set_content(path, original, "pre_image", c.step.step_id)
        self.state.event(c, path, "pre_image", True)

    def _read(self, c: CallContext) -> None:
        raw = _text_arg(c.args, "file_path", "path")
        if raw is None or (path := self.state.resolve(c, raw)) is None:
            return
        if c.result.failed:
            return
        chunk = self._read_chunk(c)
        if chunk is not None and redacted(chunk):
            self.state.lose(c, path, "content_redacted")
            return
        content = None
        if chunk is not None:
            content = "\n".join(chunk.lines) if chunk.whole else self._add_piece(path, chunk)
        if content is None:
            if not self.state.vfs.exists(path):
                # Only part of the file was seen: a Claude Code listing with an offset or
                # limit, an image, a 2,000-line cut, or pi pieces not yet covering it.
                self.state.lose(c, path, "partial_read")
            self._stamp_pieces(path)
            return
        self.pieces.pop(path, None)
        self.fidelity.full_reads += 1
        current = self.state.vfs.content(path)
        if current == content:
            self.state.event(c, path, "read", True)
            return
        if current is not None:
            self.fidelity.resyncs += 1
        self.state.set(c, path, content, "read")

    def _read_chunk(self, c: CallContext) -> ReadChunk | None:
        """The lines a read showed (pi text with trailers; Claude Code ``file`` fields
        or a numbered listing), or None when they cannot be known exactly."""
        offset, limit = c.args.get("offset"), c.args.get("limit")
        if c.call.function_name == "read":
            return parse_pi_read(c.result.text, offset if isinstance(offset, int) else None)
        extra = c.result.extra
        if extra is not None and extra.file_content is not None:
            lines = extra.file_content.split("\n")
            if extra.file_total_lines is None:
                return ReadChunk(1, lines, len(lines)) if offset is None and limit is None else None
            if extra.file_num_lines is not None and extra.file_num_lines != len(lines):
                return None
            return ReadChunk(extra.file_start_line or 1, lines, extra.file_total_lines)
        if offset is not None or limit is not None:
            return None
        decoded = decode_numbered_read(c.result.text)
        return None if decoded is None else ReadChunk(1, decoded.split("\n"), decoded.count("\n") + 1)

    def _add_piece(self, path: str, chunk: ReadChunk) -> str | None:
        if path in self.state.vfs.known:
            return None
        version = len(self.state.vfs.history.get(path, []))
        assembler = self.pieces.get(path)
        if assembler is None or assembler.version != version:
            assembler = self.pieces[path] = PieceAssembler(version=version)
        return assembler.add(chunk)

    def _stamp_pieces(self, path: str) -> None:
        # Marking the file lost is not a change of its content: keep collecting pieces.
        if path in self.pieces:
            self.pieces[path].version = len(self.state.vfs.history.get(path, []))

    # -- shell ----------------------------------------------------------------------

    def _shell_command(self, c: CallContext) -> tuple[str, str | None] | None:
        args = c.args
        workdir = _text_arg(args, "workdir", "working_directory", "cwd")
        command: Any = args.get("command", args.get("cmd"))
        action = args.get("action")
        if command is None and isinstance(action, dict):
            command = action.get("command")
            workdir = workdir or _text_arg(action, "working_directory", "workdir")
        if isinstance(command, list) and all(isinstance(part, str) for part in command):
            shell = posixpath.basename(command[0]) if command else ""
            if len(command) >= 3 and shell in ("bash", "sh", "zsh") and command[1] in ("-c", "-lc", "-l"):
                command = command[-1]
            elif command[:1] == ["apply_patch"] and len(command) == 2:
                return "apply_patch " + shlex.quote(command[1]), workdir
            else:
                command = " ".join(shlex.quote(part) for part in command)
        if not isinstance(command, str):
            return None
        return command, workdir

    def _shell(self, c: CallContext) -> None:
        parsed = self._shell_command(c)
        if parsed is None:
            return
        command, workdir = parsed
        cwd = self.state.paths.resolve_dir(workdir, c.cwd) if workdir else c.cwd
        cwd = cwd if isinstance(cwd, str) else None
        analysis = analyse_shell(command, cwd, self)
        index = self.fidelity.commands
        self._checkpoint(Manifest(checkpoint=len(self.manifests), command_index=index))
        relative_cwd = self.state.paths.relative_dir(cwd) if cwd else None
        is_error = c.result.is_error if c.result.present else None
        exit_code = c.result.exit_code
        backgrounded = c.args.get("run_in_background") is True
        if exit_code is None and c.call.function_name in ("Bash", "bash") and c.result.present and not backgrounded:
            # Claude Code and pi print an exit code only when it is not zero.
            exit_code = None if c.result.is_error else 0
        event = ShellCommand(
            command_index=index,
            step_id=c.step.step_id,
            tool_call_id=c.call.tool_call_id,
            tool_name=c.call.function_name,
            command=command,
            cwd=relative_cwd,
            exit_code=exit_code,
            output=c.result.output,
            is_error=is_error,
            timestamp=c.step.timestamp,
            effects=analysis.effects,
            subagent=c.subagent,
        )
        self.state.record.timeline.append(event)
        self.fidelity.commands += 1
        if analysis.effects == "opaque":
            self.fidelity.opaque_commands += 1
            # It may have changed any file unseen: pieces read before it are of unknown versions.
            self.pieces.clear()
        if session := c.result.running_session:
            self.running[session] = event
        if c.result.not_run:
            return
        if c.call.function_name in CODEX_SHELL_TOOLS and exit_code == 0:
            self._shell_read(c, command, cwd)
        for op in analysis.ops:
            apply_file_op(self.state, c, op)

    def _shell_read(self, c: CallContext, command: str, cwd: str | None) -> None:
        if cwd is None:
            return
        single = shell_read(command, c.result.output)
        reads = [single] if single is not None else split_chain(command, c.result.output, self._known(cwd))
        for raw, chunk in reads or []:
            if (path := self.state.resolve(c, raw, cwd)) is None:
                continue
            if redacted(chunk):
                self.state.lose(c, path, "content_redacted")
                continue
            content = "\n".join(chunk.lines) if chunk.whole else self._add_piece(path, chunk)
            if content is None:
                continue
            self.pieces.pop(path, None)
            self.fidelity.full_reads += 1
            current = self.state.vfs.content(path)
            if current == content:
                self.state.event(c, path, "read", True)
                continue
            if current is not None:
                self.fidelity.resyncs += 1
            self.state.set(c, path, content, "read")

    def _known(self, cwd: str) -> Callable[[str], str | None]:
        """Known content of a path as a command in ``cwd`` names it."""

        def known(raw: str) -> str | None:
            resolved = self.state.paths.resolve(raw, cwd)
            return None if isinstance(resolved, Refused) else self.state.vfs.content(resolved.path)

        return known

    def _write_stdin(self, c: CallContext) -> None:
        session = c.args.get("session_id")
        event = self.running.get(str(session)) if session is not None else None
        if event is None or not c.result.present:
            return
        event.output += c.result.output
        if c.result.exit_code is not None:
            event.exit_code = c.result.exit_code

    def _apply_patch_tool(self, c: CallContext) -> None:
        text = _text_arg(c.args, "input", "patch", "raw")
        if text is None:
            return
        workdir = _text_arg(c.args, "workdir")
        cwd = self.state.paths.resolve_dir(workdir, c.cwd) if workdir else c.cwd
        apply_patch_text(self.state, c, text, cwd if isinstance(cwd, str) else None, c.result.rejected)

    # -- result ---------------------------------------------------------------------------

    def finish(self) -> ReplayResult:
        vfs, record, fidelity = self.state.vfs, self.state.record, self.state.fidelity
        record.files = vfs.summaries()
        fidelity.files_rebuilt = len(vfs.known)
        fidelity.files_lost = len(vfs.lost)
        fidelity.files_deleted = sum(1 for path in vfs.deleted if path in vfs.history)
        if self.spill is not None:
            self.running.clear()
            self._spill_timeline()
        fidelity.events = len(record.timeline) + (self.spill.count if self.spill else 0)
        fidelity.stored_bytes = self.state.store.stored_bytes
        record.fidelity = fidelity
        state = self.state
        check = (
            SeedCheck(state.seeded_count, state.reads_agreeing, state.reads_differing) if state.seeded_count else None
        )
        return ReplayResult(
            record=record, manifests=self.manifests, store=state.store, spill=self.spill, seed_check=check
        )


def replay_trajectory(
    trajectory: Trajectory, project_root: str | None = None, seed: dict[str, str] | None = None
) -> ReplayResult:
    """Replay ``trajectory``; ``project_root`` overrides the session cwd as the root;
    ``seed``: the project's files before the session (a repository commit's)."""
    replayer = _replayer(trajectory, project_root)
    replayer.state.seed(seed or {})
    replayer.run(trajectory)
    return replayer.finish()


def replay_streamed(
    streamed: StreamedTrajectory, spill_directory: Path, seed: dict[str, str] | None = None
) -> ReplayResult:
    """Replay a large trajectory a step at a time, its timeline spilled under ``spill_directory``."""
    replayer = _replayer(streamed.header)
    replayer.state.seed(seed or {})
    # The keys before the timeline are known now and do not change: the spill starts
    # as record.json, so writing the record can finish it instead of copying it.
    head, _ = split_at_timeline(dump_json(replayer.state.record))
    replayer.spill = TimelineSpill(spill_directory, head)
    try:
        replayer.run_steps(streamed.steps(), streamed.header)
    except BaseException:
        replayer.spill.remove()
        raise
    return replayer.finish()


def _replayer(trajectory: Trajectory, project_root: str | None = None) -> _Replayer:
    cwd = session_cwd(trajectory)
    root = project_root or cwd
    state = ReplayState(paths=ProjectPaths(root))
    extra = trajectory.extra if isinstance(trajectory.extra, dict) else {}
    state.record.project_root = state.paths.root
    state.record.source_format = extra.get("source_format") if isinstance(extra.get("source_format"), str) else None
    state.record.session_id = trajectory.session_id
    return _Replayer(state=state, session_cwd=cwd or root)
