"""Stage 4, candidates: one family mines one trajectory's replay record.

Keyed by the replay's input hash and the family's version: an unchanged input returns
the previous index untouched. A changed input re-mines and removes the directories of
candidates the new mining no longer finds, so no stale staging directory is left.
A candidate mined again with the same content keeps its status records (image,
calibration, trials, publication), so bumping a version upstream reuses their caches.
A task id found twice in one trajectory keeps the first; the repeat is stored as
``<task id>.<n>`` and dropped as ``duplicate``. A candidate that is the same work as a
candidate of another (or the same) trajectory is dropped as ``duplicate_of`` it
(``traj2env_assets.quality.duplicates``).
"""

from __future__ import annotations

import hashlib
import shutil

from traj2env_assets.atomic_files import atomic_write_json, atomic_write_text
from traj2env_assets.families.contract import Drop, Family, MinedCandidate, MiningInput
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    CandidateStatus,
    MiningIndex,
    candidate_files,
    read_mining,
    read_status,
    save_status,
)
from traj2env_assets.quality.duplicates import WORK_KEY_VERSION, FixClaim, FixClaims, work_key
from traj2env_assets.replay import ReplayRecord
from traj2env_assets.stages.replay.partition import read_outcome


def _input_key(workspace: Workspace, family: Family, partition_key: str) -> str:
    outcome = read_outcome(workspace.replay_dir(partition_key))
    replay = f"{outcome.input_hash}\0{outcome.code_version}" if outcome else "<no replay>"
    return hashlib.sha256(f"{replay}\0{family.name}\0{family.version}\0{WORK_KEY_VERSION}".encode()).hexdigest()


def _unique_ids(mined: list[MinedCandidate]) -> list[MinedCandidate]:
    seen: dict[str, int] = {}
    unique = []
    for item in mined:
        count = seen.get(item.task_id, 0)
        seen[item.task_id] = count + 1
        if count:
            drop = Drop(reason="duplicate", detail=f"{item.task_id} was already found in this trajectory")
            item = item.model_copy(update={"task_id": f"{item.task_id}.{count + 1}", "drop": drop})
        unique.append(item)
    return unique


def _remove_stale(workspace: Workspace, family: Family, partition_key: str, keep: set[str]) -> None:
    directory = workspace.partition_dir(family.name, partition_key)
    if not directory.is_dir():
        return
    for child in directory.iterdir():
        if child.is_dir() and child.name not in keep:
            shutil.rmtree(child)


def _store(workspace: Workspace, family: Family, partition_key: str, mined: MinedCandidate) -> CandidateStatus:
    """Write the candidate; its fresh status, or the previous one if the candidate is unchanged."""
    ref = CandidateRef(family=family.name, partition_key=partition_key, task_id=mined.task_id)
    path = candidate_files(workspace, ref).candidate_file
    content = mined.candidate.model_dump_json(indent=2, exclude_none=True) + "\n"
    fresh = CandidateStatus(
        family=family.name,
        partition_key=partition_key,
        task_id=mined.task_id,
        reward_kind=family.reward_kind,
        reached="candidates",
        facts=mined.facts,
    )
    if path.is_file() and path.read_text(encoding="utf-8") == content:
        try:
            previous = read_status(workspace, ref)
        except (OSError, ValueError):
            return fresh
        return previous.model_copy(update={"facts": mined.facts}).passed("candidates")
    atomic_write_text(path, content)
    return fresh


def _one_task_per_fix(
    workspace: Workspace, family: Family, mined: MinedCandidate, status: CandidateStatus
) -> CandidateStatus:
    """Claim the candidate's work; a duplicate of the claim that wins is dropped here, before
    any model call or image is spent on it."""
    key = work_key(family.name, mined.candidate, family.provenance_fields)
    claims = FixClaims(workspace.dedupe_dir)
    claim = FixClaim(
        task_id=mined.task_id,
        partition_key=status.partition_key,
        started_at=getattr(mined.candidate, "timestamp", None),
    )
    claims.claim(key, claim)
    status = status.model_copy(update={"work_key": key})
    winner = claims.winner(key)
    if winner is None or winner.task_id == mined.task_id:
        return status
    return status.dropped("candidates", winner.drop(), duplicate_of=winner.task_id)


def _release_claims(workspace: Workspace, previous: MiningIndex | None, index: MiningIndex) -> None:
    if previous is None:
        return
    claims = FixClaims(workspace.dedupe_dir)
    for task_id, key in previous.work_keys.items():
        if index.work_keys.get(task_id) != key:
            claims.release(key, task_id)


def mine_partition(workspace: Workspace, family: Family, partition_key: str) -> MiningIndex:
    input_key = _input_key(workspace, family, partition_key)
    previous = read_mining(workspace, family.name, partition_key)
    if previous and previous.input_key == input_key:
        return previous.model_copy(update={"cached": True})
    index = MiningIndex(input_key=input_key)
    outcome = read_outcome(workspace.replay_dir(partition_key))
    if outcome is None or outcome.status != "replayed":
        index.skipped_reason = outcome.reason if outcome else "replay_missing"
    else:
        record = ReplayRecord.load(workspace.replay_dir(partition_key))
        source = MiningInput(
            partition_key=partition_key, record=record, trajectory_path=workspace.trajectory_file(partition_key)
        )
        session = family.mine_session(source)
        index.facts = session.facts
        for mined in _unique_ids(session.candidates):
            status = _store(workspace, family, partition_key, mined)
            if mined.drop:
                status = status.dropped("candidates", mined.drop)
            else:
                status = _one_task_per_fix(workspace, family, mined, status)
                index.work_keys[mined.task_id] = status.work_key or ""
            save_status(workspace, status)
            index.task_ids.append(mined.task_id)
    _release_claims(workspace, previous, index)
    _remove_stale(workspace, family, partition_key, set(index.task_ids))
    atomic_write_json(workspace.mining_file(family.name, partition_key), index)
    return index
