"""The mutable state of one replay and the bookkeeping every file change goes through.

Each change updates the virtual filesystem, appends a :class:`FileEvent` to the
timeline and counts itself in the fidelity figures, so those three never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from atif import Step, ToolCall

from traj2env_assets.replay.content_store import ContentStore, Unchanged
from traj2env_assets.replay.models import FileAction, FileEvent, RefusedPath, ReplayFidelity, ReplayRecordFile
from traj2env_assets.replay.paths import ProjectPaths, Refused
from traj2env_assets.replay.tool_results import CallResult
from traj2env_assets.replay.vfs import VirtualFS


@dataclass
class CallContext:
    """One tool call with its recorded result and the directory it ran in."""

    step: Step
    call: ToolCall
    result: CallResult
    cwd: str | None
    subagent: str | None

    @property
    def args(self) -> dict[str, Any]:
        return self.call.arguments if isinstance(self.call.arguments, dict) else {}


def parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _count(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1


@dataclass(frozen=True)
class SeedCheck:
    """A replay seeded from a repository: files seeded, first full views agreeing/differing."""

    seeded: int
    agreeing: int
    differing: int


@dataclass
class ReplayState:
    paths: ProjectPaths
    store: ContentStore = field(default_factory=ContentStore)
    fidelity: ReplayFidelity = field(default_factory=ReplayFidelity)
    record: ReplayRecordFile = field(default_factory=ReplayRecordFile)
    symlinks: set[str] = field(default_factory=set)
    """Paths made symlinks by ``ln``: their target is unknown, so writing through them
    could mean writing anywhere; such writes are refused."""
    seeded: dict[str, str] = field(default_factory=dict)
    """Files taken from a repository commit that the log has not yet shown or changed,
    with their content hash: the first full read of one confirms or contradicts it."""
    seeded_count: int = 0
    reads_agreeing: int = 0
    reads_differing: int = 0

    def __post_init__(self) -> None:
        self.vfs = VirtualFS(self.store)

    def seed(self, files: dict[str, str]) -> None:
        """Start from ``files`` (a repository's tracked files); the log's events then win."""
        for path, text in sorted(files.items()):
            self.seeded[path] = self.vfs.set_content(path, text, "repository", 0)
        self.seeded_count = len(files)

    def _confirm_seed(self, path: str, action: FileAction, applied: bool) -> None:
        """A seeded file's first event: a full view (read or pre-image) agrees or differs."""
        digest = self.seeded.pop(path, None)
        if digest is None or not applied or action not in ("read", "pre_image"):
            return
        if self.vfs.known.get(path) == digest:
            self.reads_agreeing += 1
        else:
            self.reads_differing += 1

    def resolve(self, c: CallContext, raw: str, cwd: str | None = None) -> str | None:
        """The project path for ``raw``, or None (refused and recorded)."""
        resolved = self.paths.resolve(raw, cwd if cwd is not None else c.cwd)
        if isinstance(resolved, Refused):
            self.refuse(c, raw, resolved.reason)
            return None
        if self.symlinks and any(p in self.symlinks for p in (resolved.path, *parents(resolved.path))):
            self.refuse(c, raw, "symlink")
            return None
        return resolved.path

    def refuse(self, c: CallContext, raw: str, reason: str) -> None:
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
        _count(self.fidelity.unsafe_paths_by_reason, reason)

    def event(self, c: CallContext, path: str, action: FileAction, applied: bool, reason: str | None = None) -> None:
        if self.seeded:
            self._confirm_seed(path, action, applied)
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

    def set(self, c: CallContext, path: str, text: str, action: FileAction, unchanged: Unchanged | None = None) -> None:
        """``unchanged``: how much of the file's current text the change kept, when known."""
        self.vfs.set_content(path, text, action, c.step.step_id, unchanged)
        if action not in ("read", "pre_image"):
            self.fidelity.edits_applied += 1
        self.event(c, path, action, True)

    def delete(self, c: CallContext, path: str, action: FileAction = "delete") -> None:
        self.vfs.delete(path, c.step.step_id, action)
        self.event(c, path, action, True)

    def lose(self, c: CallContext, path: str, reason: str) -> None:
        self.vfs.mark_lost(path, reason, c.step.step_id)
        self.event(c, path, "lost", False, reason)

    def fail(self, c: CallContext, path: str, action: FileAction, reason: str) -> None:
        """An edit that succeeded in the session but not in replay: the file is lost."""
        self.count_failure(reason)
        self.event(c, path, action, False, reason)
        self.vfs.mark_lost(path, reason, c.step.step_id)

    def count_failure(self, reason: str) -> None:
        self.fidelity.edits_failed += 1
        _count(self.fidelity.edits_failed_by_reason, reason)

    def reject(self, c: CallContext, path: str, action: FileAction) -> None:
        """An edit whose tool result was an error or missing: not applied, by design."""
        self.fidelity.edits_rejected += 1
        self.event(c, path, action, False, "tool_error" if c.result.present else "no_result")
