"""A candidate's files, and its one status file.

Per family and trajectory, under ``<workspace>/candidates/<family>/<partition key>/``
(the paths are ``layout.Workspace``'s and ``layout.CandidateLayout``'s):

- ``mining.json``                 :class:`MiningIndex`: the cache key and the candidates found
- ``<task id>/candidate.json``    the family's candidate model (what the task is made from)
- ``<task id>/status.json``       :class:`CandidateStatus`: how far it got, or why it stopped
- ``<task id>/proposal.json``     the validated LLM proposal (families with proposals)
- ``<task id>/trials.json``       the trial matrix (rewards and evidence per control)
- ``<task id>/staging/<task id>/`` the Harbor task, staged privately until it is published

``status.json`` is the only place a candidate's state lives; every stage reads it,
updates its own section and writes it back atomically.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.families.contract import Drop, Fact, Family, RewardKind
from traj2env_assets.layout import CandidateLayout, Workspace
from traj2env_assets.llm.usage import LlmUsage
from traj2env_assets.stage_names import CANDIDATE_STAGES, CandidateStage

Stage = CandidateStage
STAGES = CANDIDATE_STAGES

# The names status files and report.json gave three stages before the stages were named for
# their folders: such files still load, so an existing workspace's warm rerun does no work.
_FORMER_STAGE_NAMES = {"mining": "candidates", "proposal": "proposals", "image": "images"}


def _current_stage_name(value: object) -> object:
    return _FORMER_STAGE_NAMES.get(value, value) if isinstance(value, str) else value


RecordedStage = Annotated[Stage, BeforeValidator(_current_stage_name)]
"""A stage name as a file records it, former names included."""


_VOLATILE_FIELDS = {"built", "seconds", "cache_hit", "usage", "shared", "cache_key"}


class CandidateRef(BaseModel):
    """One candidate, as the Dagster ops hand it to each other."""

    model_config = ConfigDict(frozen=True)

    family: str
    partition_key: str
    task_id: str

    @property
    def mapping_key(self) -> str:
        """A Dagster dynamic-output key: letters, digits and underscores only."""
        return re.sub(r"[^A-Za-z0-9_]", "_", f"{self.family}__{self.task_id}")


class MiningIndex(BaseModel):
    """``mining.json``: which candidates one family found in one trajectory, and for which input."""

    model_config = ConfigDict(extra="forbid")

    input_key: str
    task_ids: list[str] = Field(default_factory=list)
    skipped_reason: str | None = None
    facts: dict[str, Fact] = Field(default_factory=dict)
    """The family's figures about the session that belong to no candidate."""
    work_keys: dict[str, str] = Field(default_factory=dict)
    """Task id → the work key it claims (``traj2env_assets.quality.duplicates``), so a
    mining that no longer finds a candidate releases its claim."""
    cached: bool = False


class ProposalRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_key: str
    """Everything the call depends on (model, options, prompt version, rendered prompt, schema)."""
    prompt: str
    prompt_version: str
    cache_key: str | None = None
    cache_hit: bool = False
    usage: LlmUsage = Field(default_factory=LlmUsage)
    decline_reason: str | None = None
    raw_reply_path: str | None = None


class ImageRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec_key: str
    """The task spec the staged directory was written from: unchanged spec → directory kept."""
    staged_path: str
    tag: str | None = None
    content_hash: str | None = None
    built: bool | None = None
    seconds: float | None = None
    redactions: list[str] = Field(default_factory=list)
    """Where secrets were redacted from the staged task (file:line and detector, never the secret)."""
    redacted_files: list[str] = Field(default_factory=list)
    """The staged task's files the redaction changed."""


class CalibrationRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    """The image and the plan: a change to either runs calibration again."""
    passed: bool
    facts: dict[str, Fact] = Field(default_factory=dict)
    shared: bool = False
    """The probes' results came from another candidate with the same image and plan."""


class TrialsRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    """The image, every staged task file but its identity, and the controls: a change to
    any reruns them."""
    passed: bool
    rewards: dict[str, float | None] = Field(default_factory=dict)
    failures: str | None = None
    seconds: float = 0.0
    file: str
    shared: bool = False
    """The matrix ran for another candidate with the same key."""


