"""Which checkout covers a session, and the project as it was at the session's start.

Refusal reasons (``RepositoryRecord.reason``): ``repository_no_commit_before_session``,
``repository_history_out_of_order``, ``repository_subdirectory_missing``,
``repository_too_large``, ``repository_unreadable`` here; ``repository_disagrees`` (no
full read in the log agrees with the commit) and ``repository_unconfirmed`` (the log has
no full read of a committed file to confirm it with) after replay (:func:`judge_agreement`).
A refused checkout is never used: the session is replayed without it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from traj2env_assets.repositories.git import (
    GitError,
    commit_before,
    current_branch,
    out_of_order_commit,
    toplevel,
    tracked_files,
    tree_of,
)
from traj2env_assets.repositories.models import Repositories, RepositoryRecord


@dataclass(frozen=True)
class Coverage:
    top: Path
    subdirectory: str
    """The session's cwd inside the checkout, '' for its top level."""


def _under(path: str, prefix: str) -> str | None:
    """``path`` relative to ``prefix`` ('' when equal), or None when it is not under it."""
    path, prefix = path.rstrip("/") or "/", prefix.rstrip("/") or "/"
    if path == prefix:
        return ""
    head = prefix if prefix.endswith("/") else prefix + "/"
    return path[len(head) :] if path.startswith(head) else None


def _inside(top: Path, local: Path) -> str | None:
    try:
        relative = local.resolve().relative_to(top).as_posix()
    except ValueError:
        return None
    return "" if relative == "." else relative


def find_coverage(repositories: Repositories, cwd: str | None, session_file: Path | None) -> Coverage | None:
    """The checkout that covers a session recorded in ``cwd`` from ``session_file``, if any."""
    if repositories == "auto":
        if cwd and Path(cwd).is_dir() and (top := toplevel(Path(cwd))) is not None:
            return Coverage(top, _inside(top, Path(cwd)) or "")
        if session_file is not None and (top := toplevel(session_file.parent)) is not None:
            return Coverage(top, "")
        return None
    for entry in repositories:
        top = toplevel(entry.path)
        if top is None:
            continue
        base = _inside(top, entry.path) or ""
        for prefix in entry.cwds:
            rest = _under(cwd, prefix) if cwd else None
            if rest is not None:
                joined = posixpath.normpath(posixpath.join(base, rest))
                return Coverage(top, "" if joined == "." else joined)
        if entry.cwds:
            continue
        if cwd and (rest := _inside(top, Path(cwd))) is not None and Path(cwd).is_dir():
            return Coverage(top, rest)
        if session_file is not None and _inside(entry.path.resolve(), session_file) is not None:
            return Coverage(top, base)
    return None


def session_start(timestamp: str | None) -> datetime | None:
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def resolve_commit(coverage: Coverage, start: datetime | None) -> RepositoryRecord:
    """The commit current at ``start`` on the checkout's branch and the session's tree in it
    (cheap: what the replay's cache key needs), or a refusal."""
    branch = current_branch(coverage.top)
    record = RepositoryRecord(
        status="refused",
        path=str(coverage.top),
        subdirectory=coverage.subdirectory,
        branch=branch,
        session_start=start.isoformat() if start else None,
    )

    def refused(reason: str, detail: str) -> RepositoryRecord:
        record.reason, record.detail = reason, detail
        return record

    if start is None:
        return refused("repository_no_commit_before_session", "the session records no start time")
    try:
        commit = commit_before(coverage.top, branch, start)
        if commit is None:
            return refused("repository_no_commit_before_session", f"no commit on {branch} before {start.isoformat()}")
        record.commit = commit
        disorder = out_of_order_commit(coverage.top, branch, start)
        if disorder is not None:
            return refused(
                "repository_history_out_of_order",
                f"on {branch}, {disorder[:12]} is dated after the session start but precedes a commit dated before it",
            )
        record.tree = tree_of(coverage.top, commit, coverage.subdirectory)
    except GitError as error:
        return refused("repository_unreadable", str(error))
    if record.tree is None:
        return refused("repository_subdirectory_missing", f"{coverage.subdirectory!r} is not in {commit[:12]}")
    record.status = "used"
    return record


def load_files(record: RepositoryRecord) -> tuple[RepositoryRecord, dict[str, str]]:
    """The text files of a usable record's tree, or the record refused (too large, unreadable)."""
    if record.status != "used" or record.tree is None:
        return record, {}
    try:
        tracked = tracked_files(Path(record.path), record.tree)
    except GitError as error:
        return record.model_copy(
            update={"status": "refused", "reason": "repository_unreadable", "detail": str(error)}
        ), {}
    if tracked.too_large:
        detail = f"{record.commit} exceeds the size limits"
        return record.model_copy(
            update={
                "status": "refused",
                "reason": "repository_too_large",
                "detail": detail,
                "files_skipped": tracked.skipped,
            }
        ), {}
    return record.model_copy(update={"files_skipped": tracked.skipped}), tracked.files


def judge_agreement(record: RepositoryRecord, agreeing: int, differing: int, seeded: int) -> RepositoryRecord:
    """The record after replay: used only when at least one full read agrees with the commit."""
    if agreeing > 0:
        return record.model_copy(
            update={"files_from_repository": seeded, "reads_agreeing": agreeing, "files_differing": differing}
        )
    if differing > 0:
        reason, detail = (
            "repository_disagrees",
            f"none of the {differing} file(s) the log read in full match {record.commit}",
        )
    else:
        reason, detail = "repository_unconfirmed", "the log reads no committed file in full to confirm the commit with"
    return record.model_copy(
        update={"status": "refused", "reason": reason, "detail": detail, "files_differing": differing}
    )
