"""The build context's size against the platform's limits, checked before any upload.

The note's limits for a ``DockerfileBuild`` context (the Dockerfile's directory, filtered
by the root ``.dockerignore``, as the SDK collects it). trajectory-sdk 0.9.31 enforces the
same numbers, but only after hashing every file; checked here first, the error names the
spec directory and what to do.
"""

from __future__ import annotations

import os
from pathlib import Path

from pathspec import GitIgnoreSpec
from pydantic import BaseModel

MAX_CONTEXT_FILES = 4096
MAX_CONTEXT_BYTES = 3 * 1024**3
DOCKERIGNORE = ".dockerignore"


class ContextSize(BaseModel):
    files: int
    bytes: int


class ContextTooLargeError(ValueError):
    pass


def context_size(context: Path) -> ContextSize:
    """Regular files under ``context`` that the SDK would upload, and their bytes."""
    ignore_file = context / DOCKERIGNORE
    ignored = (
        GitIgnoreSpec.from_lines(ignore_file.read_text(encoding="utf-8").splitlines())
        if ignore_file.is_file()
        else None
    )
    files = total = 0
    for directory, dirs, names in os.walk(context):
        base = Path(directory)
        dirs[:] = [d for d in dirs if ignored is None or not ignored.match_file(_relative(base / d, context) + "/")]
        for name in names:
            path = base / name
            if (ignored is not None and ignored.match_file(_relative(path, context))) or not path.is_file():
                continue
            files += 1
            total += path.stat().st_size
    return ContextSize(files=files, bytes=total)


def check_context(context: Path) -> ContextSize:
    size = context_size(context)
    problems = []
    if size.files > MAX_CONTEXT_FILES:
        problems.append(f"{size.files:,} files (limit {MAX_CONTEXT_FILES:,})")
    if size.bytes > MAX_CONTEXT_BYTES:
        problems.append(f"{size.bytes:,} bytes (limit {MAX_CONTEXT_BYTES:,}, 3 GiB)")
    if problems:
        raise ContextTooLargeError(
            f"the build context {context} is too large for the Trajectory platform: {' and '.join(problems)}. "
            f"Export fewer tasks, archive files, or list what the image does not need in {context / DOCKERIGNORE}"
        )
    return size


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
