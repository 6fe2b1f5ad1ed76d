"""Atomic writes, of a file or a whole folder, and the lock around filling a cache entry.

Every write goes to a temporary sibling first and is renamed into place, so a reader (or
a retried run) never sees a half-written file or directory. Where things go is
``layout``'s business; these take any path (workspace, dataset or task files alike).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock
from pydantic import BaseModel


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, payload: Any) -> Path:
    if isinstance(payload, BaseModel):
        text = payload.model_dump_json(indent=2, exclude_none=True)
    else:
        text = json.dumps(payload, indent=2, sort_keys=False, default=str)
    return atomic_write_text(path, text + "\n")


@contextmanager
def key_lock(cache_file: Path) -> Iterator[None]:
    """Held while the work that fills ``cache_file`` runs: with ``jobs`` > 1, worker processes
    that reach one key (one session logged in several formats) wait for the first and then
    read its result instead of running the same work again."""
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_file.with_suffix(".lock"))):
        yield


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield an empty staging directory that replaces ``target`` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield staging
        if target.exists():
            # Two renames keep the window without a complete directory as short as possible.
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
