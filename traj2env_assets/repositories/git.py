"""Reading a local git checkout: its top level, branch, the commit current at a moment,
and the tracked files of a commit (never the history after it, never ``.git``)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

MAX_FILE_BYTES = 1024 * 1024
"""A tracked file larger than this is not taken (as replay keeps no binary or huge file)."""
MAX_REPOSITORY_BYTES = 64 * 1024 * 1024
MAX_REPOSITORY_FILES = 20_000
_TIMEOUT_S = 120


class GitError(RuntimeError):
    """A git command that failed; the message says which and why."""


def git(top: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(top), *args], input=stdin, capture_output=True, timeout=_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitError(f"git {' '.join(args)}: {error}") from error
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()[:500]}")
    return done.stdout


def toplevel(path: Path) -> Path | None:
    """The top level of the work tree containing ``path``, or None when it is in none."""
    directory = path if path.is_dir() else path.parent
    if not directory.is_dir():
        return None
    try:
        return Path(git(directory, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    except GitError:
        return None


def current_branch(top: Path) -> str:
    try:
        return git(top, "symbolic-ref", "--quiet", "--short", "HEAD").decode().strip()
    except GitError:
        return "HEAD"  # a detached checkout: its own history


def commit_before(top: Path, branch: str, moment: datetime) -> str | None:
    """The commit current on ``branch`` at ``moment`` (``git rev-list -1 --before``)."""
    out = git(top, "rev-list", "-1", f"--before=@{int(moment.timestamp())}", branch, "--").decode().strip()
    return out or None


def out_of_order_commit(top: Path, branch: str, moment: datetime) -> str | None:
    """A commit on the branch's first-parent line dated after ``moment`` yet older than one
    dated before it, or None. Where dates are not monotone around ``moment`` the commit
    ``--before`` picks may be the wrong one, or carry work done after the session began."""
    seen_before = False
    current = ""
    for line in git(top, "rev-list", "--first-parent", "--format=%ct", branch, "--").decode().split("\n"):
        if line.startswith("commit "):
            current = line.removeprefix("commit ").strip()
        elif line.strip().isdigit():
            if int(line.strip()) <= moment.timestamp():
                seen_before = True
            elif seen_before:
                return current
    return None


def tree_of(top: Path, commit: str, subdirectory: str) -> str | None:
    try:
        return git(top, "rev-parse", "--verify", "--quiet", f"{commit}:{subdirectory}").decode().strip() or None
    except GitError:
        return None


@dataclass
class TrackedFiles:
    files: dict[str, str]
    """Project-relative path -> text."""
    skipped: int
    too_large: bool = False


def tracked_files(top: Path, tree: str) -> TrackedFiles:
    """The text files of ``tree``: regular blobs within the size limits that decode as
    UTF-8; symlinks, submodules, binary and oversized files are skipped (counted)."""
    entries: list[tuple[str, str]] = []
    skipped = total = 0
    for record in git(top, "ls-tree", "-r", "-l", "-z", tree).split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, obj, size = meta.decode().split()
        path = raw_path.decode("utf-8", errors="replace")
        if kind != "blob" or mode == "120000" or ".git" in path.split("/") or int(size) > MAX_FILE_BYTES:
            skipped += 1
            continue
        total += int(size)
        entries.append((path, obj))
    if total > MAX_REPOSITORY_BYTES or len(entries) > MAX_REPOSITORY_FILES:
        return TrackedFiles(files={}, skipped=skipped, too_large=True)
    files: dict[str, str] = {}
    for path, content in zip((p for p, _ in entries), _blobs(top, [o for _, o in entries]), strict=True):
        try:
            files[path] = content.decode("utf-8")
        except UnicodeDecodeError:
            skipped += 1
    return TrackedFiles(files=files, skipped=skipped)


def _blobs(top: Path, objects: list[str]) -> list[bytes]:
    """The contents of ``objects`` in one ``git cat-file --batch`` call."""
    if not objects:
        return []
    out = git(top, "cat-file", "--batch", stdin="".join(f"{obj}\n" for obj in objects).encode())
    contents: list[bytes] = []
    position = 0
    for _ in objects:
        header_end = out.index(b"\n", position)
        size = int(out[position:header_end].split()[2])
        contents.append(out[header_end + 1 : header_end + 1 + size])
        position = header_end + 1 + size + 1
    return contents
