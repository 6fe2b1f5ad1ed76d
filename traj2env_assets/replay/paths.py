"""Map the paths an agent used onto one virtual project tree.

The project root (the session's starting directory) becomes the virtual root; every
file is then named by its POSIX path relative to it (``src/app.py``). Resolution is
purely lexical: the virtual filesystem has no symlinks, and nothing here touches the
real disk. A path that leaves the project (``..``, another absolute path, ``~``,
``/etc``), names the project root itself, or points into ``.git`` is refused with a
reason and never written anywhere.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_GIT_DIR = ".git"


@dataclass(frozen=True)
class Resolved:
    path: str
    """POSIX path relative to the project root."""


@dataclass(frozen=True)
class Refused:
    raw: str
    reason: str
    """``outside_project``, ``home_relative``, ``dynamic_path``, ``invalid_path``,
    ``project_root`` (names the root directory itself), ``git_metadata``,
    ``unknown_cwd``; replay adds ``symlink`` for writes through a path made by ``ln``."""


def to_posix(raw: str) -> str:
    """Normalise a native path string (Windows ``C:\\x`` becomes ``/C:/x``)."""
    if _WINDOWS_DRIVE.match(raw):
        return "/" + raw.replace("\\", "/")
    return raw


def normalise_dir(raw: str | None) -> str | None:
    # A working directory comes from the log's tool arguments: a mangled one may be any JSON.
    if not raw or not isinstance(raw, str):
        return None
    posix = to_posix(raw)
    if not posix.startswith("/"):
        return None
    return posixpath.normpath(posix)


def _absolute(root: str | None, raw: str, cwd: str | None) -> str | Refused:
    if not raw or "\x00" in raw:
        return Refused(raw, "invalid_path")
    if raw.startswith("~"):
        return Refused(raw, "home_relative")
    posix = to_posix(raw)
    if posix.startswith("/"):
        return posixpath.normpath(posix)
    base = normalise_dir(cwd) or root
    if base is None:
        return Refused(raw, "unknown_cwd")
    return posixpath.normpath(posixpath.join(base, posix))


@lru_cache(maxsize=4096)
def _resolve(root: str | None, raw: str, cwd: str | None) -> Resolved | Refused:
    # Cached: a session names the same few paths from the same few directories over
    # and over, and the answer depends on nothing else (it is immutable).
    absolute = _absolute(root, raw, cwd)
    if isinstance(absolute, Refused):
        return absolute
    if root is None:
        return Refused(raw, "unknown_cwd")
    if absolute == root:
        return Refused(raw, "project_root")
    prefix = root.rstrip("/") + "/"
    if not absolute.startswith(prefix):
        return Refused(raw, "outside_project")
    relative = absolute[len(prefix) :]
    if relative.split("/")[0] == _GIT_DIR:
        return Refused(raw, "git_metadata")
    return Resolved(relative)


class ProjectPaths:
    """Resolves agent paths against a cwd and keeps them inside ``root``."""

    def __init__(self, root: str | None) -> None:
        self.root = normalise_dir(root)

    def absolute(self, raw: str, cwd: str | None) -> str | Refused:
        """The normalised absolute form of ``raw`` seen from ``cwd``."""
        return _absolute(self.root, raw, cwd)

    def resolve(self, raw: str, cwd: str | None) -> Resolved | Refused:
        # A cwd from a mangled log may be any JSON (unhashable for the cache); any
        # non-string one counts as no cwd, as in normalise_dir.
        return _resolve(self.root, raw, cwd if isinstance(cwd, str) else None)

    def resolve_dir(self, raw: str, cwd: str | None) -> str | Refused:
        """An absolute directory for ``cd``; it may lie outside the project."""
        return self.absolute(raw, cwd)

    def relative_dir(self, absolute_dir: str) -> str | None:
        """``absolute_dir`` relative to the root ('' for the root), or None if outside."""
        if self.root is None:
            return None
        if absolute_dir == self.root:
            return ""
        prefix = self.root.rstrip("/") + "/"
        return absolute_dir[len(prefix) :] if absolute_dir.startswith(prefix) else None
