"""A candidate's Harbor task spec, as the image, calibration and trial stages all need it."""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePath

from traj2env_assets.families.contract import TaskSource
from traj2env_assets.families.registry import family_named
from traj2env_assets.formats.stage import read_conversion
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.lifecycle.status import CandidateStatus, read_candidate, read_proposal
from traj2env_assets.workspace import Workspace


def task_spec_for(workspace: Workspace, status: CandidateStatus, org: str) -> TaskSpec:
    """The family's spec for the candidate; raises ``CandidateRejected`` like the family does."""
    family = family_named(status.family)
    conversion = read_conversion(workspace, status.partition_key)
    source = TaskSource(
        partition_key=status.partition_key,
        source_model=conversion.model_name if conversion else None,
        org=org,
        cache_root=workspace.root / "cache",
        wheelhouse_dir=str(workspace.wheelhouse_dir),
    )
    return family.task_spec(read_candidate(workspace, status), read_proposal(workspace, status), source)


def digest_of(*parts: object) -> str:
    """A stable key over JSON-able parts (bytes enter as their sha256)."""

    def plain(value: object) -> object:
        if isinstance(value, bytes):
            return hashlib.sha256(value).hexdigest()
        if isinstance(value, PurePath):
            return value.as_posix()
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    return hashlib.sha256(json.dumps([plain(p) for p in parts], sort_keys=True).encode()).hexdigest()


def spec_key(spec: TaskSpec) -> str:
    return digest_of(spec.model_dump())
