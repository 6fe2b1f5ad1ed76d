"""Format detection by content, never by file extension."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from traj2env_assets.formats.claude_code import looks_like_claude_code, own_session_id
from traj2env_assets.formats.codex import looks_like_codex, looks_like_legacy_codex, looks_like_typescript_rollout
from traj2env_assets.formats.jsonl import loads_like_stdlib
from traj2env_assets.formats.pi import looks_like_pi

DetectedFormat = Literal["atif", "claude-code", "codex", "pi"]
HEAD_BYTES = 256 * 1024
HEAD_LINES = 40
_ATIF_HEAD = re.compile(rb'"schema_version"\s*:\s*"ATIF-v\d')


class UndetectableFormat(ValueError):
    """The file's content matches none of the supported formats."""

    def __init__(self, reason: Literal["empty_file", "binary_file", "unrecognised_format"], detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def read_head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(HEAD_BYTES)


def _head_lines(head: bytes) -> list[bytes]:
    """``head.splitlines()[:HEAD_LINES]``, without splitting all of a 256 KiB head.

    Without a carriage return, ``split`` on newlines stops after HEAD_LINES breaks; the
    empty last piece it may add is skipped like any empty line.
    """
    if b"\r" in head:
        return head.splitlines()[:HEAD_LINES]
    return head.split(b"\n", HEAD_LINES)[:HEAD_LINES]


def _head_objects(head: bytes) -> Iterator[dict[str, object]]:
    """The JSON objects among the head's first lines, decoded lazily: detection stops at
    the first line that identifies the format."""
    for raw in _head_lines(head):
        line = raw.strip()
        if not line or line.startswith(b"//"):
            continue
        try:
            value = loads_like_stdlib(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def detect_head(head: bytes) -> DetectedFormat:
    """The format of a file whose first ``HEAD_BYTES`` bytes are ``head``."""
    if not head or head.isspace():
        raise UndetectableFormat("empty_file", "empty file")
    if b"\x00" in head:
        raise UndetectableFormat("binary_file", "binary content (NUL bytes)")
    for obj in _head_objects(head):
        if looks_like_claude_code(obj):
            return "claude-code"
        if looks_like_codex(obj) or looks_like_legacy_codex(obj):
            return "codex"
        if looks_like_pi(obj):
            return "pi"
    if head.lstrip().startswith(b"{") and _ATIF_HEAD.search(head):
        return "atif"
    if looks_like_typescript_rollout(head):
        return "codex"
    raise UndetectableFormat(
        "unrecognised_format", "content matches none of ATIF .json, Claude Code, Codex or pi .jsonl"
    )


def session_id_in_head(head: bytes, fmt: DetectedFormat, path: Path) -> str | None:
    """The session id the log records near its start (``head`` from :func:`read_head`), if any."""
    if fmt == "claude-code":
        return own_session_id(path, _head_objects(head))
    if fmt == "codex" and looks_like_typescript_rollout(head):
        match = re.search(rb'"id"\s*:\s*"([^"]{1,200})"', head)
        return match.group(1).decode("utf-8", "replace") if match else None
    if fmt == "atif":
        match = re.search(rb'"session_id"\s*:\s*"([^"]{1,200})"', head)
        return match.group(1).decode("utf-8", "replace") if match else None
    for obj in _head_objects(head):
        if fmt == "codex" and obj.get("type") == "session_meta":
            payload = obj.get("payload")
            if isinstance(payload, dict) and isinstance(payload.get("id"), str):
                return str(payload["id"])
        if fmt == "codex" and looks_like_legacy_codex(obj) and isinstance(obj.get("id"), str):
            return str(obj["id"])
        if fmt == "pi" and obj.get("type") == "session" and isinstance(obj.get("id"), str):
            return str(obj["id"])
    return None
