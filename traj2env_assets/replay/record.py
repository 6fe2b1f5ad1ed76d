"""Write a replay result to a record directory and read it back for the miners."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from traj2env_assets.atomic_files import atomic_write_bytes, atomic_write_json
from traj2env_assets.layout import ReplayLayout
from traj2env_assets.replay.content_store import ContentReader
from traj2env_assets.replay.engine import ReplayResult
from traj2env_assets.replay.models import (
    FileSummary,
    Manifest,
    ReplayFidelity,
    ReplayRecordFile,
    ShellCommand,
    TimelineEvent,
    UserRequest,
    dump_json,
)
from traj2env_assets.replay.stream import split_at_timeline


def write_record(result: ReplayResult, directory: Path) -> None:
    """Write ``record.json``, ``manifests.jsonl``, ``fidelity.json``, blobs and deltas."""
    directory.mkdir(parents=True, exist_ok=True)
    layout = ReplayLayout(directory)
    result.store.write(directory)
    lines = b"".join(dump_json(manifest) + b"\n" for manifest in result.manifests)
    atomic_write_bytes(layout.manifests_file, lines)
    if result.spill is None:
        atomic_write_bytes(layout.record_file, result.record.model_dump_json().encode("utf-8"))
    else:
        _write_spilled_record(result, layout.record_file)
    atomic_write_json(layout.fidelity_file, result.record.fidelity)


def _write_spilled_record(result: ReplayResult, path: Path) -> None:
    """``record.json`` with the spilled timeline streamed in, never whole in memory.

    The record is dumped with only the events still in memory, and the spilled ones go in
    front of them."""
    spill = result.spill
    assert spill is not None
    head, tail = split_at_timeline(dump_json(result.record))
    if spill.count and not tail.startswith(b"]"):
        tail = b"," + tail
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        if spill.path is not None and spill.path.parent == path.parent and spill.head == head:
            spill.finish_as(path, tail)
        else:
            with temporary.open("wb") as handle:
                handle.write(head)
                spill.copy_events_to(handle)
                handle.write(tail)
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
        spill.remove()


def read_record_file(directory: Path) -> ReplayRecordFile | None:
    """A replay directory's record (timeline, files, fidelity) without its checkpoints;
    None when it is missing or unreadable."""
    try:
        return ReplayRecordFile.model_validate_json(ReplayLayout(directory).record_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class ReplayRecord:
    """A written replay record.

    ``files_before(i)`` and ``files_before_request(k)`` walk the per-checkpoint
    deltas; sequential access (the usual miner loop) is linear overall because the
    last reconstructed state is reused.
    """

    def __init__(self, directory: Path, record: ReplayRecordFile, manifests: list[Manifest]) -> None:
        self.directory = directory
        self.record = record
        self._manifests = manifests
        self._by_command = {m.command_index: m.checkpoint for m in manifests if m.command_index is not None}
        self._by_request = {m.request_index: m.checkpoint for m in manifests if m.request_index is not None}
        self._content = ContentReader(directory)
        self._cursor = -1
        self._hashes: dict[str, str] = {}
        self._lost: set[str] = set()

    @classmethod
    def load(cls, directory: Path) -> ReplayRecord:
        record = ReplayRecordFile.model_validate_json(ReplayLayout(directory).record_file.read_text(encoding="utf-8"))
        manifests = [
            Manifest.model_validate_json(line)
            for line in ReplayLayout(directory).manifests_file.read_text(encoding="utf-8").splitlines()
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

    def _advance(self, checkpoint: int) -> None:
        if checkpoint < self._cursor:
            self._cursor, self._hashes, self._lost = -1, {}, set()
        for manifest in self._manifests[self._cursor + 1 : checkpoint + 1]:
            for path in manifest.removed:
                self._hashes.pop(path, None)
            self._hashes.update(manifest.set)
            self._lost.difference_update(manifest.found)
            self._lost.update(manifest.lost)
        self._cursor = checkpoint

    def _command(self, command_index: int) -> int:
        if command_index not in self._by_command:
            raise IndexError(f"no shell command {command_index}")
        return self._by_command[command_index]

    def _request(self, request_index: int) -> int:
        if request_index not in self._by_request:
            raise IndexError(f"no user request {request_index}")
        return self._by_request[request_index]

    def _files(self, checkpoint: int) -> dict[str, str]:
        self._advance(checkpoint)
        return {path: self._content.get(digest) for path, digest in self._hashes.items()}

    def _lost_at(self, checkpoint: int) -> set[str]:
        self._advance(checkpoint)
        return set(self._lost)

    def files_before(self, command_index: int) -> dict[str, str]:
        """The exact project files (path -> content) just before shell command ``command_index``."""
        return self._files(self._command(command_index))

    def lost_before(self, command_index: int) -> set[str]:
        """Files referenced or changed so far whose content was not known just before it."""
        return self._lost_at(self._command(command_index))

    def files_before_request(self, request_index: int) -> dict[str, str]:
        """The exact project files just before user request ``request_index``: the
        project as request ``request_index - 1`` left it."""
        return self._files(self._request(request_index))

    def lost_before_request(self, request_index: int) -> set[str]:
        return self._lost_at(self._request(request_index))

    def final_files(self) -> dict[str, str]:
        """The project files known at the end of the session."""
        return {
            path: self._content.get(s.content_hash)
            for path, s in self.record.files.items()
            if s.state == "present" and s.content_hash
        }

    def content(self, digest: str) -> str:
        return self._content.get(digest)
