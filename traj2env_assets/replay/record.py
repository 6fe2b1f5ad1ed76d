"""Write a replay result to a record directory and read it back for the miners."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from traj2env_assets.replay.content_store import ContentReader
from traj2env_assets.replay.engine import ReplayResult
from traj2env_assets.replay.models import (
    CommandManifest,
    FileSummary,
    ReplayFidelity,
    ReplayRecordFile,
    ShellCommand,
    TimelineEvent,
    UserRequest,
)
from traj2env_assets.workspace import atomic_write_bytes, atomic_write_json

RECORD_FILE = "record.json"
MANIFESTS_FILE = "manifests.jsonl"
FIDELITY_FILE = "fidelity.json"


def write_record(result: ReplayResult, directory: Path) -> None:
    """Write ``record.json``, ``manifests.jsonl``, ``fidelity.json``, blobs and deltas."""
    directory.mkdir(parents=True, exist_ok=True)
    result.store.write(directory)
    lines = "".join(manifest.model_dump_json() + "\n" for manifest in result.manifests)
    atomic_write_bytes(directory / MANIFESTS_FILE, lines.encode("utf-8"))
    atomic_write_bytes(directory / RECORD_FILE, result.record.model_dump_json().encode("utf-8"))
    atomic_write_json(directory / FIDELITY_FILE, result.record.fidelity)


class ReplayRecord:
    """A written replay record.

    ``files_before(i)`` walks the per-command deltas; sequential access (the usual
    miner loop) is linear overall because the last reconstructed state is reused.
    """

    def __init__(self, directory: Path, record: ReplayRecordFile, manifests: list[CommandManifest]) -> None:
        self.directory = directory
        self.record = record
        self._manifests = manifests
        self._content = ContentReader(directory)
        self._cursor = -1
        self._hashes: dict[str, str] = {}
        self._lost: set[str] = set()

    @classmethod
    def load(cls, directory: Path) -> ReplayRecord:
        record = ReplayRecordFile.model_validate_json((directory / RECORD_FILE).read_text(encoding="utf-8"))
        manifests = [
            CommandManifest.model_validate_json(line)
            for line in (directory / MANIFESTS_FILE).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        return cls(directory, record, manifests)

    @property
    def timeline(self) -> list[TimelineEvent]:
        return self.record.timeline

    @property
    def fidelity(self) -> ReplayFidelity:
        return self.record.fidelity

    @property
    def files(self) -> dict[str, FileSummary]:
        """Per file: final state and history of how it was obtained."""
        return self.record.files

    @property
    def lost_files(self) -> dict[str, str]:
        """Files whose final content is not known, with the reason."""
        return {path: s.lost_reason or "" for path, s in self.record.files.items() if s.state == "lost"}

    def shell_commands(self) -> Iterator[ShellCommand]:
        return (event for event in self.record.timeline if isinstance(event, ShellCommand))

    def user_requests(self) -> Iterator[UserRequest]:
        return (event for event in self.record.timeline if isinstance(event, UserRequest))

    def _advance(self, command_index: int) -> None:
        if not 0 <= command_index < len(self._manifests):
            raise IndexError(f"no shell command {command_index}")
        if command_index < self._cursor:
            self._cursor, self._hashes, self._lost = -1, {}, set()
        for manifest in self._manifests[self._cursor + 1 : command_index + 1]:
            for path in manifest.removed:
                self._hashes.pop(path, None)
            self._hashes.update(manifest.set)
            self._lost.difference_update(manifest.found)
            self._lost.update(manifest.lost)
        self._cursor = command_index

    def file_hashes_before(self, command_index: int) -> dict[str, str]:
        self._advance(command_index)
        return dict(self._hashes)

    def files_before(self, command_index: int) -> dict[str, str]:
        """The exact project files (path -> content) just before shell command ``command_index``."""
        return {path: self._content.get(digest) for path, digest in self.file_hashes_before(command_index).items()}

    def lost_before(self, command_index: int) -> set[str]:
        """Files referenced or changed so far whose content was not known at that point."""
        self._advance(command_index)
        return set(self._lost)

    def final_files(self) -> dict[str, str]:
        """The project files known at the end of the session."""
        return {
            path: self._content.get(s.content_hash)
            for path, s in self.record.files.items()
            if s.state == "present" and s.content_hash
        }

    def content(self, digest: str) -> str:
        return self._content.get(digest)