class CandidateStatus(BaseModel):
    """``status.json``: the candidate's state after the latest stage that touched it."""

    model_config = ConfigDict(extra="forbid")

    family: str
    partition_key: str
    task_id: str
    reward_kind: RewardKind
    reached: RecordedStage | None = None
    """The last stage the candidate passed in its latest walk through the stages (None:
    dropped by the candidates stage; None is the default because status files omit empty fields). A
    dropped candidate reached the stage before the one that dropped it."""
    drop: Drop | None = None
    dropped_at: RecordedStage | None = None
    facts: dict[str, Fact] = Field(default_factory=dict)
    work_key: str | None = None
    """What makes two candidates one task (``traj2env_assets.quality.duplicates``)."""
    duplicate_of: str | None = None
    """Dropped as ``duplicate_of``: the task id of the candidate that is the task."""
    proposal: ProposalRecord | None = None
    image: ImageRecord | None = None
    calibration: CalibrationRecord | None = None
    trials: TrialsRecord | None = None
    published_path: str | None = None

    @property
    def ref(self) -> CandidateRef:
        return CandidateRef(family=self.family, partition_key=self.partition_key, task_id=self.task_id)

    @property
    def state(self) -> str:
        """``dropped``, ``published`` or the stage it waits after (for tables and report.json)."""
        if self.drop is not None:
            return "dropped"
        return "published" if self.reached == "publish" else f"passed_{self.reached}"

    def fingerprint(self, stage: Stage) -> dict[str, object]:
        """What the stage decided for this candidate, without timings and cache flags: equal
        fingerprints on a rerun mean the stage's output did not change."""
        record = {
            "candidates": self.facts,
            "proposals": self.proposal,
            "images": self.image,
            "calibration": self.calibration,
            "trials": self.trials,
            "publish": self.published_path,
        }[stage]
        if isinstance(record, BaseModel):
            record = record.model_dump(mode="json", exclude=_VOLATILE_FIELDS)
        reason = self.drop.reason if self.drop else None
        return {"family": self.family, "task": self.task_id, "state": self.state, "reason": reason, "record": record}

    def ready_for(self, stage: Stage) -> bool:
        """Whether the stage before ``stage`` let this candidate through."""
        return self.reached is not None and STAGES.index(self.reached) >= STAGES.index(stage) - 1

    def passed(self, stage: Stage, **records: object) -> CandidateStatus:
        update = {"reached": stage, "drop": None, "dropped_at": None, "duplicate_of": None}
        return self.model_copy(update={**update, **records})

    def dropped(self, stage: Stage, drop: Drop, **records: object) -> CandidateStatus:
        before = STAGES.index(stage) - 1
        return self.model_copy(
            update={"reached": STAGES[before] if before >= 0 else None, "drop": drop, "dropped_at": stage, **records}
        )


def candidate_files(workspace: Workspace, ref: CandidateRef) -> CandidateLayout:
    return workspace.candidate(ref.family, ref.partition_key, ref.task_id)


def staged_task_dir(workspace: Workspace, ref: CandidateRef) -> Path:
    return candidate_files(workspace, ref).staged_task_dir


def read_mining(workspace: Workspace, family: str, partition_key: str) -> MiningIndex | None:
    try:
        text = workspace.mining_file(family, partition_key).read_text(encoding="utf-8")
        return MiningIndex.model_validate_json(text)
    except (OSError, ValidationError):
        return None


def read_status(workspace: Workspace, ref: CandidateRef) -> CandidateStatus:
    """The candidate's status; raises if it is missing or unreadable (mining always writes one)."""
    path = candidate_files(workspace, ref).status_file
    return CandidateStatus.model_validate_json(path.read_text(encoding="utf-8"))


def save_status(workspace: Workspace, status: CandidateStatus) -> CandidateStatus:
    atomic_write_json(candidate_files(workspace, status.ref).status_file, status)
    return status


def partition_statuses(workspace: Workspace, family: str, partition_key: str) -> list[CandidateStatus]:
    """Every candidate one family mined from one trajectory, in mining order."""
    mining = read_mining(workspace, family, partition_key)
    refs = (
        [CandidateRef(family=family, partition_key=partition_key, task_id=t) for t in mining.task_ids] if mining else []
    )
    return [read_status(workspace, ref) for ref in refs]


def statuses_of(workspace: Workspace, families: list[str], keys: list[str]) -> Iterator[CandidateStatus]:
    for key in keys:
        for family in families:
            yield from partition_statuses(workspace, family, key)


def read_candidate(workspace: Workspace, family: Family, status: CandidateStatus) -> BaseModel:
    path = candidate_files(workspace, status.ref).candidate_file
    return family.candidate_model.model_validate_json(path.read_text(encoding="utf-8"))


def read_proposal(workspace: Workspace, family: Family, status: CandidateStatus) -> BaseModel | None:
    schema = family.proposal_schema
    path = candidate_files(workspace, status.ref).proposal_file
    if schema is None or status.proposal is None or not path.is_file():
        return None
    try:
        return schema.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError:
        return None
