"""Finding trajectory files and giving each a stable partition key.

Partition keys are ``<format>-<session id or file stem>`` reduced to
``[A-Za-z0-9._-]`` (no ``/``, ``..``, whitespace or control characters), so they
are the same on every machine and every rerun. Only when two files would get the
same key does the later one get a short content hash appended.

The registry (``<workspace>/sources/registry.json``) remembers which file each key
stands for; the sensor and the CLI both go through :func:`register_sources`, so a
file keeps its key when its content changes (it is re-materialized, never given a
second partition), and a key is never reused for another file.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Literal

from filelock import FileLock
from pydantic import BaseModel, Field

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.conventions import file_sha256
from traj2env_assets.formats.claude_code import flat_subagent_parent, subagent_meta_log
from traj2env_assets.formats.detect import UndetectableFormat, detect_head, read_head, session_id_in_head
from traj2env_assets.layout import Workspace

SOURCE_SUFFIXES = (".json", ".jsonl")
MAX_KEY_LENGTH = 96
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
RejectReason = Literal[
    "not_a_regular_file", "symlink_outside_source", "unreadable", "empty_file", "binary_file", "unrecognised_format"
]


class SourceFile(BaseModel):
    """One registered trajectory file."""

    partition_key: str
    path: str
    format: str
    content_sha256: str
    size: int
    mtime_ns: int


class RejectedSource(BaseModel):
    path: str
    reason: RejectReason
    detail: str


class SourceRegistry(BaseModel):
    """``<workspace>/sources/registry.json``."""

    sources: dict[str, SourceFile] = Field(default_factory=dict)
    rejected: dict[str, RejectedSource] = Field(default_factory=dict)

    def key_for_path(self, path: str) -> str | None:
        return next((key for key, source in self.sources.items() if source.path == path), None)


class Registration(BaseModel):
    """What one pass over the source folder found."""

    new: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    rejected: list[RejectedSource] = Field(default_factory=list)

    @property
    def to_run(self) -> list[str]:
        return self.new + self.changed


def safe_key(text: str) -> str:
    """Reduce ``text`` to a partition-key-safe form (never empty, never containing ``..``)."""
    key = _UNSAFE.sub("-", text)
    key = re.sub(r"\.{2,}", ".", key)
    key = re.sub(r"-{2,}", "-", key).strip(".-")
    if len(key) > MAX_KEY_LENGTH:
        key = f"{key[: MAX_KEY_LENGTH - 9]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return key or "trajectory"


def _is_subagent_log(path: Path) -> bool:
    """Claude Code keeps sub-agents in ``<session>/subagents/`` (older CLIs: flat
    ``agent-<id>.jsonl`` beside the session file); they belong to the session, and so
    does a sub-agent's ``agent-<id>.meta.json`` (read with its log, never on its own)."""
    if subagent_meta_log(path) is not None:
        return True
    parent = path.parent
    if parent.name == "subagents" and parent.parent.with_suffix(".jsonl").is_file():
        return True
    return flat_subagent_parent(path) is not None


def discover_source_files(source_dir: Path) -> tuple[list[Path], list[RejectedSource]]:
    """Every ``.json``/``.jsonl`` under ``source_dir`` (recursive), and the entries that cannot be used."""
    root = source_dir.resolve()
    found: list[Path] = []
    rejected: list[RejectedSource] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames):
            if name.lower().endswith(SOURCE_SUFFIXES):
                path = Path(directory) / name
                rejected.append(RejectedSource(path=str(path), reason="not_a_regular_file", detail="a directory"))
        for name in sorted(filenames):
            if not name.lower().endswith(SOURCE_SUFFIXES):
                continue
            path = Path(directory) / name
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError) as exc:
                    rejected.append(
                        RejectedSource(path=str(path), reason="unreadable", detail=f"broken symlink: {exc}")
                    )
                    continue
                if not target.is_relative_to(root):
                    rejected.append(
                        RejectedSource(path=str(path), reason="symlink_outside_source", detail=f"points to {target}")
                    )
                    continue
            if not path.is_file():
                rejected.append(
                    RejectedSource(path=str(path), reason="not_a_regular_file", detail="not a regular file")
                )
                continue
            if _is_subagent_log(path):
                continue
            found.append(path)
    return found, rejected


def load_registry(workspace: Workspace) -> SourceRegistry:
    path = workspace.sources_registry_file
    if not path.is_file():
        return SourceRegistry()
    return SourceRegistry.model_validate_json(path.read_text(encoding="utf-8"))


def source_for_key(workspace: Workspace, partition_key: str) -> SourceFile:
    source = load_registry(workspace).sources.get(partition_key)
    if source is None:
        raise KeyError(f"no registered source for partition {partition_key!r}; run the sensor or `traj2env generate`")
    return source


def register_sources(
    workspace: Workspace,
    source_dir: Path,
    forced_format: str = "auto",
    limit: int | None = None,
) -> Registration:
    """Register every trajectory under ``source_dir``; return new, changed and unchanged keys."""
    files, rejected = discover_source_files(source_dir)
    outcome = Registration(rejected=list(rejected))
    registry_file = workspace.sources_registry_file
    registry_file.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(registry_file) + ".lock"):
        registry = load_registry(workspace)
        for item in rejected:
            registry.rejected[item.path] = item
        for path in files:
            if limit is not None and len(outcome.new) + len(outcome.changed) + len(outcome.unchanged) >= limit:
                break
            _register_one(registry, path, forced_format, outcome)
        atomic_write_json(registry_file, registry)
    return outcome


def _register_one(registry: SourceRegistry, path: Path, forced_format: str, outcome: Registration) -> None:
    resolved = str(path.resolve())
    try:
        stat = path.stat()
        known_key = registry.key_for_path(resolved)
        known = registry.sources.get(known_key) if known_key else None
        if known and known.size == stat.st_size and known.mtime_ns == stat.st_mtime_ns:
            outcome.unchanged.append(known.partition_key)
            return
        digest = file_sha256(path)
        head = read_head(path)
        fmt = detect_head(head) if forced_format == "auto" else forced_format
    except UndetectableFormat as exc:
        item = RejectedSource(path=resolved, reason=exc.reason, detail=str(exc))
        registry.rejected[resolved] = item
        outcome.rejected.append(item)
        return
    except OSError as exc:
        item = RejectedSource(path=resolved, reason="unreadable", detail=exc.strerror or str(exc))
        registry.rejected[resolved] = item
        outcome.rejected.append(item)
        return
    registry.rejected.pop(resolved, None)
    if known is not None:
        changed = known.content_sha256 != digest
        registry.sources[known.partition_key] = known.model_copy(
            update={"content_sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "format": fmt}
        )
        (outcome.changed if changed else outcome.unchanged).append(known.partition_key)
        return
    session = session_id_in_head(head, fmt, path)  # type: ignore[arg-type]
    key = safe_key(f"{fmt}-{session or path.stem}")
    if key in registry.sources:
        key = safe_key(f"{key}-{digest[:8]}")
    registry.sources[key] = SourceFile(
        partition_key=key,
        path=resolved,
        format=fmt,
        content_sha256=digest,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )
    outcome.new.append(key)
