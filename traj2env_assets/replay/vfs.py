"""The virtual project tree that replay rebuilds, with per-file history.

A file is in one of three states: known (content hash), lost (content not known,
with a reason) or deleted. Every change is journaled so that the state just before
each checkpoint (shell command, user request) can be emitted as a small
:class:`Manifest` delta.
"""

from __future__ import annotations

from traj2env_assets.replay.content_store import ContentStore, Unchanged
from traj2env_assets.replay.models import FileAction, FileProvenance, FileSummary, Manifest


class VirtualFS:
    def __init__(self, store: ContentStore) -> None:
        self.store = store
        self.known: dict[str, str] = {}
        self.lost: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.dirs: set[str] = set()
        self.history: dict[str, list[FileProvenance]] = {}
        self._dirty: set[str] = set()
        self._manifested: dict[str, str] = {}
        self._manifested_lost: set[str] = set()

    def content(self, path: str) -> str | None:
        digest = self.known.get(path)
        return None if digest is None else self.store.get(digest)

    def exists(self, path: str) -> bool:
        return path in self.known or path in self.lost

    def is_dir(self, path: str) -> bool:
        if path == "" or path in self.dirs:
            return True
        prefix = path + "/"
        return any(p.startswith(prefix) for p in self.known) or any(p.startswith(prefix) for p in self.lost)

    def paths_under(self, directory: str) -> list[str]:
        """Known and lost files inside ``directory`` ('' = the whole project)."""
        prefix = directory + "/" if directory else ""
        return sorted(p for p in (*self.known, *self.lost) if p.startswith(prefix))

    def set_content(
        self, path: str, text: str, action: FileAction, step_id: int, unchanged: Unchanged | None = None
    ) -> str:
        digest = self.store.put(text, self.known.get(path), unchanged)
        self.known[path] = digest
        self.lost.pop(path, None)
        self.deleted.discard(path)
        self._note(path, action, step_id, None)
        return digest

    def mark_lost(self, path: str, reason: str, step_id: int) -> None:
        self.known.pop(path, None)
        self.deleted.discard(path)
        self.lost[path] = reason
        self._note(path, "lost", step_id, reason)

    def delete(self, path: str, step_id: int, action: FileAction = "delete") -> None:
        self.known.pop(path, None)
        self.lost.pop(path, None)
        self.deleted.add(path)
        self._note(path, action, step_id, None)

    def add_dir(self, path: str) -> None:
        if path:
            self.dirs.add(path)

    def _note(self, path: str, action: FileAction, step_id: int, reason: str | None) -> None:
        self.history.setdefault(path, []).append(FileProvenance(step_id=step_id, action=action, reason=reason))
        self._dirty.add(path)

    def manifest(self, manifest: Manifest) -> Manifest:
        """Fill ``manifest`` with the change since the previous one; resets the journal."""
        for path in sorted(self._dirty):
            digest = self.known.get(path)
            was_lost = path in self._manifested_lost
            if digest is not None:
                if self._manifested.get(path) != digest:
                    manifest.set[path] = digest
                    self._manifested[path] = digest
                if was_lost:
                    manifest.found.append(path)
                    self._manifested_lost.discard(path)
                continue
            if path in self._manifested:
                manifest.removed.append(path)
                del self._manifested[path]
            if path in self.lost and not was_lost:
                manifest.lost.append(path)
                self._manifested_lost.add(path)
            elif path not in self.lost and was_lost:
                manifest.found.append(path)
                self._manifested_lost.discard(path)
        self._dirty.clear()
        return manifest

    def summaries(self) -> dict[str, FileSummary]:
        result: dict[str, FileSummary] = {}
        for path in sorted(self.history):
            if path in self.known:
                summary = FileSummary(state="present", content_hash=self.known[path])
            elif path in self.lost:
                summary = FileSummary(state="lost", lost_reason=self.lost[path])
            else:
                summary = FileSummary(state="deleted")
            summary.history = self.history[path]
            result[path] = summary
        return result
