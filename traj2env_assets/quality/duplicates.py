"""One task per fix: candidates that are the same work become one task.

Two candidates are the same work when their candidate models are equal once their
provenance is left out (the family names those fields in ``Family.provenance_fields``:
the session, the step, when). That is the same pre-state, the same change and the same
check: one session saved in four log formats, a resumed Claude Code session that replays
its parent, a session saved twice. The sha256 of that content is the candidate's *work
key*.

Every live candidate claims its work key at mining, in ``<workspace>/dedupe/<work key>/``
(one file per claimant, so worker processes never write one file). One claimant is the
task, the others are dropped as ``duplicate_of`` it:

1. a claimant whose task is published (a published task is never taken back), else
2. the first session: the earliest start of the recorded work, then the partition key and
   the task id, so the same inputs give the same winner in any processing order.

Mining decides with the claims it sees; the stages that spend (a model call, an image)
and publishing, which takes one task at a time, decide again, so a candidate that won at
mining but meets an earlier session's claim later is not published beside it. A winner
dropped later (its calibration failed) is not replaced: its duplicates are the same work
and would fail the same way.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.conventions import sorted_json_sha256
from traj2env_assets.drops import Drop

DUPLICATE_OF = "duplicate_of"
WORK_KEY_VERSION = "1"
"""Part of mining's cache key: a workspace mined before the claims existed mines again."""


def _plain_text(value: object) -> object:
    """Text without the line endings and trailing blanks a log format adds (Codex and pi end
    a tool's output with a newline Claude Code's log strips)."""
    if isinstance(value, str):
        return "\n".join(line.rstrip() for line in value.splitlines()).rstrip("\n")
    if isinstance(value, dict):
        return {key: _plain_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_text(item) for item in value]
    return value


def work_key(family: str, candidate: BaseModel, provenance: frozenset[str]) -> str:
    """The sha256 of what the task is made from, without where and when it was recorded."""
    work = _plain_text(candidate.model_dump(mode="json", exclude=set(provenance)))
    return sorted_json_sha256({"family": family, "work": work})


def _instant(timestamp: str | None) -> float:
    """Seconds since the epoch of an ISO 8601 time (naive means UTC); unknown sorts last.
    Parsed, not compared as text: ``…:09Z`` and ``…:09.600Z`` order wrongly as strings."""
    if not timestamp:
        return math.inf
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return math.inf
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


class FixClaim(BaseModel):
    """One candidate's claim on a work key."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    partition_key: str
    started_at: str | None = None
    """When the session recorded the work (the family's candidate ``timestamp``)."""
    published: bool = False

    def order(self) -> tuple[int, float, str, str]:
        return (0 if self.published else 1, _instant(self.started_at), self.partition_key, self.task_id)

    def drop(self) -> Drop:
        """Why a copy of this claim's work goes no further."""
        detail = f"{self.task_id} (trajectory {self.partition_key}): the same pre-state, change and check"
        return Drop(reason=DUPLICATE_OF, detail=detail)


class FixClaims:
    """``<root>/<work key>/<task id>.json`` (``root``: ``Workspace.dedupe_dir``): who claims
    each piece of work."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str, task_id: str) -> Path:
        return self.root / key / f"{task_id}.json"

    def claims(self, key: str) -> list[FixClaim]:
        directory = self.root / key
        if not directory.is_dir():
            return []
        found = []
        for path in sorted(directory.glob("*.json")):
            try:
                found.append(FixClaim.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue  # released or being replaced meanwhile
        return found

    def claim(self, key: str, claim: FixClaim) -> FixClaim:
        """Record ``claim``; a published mark made earlier for this task stays."""
        path = self._path(key, claim.task_id)
        earlier = next((c for c in self.claims(key) if c.task_id == claim.task_id), None)
        if earlier is not None and earlier.published:
            claim = claim.model_copy(update={"published": True})
        if earlier != claim:
            atomic_write_json(path, claim)
        return claim

    def release(self, key: str, task_id: str) -> None:
        self._path(key, task_id).unlink(missing_ok=True)

    def winner(self, key: str) -> FixClaim | None:
        return min(self.claims(key), key=FixClaim.order, default=None)

    def mark_published(self, key: str, task_id: str) -> None:
        claim = next((c for c in self.claims(key) if c.task_id == task_id), None)
        if claim is not None and not claim.published:
            atomic_write_json(self._path(key, task_id), claim.model_copy(update={"published": True}))
