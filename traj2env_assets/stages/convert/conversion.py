"""The conversion stage over the workspace: registered source -> ``conversion/<key>/``."""

from __future__ import annotations

from pathlib import Path

import atif
from pydantic import TypeAdapter

from traj2env_assets.atomic_files import atomic_write_json, atomic_write_text
from traj2env_assets.formats.convert import ConversionRecord, convert_source
from traj2env_assets.layout import Workspace
from traj2env_assets.sources import source_for_key

CONVERTER_VERSION = "4"
_STEPS = TypeAdapter(list[atif.Step])


class StoredConversion(ConversionRecord):
    """``<workspace>/conversion/<key>/record.json``."""

    partition_key: str
    content_sha256: str
    converter_version: str = CONVERTER_VERSION
    cached: bool = False


def read_conversion(workspace: Workspace, partition_key: str) -> StoredConversion | None:
    path = workspace.conversion_record_file(partition_key)
    if not path.is_file():
        return None
    return StoredConversion.model_validate_json(path.read_text(encoding="utf-8"))


def trajectory_json(trajectory: atif.Trajectory) -> str:
    """The ATIF document as the stage writes it: every other key first, ``steps`` last.

    Later stages can then stream a large file a step at a time in one pass: everything
    they need before the first step (the session's directory, its sub-agents) comes
    before the steps (see ``replay/stream.py``)."""
    head = trajectory.model_dump_json(exclude_none=True, indent=1, exclude={"steps"})
    steps = _STEPS.dump_json(trajectory.steps, exclude_none=True, indent=1).decode("utf-8")
    return head[: -len("\n}")] + ',\n "steps": ' + steps + "\n}"


def convert_partition(workspace: Workspace, partition_key: str, forced_format: str = "auto") -> StoredConversion:
    """Convert the partition's source file unless the same content was already converted."""
    source = source_for_key(workspace, partition_key)
    previous = read_conversion(workspace, partition_key)
    if (
        previous is not None
        and previous.content_sha256 == source.content_sha256
        and previous.converter_version == CONVERTER_VERSION
        and (previous.status == "skipped" or workspace.trajectory_file(partition_key).is_file())
    ):
        return previous.model_copy(update={"cached": True})
    result = convert_source(Path(source.path), forced_format)  # type: ignore[arg-type]
    stored = StoredConversion(
        **result.record.model_dump(), partition_key=partition_key, content_sha256=source.content_sha256
    )
    target = workspace.trajectory_file(partition_key)
    if result.trajectory is not None:
        atomic_write_text(target, trajectory_json(result.trajectory))
    else:
        target.unlink(missing_ok=True)
    atomic_write_json(workspace.conversion_record_file(partition_key), stored)
    return stored
