"""ATIF ``.json`` (v1.x) input: validated with the ATIF models, kept as recorded."""

from __future__ import annotations

import re
from pathlib import Path

import atif
import orjson

FORMAT = "atif"
_VERSION = re.compile(r"^ATIF-v1\.\d+$")


def convert_atif(path: Path, data: bytes) -> atif.Trajectory:
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(raw, dict):
        raise ValueError("an ATIF document must be a JSON object")
    version = raw.get("schema_version")
    if not isinstance(version, str) or not _VERSION.match(version):
        raise ValueError(f"unsupported schema_version {version!r}; expected ATIF-v1.x")
    trajectory = atif.Trajectory.model_validate(raw)
    if not trajectory.steps:
        raise ValueError("an ATIF trajectory needs at least one step")
    extra = dict(trajectory.extra or {})
    extra.setdefault("source_format", FORMAT)
    return trajectory.model_copy(update={"extra": extra})
