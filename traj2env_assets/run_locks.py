"""One lock file per run, held by the process executing the run for its whole life.

``flock`` locks belong to the open file, and the kernel drops them when the process
dies however it dies (``kill -9``, a closed laptop lid that never reopens, an OOM kill),
so liveness needs no heartbeat and no clock: a run whose lock can be taken is dead; a
run whose lock is held is alive and is never touched. The holder removes the file when
the run ends, after its status is final.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RUN_LOCK_DIR = "run-locks"


def run_lock_path(lock_dir: Path, run_id: str) -> Path:
    return lock_dir / f"{run_id}.lock"


def run_locks(lock_dir: Path) -> list[Path]:
    return sorted(lock_dir.glob("*.lock"))


def run_id_of(lock: Path) -> str:
    return lock.name.removesuffix(".lock")


@contextmanager
def hold_run_lock(lock_dir: Path, run_id: str) -> Iterator[Path]:
    """The locked file of ``run_id`` while the run executes."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = run_lock_path(lock_dir, run_id)
    # Locked under another name, then moved into place: a lock file is never seen unlocked
    # while its run is alive. O_CLOEXEC: a child process (a docker build) that outlives us
    # must not keep the run alive.
    fresh = path.with_name(f"{path.name}.new")
    fd = os.open(fresh, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fresh.rename(path)
        yield path
    finally:
        # Removed before it is unlocked, so nobody takes the lock of a run that just ended
        # through a fresh file at the same path.
        path.unlink(missing_ok=True)
        os.close(fd)


@contextmanager
def dead_run_lock(path: Path) -> Iterator[bool]:
    """True, holding the lock, if the run's process is gone; False if it is alive or its
    lock file is missing (removed when the run ended, or by hand: not ours to judge).

    The caller re-reads the run's status under the lock: a run that ended between its
    listing and this call is unlocked too, but its status is final by then.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            dead = False
        else:
            dead = True
        yield dead
    finally:
        os.close(fd)


def is_dead(path: Path) -> bool:
    """Whether the run holding ``path`` is gone; the lock is let go at once."""
    with dead_run_lock(path) as dead:
        return dead
