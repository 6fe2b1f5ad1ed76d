"""The family contract: what one folder under ``families/`` implements to become a task family.

A family turns a replay record into candidates and each candidate into a Harbor task;
the lifecycle (``traj2env_assets.lifecycle``) does everything else the same way for
every family: the optional LLM proposal, staging the task, the image, the calibration
run, the trial matrix and publishing, with one status file per candidate.

A family answers six questions, one method or class attribute each:

- ``mine``: which candidates does a replay record hold (kept or dropped with a reason)?
- ``proposal_request`` (optional): what should the model be asked for a candidate? The
  prompt file lives in ``<family folder>/prompts/<name>.md`` and the reply is checked
  against ``proposal_schema``;
- ``task_spec``: the Harbor task of a candidate (and its proposal, if any);
- ``calibration_plan`` and ``judge_calibration``: what to run in the candidate's image
  before any trial, and whether the results show the task is sound (and, optionally,
  ``calibrated_spec``: the task as calibration leaves it, e.g. only the tests it kept);
- ``controls``: the trial matrix the published task must pass;
- ``reward_kind``: the scale the task's reward lives on.

Adding a family is one folder implementing this class plus one line in
``traj2env_assets.families.registry``.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.docker_engine.probe import Probe, ProbeResult
from traj2env_assets.drops import Drop, Fact
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.quality.effort import EffortWindow
from traj2env_assets.replay import ReplayRecord
from traj2env_assets.verification.controls import Control
from traj2env_assets.verification.trial import PROJECT_SUBMISSION

CandidateT = TypeVar("CandidateT", bound=BaseModel)
ProposalT = TypeVar("ProposalT", bound=BaseModel)

RewardKind = Literal["binary", "fraction"]
"""``binary``: 1 or 0 (repair, qa); ``fraction``: the share of hidden tests passed (build, extend)."""

TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"


class MinedCandidate(BaseModel, Generic[CandidateT]):
    """One candidate found by ``Family.mine``: the family's own model, kept or dropped."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(pattern=TASK_ID_PATTERN)
    candidate: CandidateT
    drop: Drop | None = None
    facts: dict[str, Fact] = Field(default_factory=dict)


class SessionMining(BaseModel):
    """What a family found in one trajectory: its candidates, and figures about the session
    that belong to no candidate (extend: how many requests changed no file)."""

    model_config = ConfigDict(extra="forbid")

    candidates: list[MinedCandidate] = Field(default_factory=list)
    facts: dict[str, Fact] = Field(default_factory=dict)


class MiningInput(BaseModel):
    """What a family mines: one trajectory's replay record, and where its ATIF document is."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    partition_key: str
    record: ReplayRecord
    trajectory_path: Path


class TaskSource(BaseModel):
    """Provenance every task records: the trajectory it came from and who published it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    partition_key: str
    source_model: str | None
    org: str
    cache_root: Path | None = None
    """The workspace's cache folder, for what a family fetches to make a task (qa: pinned files)."""
    wheelhouse_dir: str | None = None
    """Where Python dependencies are resolved and cached (``Workspace.wheelhouse_dir``);
    None: a task needing them cannot be made."""


class ProposalRequest(BaseModel):
    """One model call for one candidate: the prompt's name (a file in the family's prompts
    folder) and the values for its placeholders."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: str
    values: dict[str, Any]


class CalibrationPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    probes: list[Probe] = Field(min_length=1)


class CalibrationVerdict(BaseModel):
    """The family's reading of its probes: a drop, or none; facts for the tables either way."""

    model_config = ConfigDict(extra="forbid")

    drop: Drop | None = None
    facts: dict[str, Fact] = Field(default_factory=dict)


class CandidateRejected(Exception):
    """Raised by ``Family.task_spec`` when a candidate cannot become a task; the lifecycle
    records ``reason`` as the candidate's skip reason."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.drop = Drop(reason=reason, detail=detail)


class Family(ABC, Generic[CandidateT, ProposalT]):
    name: ClassVar[str]
    version: ClassVar[str]
    """Bump when mining or the task changes meaning: every candidate is mined again."""
    candidate_model: ClassVar[type[BaseModel]]
    proposal_schema: ClassVar[type[BaseModel] | None] = None
    proposal_optional: ClassVar[bool] = False
    """True: without a model (no ``--llm``) a candidate goes on with no proposal (the
    family's offline mode) instead of being dropped as ``llm_not_configured``."""
    reward_kind: ClassVar[RewardKind]
    submission_path: ClassVar[str] = PROJECT_SUBMISSION
    """What crosses from the agent container into the verifier."""
    provenance_fields: ClassVar[frozenset[str]] = frozenset({"task_id", "partition_key", "timestamp"})
    """The candidate model's fields that say where and when the work was recorded, not what
    it is: left out of the work key that makes candidates of the same work one task
    (``traj2env_assets.quality.duplicates``)."""

    @property
    def prompts_dir(self) -> Path:
        return Path(inspect.getfile(type(self))).parent / "prompts"

    @abstractmethod
    def mine(self, source: MiningInput) -> list[MinedCandidate[CandidateT]]: ...

    def mine_session(self, source: MiningInput) -> SessionMining:
        """``mine`` with the session's own mining facts (none by default); the lifecycle calls this."""
        return SessionMining(candidates=list(self.mine(source)))

    def proposal_request(self, candidate: CandidateT) -> ProposalRequest | None:
        """The model call this candidate needs, or None (the default: no LLM). Raise
        :class:`CandidateRejected` when the candidate cannot be asked about (too large)."""
        return None

    @abstractmethod
    def task_spec(self, candidate: CandidateT, proposal: ProposalT | None, source: TaskSource) -> TaskSpec:
        """The Harbor task; raise :class:`CandidateRejected` to drop the candidate."""

    @abstractmethod
    def calibration_plan(
        self, candidate: CandidateT, spec: TaskSpec, proposal: ProposalT | None
    ) -> CalibrationPlan: ...

    @abstractmethod
    def judge_calibration(self, candidate: CandidateT, results: Mapping[str, ProbeResult]) -> CalibrationVerdict: ...

    def calibrated_spec(self, candidate: CandidateT, spec: TaskSpec, verdict: CalibrationVerdict) -> TaskSpec:
        """The task as a passed calibration leaves it (build tracks only the tests it kept);
        unchanged by default. It must keep the environment: the image is already built."""
        return spec

    @abstractmethod
    def controls(self, candidate: CandidateT) -> Sequence[Control]: ...

    def effort_window(self, candidate: CandidateT) -> EffortWindow | None:
        """Where in the session the task's work happened (its difficulty is read from
        there); None by default: difficulty ``unknown``."""
        return None
