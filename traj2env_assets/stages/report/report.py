"""The run-level ``report.json``: why every input and candidate was kept or dropped."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.families.contract import Fact
from traj2env_assets.harbor.dataset import MANIFEST_FILE, Decision, RolloutFlag, read_manifest
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import (
    STAGES,
    CandidateStatus,
    RecordedStage,
    Stage,
    candidate_files,
    read_mining,
    statuses_of,
)
from traj2env_assets.llm.ledger import read_llm_usage
from traj2env_assets.llm.usage import LlmUsage
from traj2env_assets.replay.models import ReplayFidelity
from traj2env_assets.repositories import RepositoryRecord
from traj2env_assets.sources import RejectedSource, load_registry
from traj2env_assets.stages.convert.conversion import read_conversion
from traj2env_assets.stages.replay.partition import read_fidelity, read_repository
from traj2env_assets.stages.scan.gate import FindingEvidence, read_verdict

REPORT_FILE = "report.json"
# A family mined a replayed input and found nothing to make a task from.
NO_CANDIDATE = "no_candidate"


class InputRecord(BaseModel):
    """One source file's journey through the stages."""

    path: str
    partition_key: str
    format: str | None = None
    steps: int = 0
    status: str = "pending"
    reason: str | None = None
    detail: str | None = None
    skipped_lines: int = 0
    duplicate_tool_calls: int = 0
    scan_outcome: str | None = None
    scan_blocking_findings: list[str] = Field(default_factory=list)
    scan_blocking_evidence: dict[str, list[FindingEvidence]] = Field(default_factory=dict)
    """Per blocking finding id: where it matched (step id, channel, tool, excerpt)."""
    scan_findings: list[str] = Field(default_factory=list)
    replay_fidelity: ReplayFidelity | None = None
    repository: RepositoryRecord | None = None
    """The checkout and commit the replay started from, or why it was refused (``source.repositories``)."""
    mining_skipped: dict[str, str] = Field(default_factory=dict)
    """Per family that mined this input and found no candidate: why (``no_candidate``
    when the replay was fine but the family found nothing to make a task from)."""
    mining_facts: dict[str, dict[str, Fact]] = Field(default_factory=dict)
    """Per family: its figures about this input that belong to no candidate."""


class ProposalSummary(BaseModel):
    """The candidate's model call: where its reply came from, or why it was not used."""

    prompt: str
    prompt_version: str
    cache_hit: bool
    decline_reason: str | None = None
    raw_reply_path: str | None = None
    usage: LlmUsage


class CandidateRecord(BaseModel):
    """One task candidate: kept (published) or dropped, with its reason and evidence."""

    family: str
    task_id: str
    partition_key: str
    status: str
    """``published``, ``dropped``, or ``passed_<stage>`` for a candidate still on its way."""
    kept: bool
    reached: RecordedStage | None = None
    dropped_at: RecordedStage | None = None
    reason: str | None = None
    detail: str | None = None
    reward_kind: str
    facts: dict[str, Fact] = Field(default_factory=dict)
    calibration_facts: dict[str, Fact] = Field(default_factory=dict)
    """What calibration in the image found (build: tests kept, kill rate...)."""
    proposal: ProposalSummary | None = None
    trial_rewards: dict[str, float | None] = Field(default_factory=dict)
    evidence: dict[str, str] = Field(default_factory=dict)
    published_path: str | None = None
    duplicate_of: str | None = None
    """Dropped as ``duplicate_of``: the candidate that is this work's task."""
    duplicates: list[str] = Field(default_factory=list)
    """The candidates dropped as duplicates of this one (the same pre-state, change and check)."""
    review: Decision | None = None
    """The published task's decision in force (``traj2env review``), from the dataset manifest."""
    rollout_solve_rate: float | None = None
    """The published task's best solve rate of any agent and model (``traj2env rollout``);
    None before any attempt."""
    rollout_flag: RolloutFlag | None = None


class RunReport(BaseModel):
    generated_at: str
    workspace: str
    inputs: list[InputRecord] = Field(default_factory=list)
    rejected_inputs: list[RejectedSource] = Field(default_factory=list)
    candidates: list[CandidateRecord] = Field(default_factory=list)
    funnel: dict[str, int] = Field(default_factory=dict)
    llm_scope: str | None = None
    llm_usage: LlmUsage = Field(default_factory=LlmUsage)
    totals: dict[str, int] = Field(default_factory=dict)
    totals_by_reason: dict[str, int] = Field(default_factory=dict)
    scan_outcomes: dict[str, int] = Field(default_factory=dict)


def input_record(workspace: Workspace, families: list[str], partition_key: str, path: str) -> InputRecord:
    record = InputRecord(path=path, partition_key=partition_key)
    conversion = read_conversion(workspace, partition_key)
    if conversion is not None:
        record.format = conversion.format
        record.steps = conversion.steps
        record.status = conversion.status
        record.reason = conversion.reason
        record.detail = conversion.detail
        record.skipped_lines = conversion.skipped_lines
        record.duplicate_tool_calls = conversion.duplicate_tool_calls
    verdict = read_verdict(workspace, partition_key)
    if verdict is not None:
        record.scan_outcome = verdict.outcome
        record.scan_blocking_findings = verdict.blocking_ids
        record.scan_blocking_evidence = {f.id: f.evidence for f in verdict.findings if f.blocking}
        record.scan_findings = [finding.id for finding in verdict.findings]
        if verdict.outcome == "blocked":
            record.status, record.reason = "skipped", "gate"
        elif verdict.outcome == "scan_error":
            record.status, record.reason, record.detail = "skipped", "scan_error", verdict.reason
    record.replay_fidelity = read_fidelity(workspace.replay_dir(partition_key))
    record.repository = read_repository(workspace.replay_dir(partition_key))
    for family in families:
        mining = read_mining(workspace, family, partition_key)
        if mining is not None and not mining.task_ids:
            record.mining_skipped[family] = mining.skipped_reason or NO_CANDIDATE
        if mining is not None and mining.facts:
            record.mining_facts[family] = mining.facts
    return record


def _facts(status: CandidateStatus) -> dict[str, Fact]:
    """The family's facts, and where secrets were redacted from the staged task (file:line
    and detector, never the secret)."""
    if status.image is None or not status.image.redactions:
        return status.facts
    return {**status.facts, "redactions": status.image.redactions}


def candidate_record(workspace: Workspace, status: CandidateStatus) -> CandidateRecord:
    evidence = {"candidate": str(candidate_files(workspace, status.ref).candidate_file)}
    if status.image is not None:
        evidence["staged_task"] = status.image.staged_path
    if status.trials is not None:
        evidence["trials"] = status.trials.file
    proposal = status.proposal
    return CandidateRecord(
        family=status.family,
        task_id=status.task_id,
        partition_key=status.partition_key,
        status=status.state,
        kept=status.state == "published",
        reached=status.reached,
        dropped_at=status.dropped_at,
        reason=status.drop.reason if status.drop else None,
        detail=status.drop.detail if status.drop else None,
        reward_kind=status.reward_kind,
        facts=_facts(status),
        calibration_facts=status.calibration.facts if status.calibration else {},
        proposal=ProposalSummary(
            prompt=proposal.prompt,
            prompt_version=proposal.prompt_version,
            cache_hit=proposal.cache_hit,
            decline_reason=proposal.decline_reason,
            raw_reply_path=proposal.raw_reply_path,
            usage=proposal.usage,
        )
        if proposal
        else None,
        trial_rewards=status.trials.rewards if status.trials else {},
        evidence=evidence,
        published_path=status.published_path,
        duplicate_of=status.duplicate_of,
    )


def _list_duplicates(candidates: list[CandidateRecord]) -> None:
    """Name each copy's task where it ends: a copy dropped at mining names the claim that won
    then, which may itself have turned out a copy of an earlier recording mined later."""
    by_id = {candidate.task_id: candidate for candidate in candidates}
    for candidate in candidates:
        seen = {candidate.task_id}
        task = by_id.get(candidate.duplicate_of or "")
        while task is not None and task.task_id not in seen and (later := by_id.get(task.duplicate_of or "")):
            seen.add(task.task_id)
            task = later
        if task is not None and task.task_id != candidate.task_id:
            candidate.duplicate_of = task.task_id
            task.duplicates.append(candidate.task_id)


def _reached_at_least(candidate: CandidateRecord, stage: Stage) -> bool:
    return candidate.reached is not None and STAGES.index(candidate.reached) >= STAGES.index(stage)


# The funnel's candidate rows: how many candidates got through each stage.
_FUNNEL_STAGES: dict[str, Stage] = {
    "mined": "candidates",
    "proposed": "proposals",
    "image_built": "images",
    "calibrated": "calibration",
    "trials_passed": "trials",
    "published": "publish",
}


def _funnel(inputs: list[InputRecord], rejected: int, candidates: list[CandidateRecord]) -> dict[str, int]:
    return {
        "inputs": len(inputs) + rejected,
        "converted": sum(1 for item in inputs if item.status == "converted"),
        "passed_gate": sum(1 for item in inputs if item.scan_outcome in ("clean", "disabled", "scanner_absent")),
        "replayed": sum(1 for item in inputs if item.replay_fidelity is not None),
        "candidates": len(candidates),
        "distinct": sum(1 for candidate in candidates if candidate.duplicate_of is None),
        **{
            label: sum(1 for candidate in candidates if _reached_at_least(candidate, stage))
            for label, stage in _FUNNEL_STAGES.items()
        },
        "accepted": sum(1 for candidate in candidates if candidate.review == "accept"),
        "solved_in_rollouts": sum(1 for candidate in candidates if candidate.rollout_solve_rate),
    }


def with_dataset_quality(report: RunReport, destination: Path) -> RunReport:
    """``report`` with what reviewers and blind rollouts said of its published tasks (the
    dataset manifest's reviews and rollouts, recorded after publishing) and its funnel's
    ``accepted`` and ``solved_in_rollouts`` rows counted from them."""
    manifest = read_manifest(destination) if (destination / MANIFEST_FILE).is_file() else None
    decisions = {review.task_id: review.decision for review in manifest.reviews} if manifest else {}
    rollouts = {task.task_id: task for task in manifest.rollouts} if manifest else {}
    candidates = []
    for candidate in report.candidates:
        task = rollouts.get(candidate.task_id) if candidate.kept else None
        rates = [model.solve_rate for model in task.models if model.solve_rate is not None] if task else []
        candidates.append(
            candidate.model_copy(
                update={
                    "review": decisions.get(candidate.task_id) if candidate.kept else None,
                    "rollout_solve_rate": max(rates) if rates else None,
                    "rollout_flag": task.flag if task else None,
                }
            )
        )
    funnel = _funnel(report.inputs, len(report.rejected_inputs), candidates)
    return report.model_copy(update={"candidates": candidates, "funnel": funnel})


def build_run_report(
    workspace: Workspace, families: list[str], partition_keys: list[str] | None = None, llm_scope: str | None = None
) -> RunReport:
    """Every input (all of them unless ``partition_keys``) and every candidate of ``families``
    (by name: every family in play, selected by the run or not)."""
    registry = load_registry(workspace)
    keys = partition_keys if partition_keys is not None else sorted(registry.sources)
    inputs = [
        input_record(workspace, families, key, registry.sources[key].path) for key in keys if key in registry.sources
    ]
    rejected = sorted(registry.rejected.values(), key=lambda item: item.path)
    candidates = [
        candidate_record(workspace, status)
        for status in statuses_of(workspace, families, [item.partition_key for item in inputs])
    ]
    _list_duplicates(candidates)
    reasons = Counter(item.reason for item in inputs if item.reason)
    reasons.update(item.reason for item in rejected)
    reasons.update(c.reason for c in candidates if c.reason)
    return RunReport(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        workspace=str(workspace.root),
        inputs=inputs,
        rejected_inputs=rejected,
        candidates=candidates,
        funnel=_funnel(inputs, len(rejected), candidates),
        llm_scope=llm_scope,
        llm_usage=read_llm_usage(workspace.root, llm_scope) if llm_scope else LlmUsage(),
        totals={
            "inputs": len(inputs) + len(rejected),
            "converted": sum(1 for item in inputs if item.status == "converted"),
            "skipped": sum(1 for item in inputs if item.status == "skipped") + len(rejected),
            "candidates": len(candidates),
            "kept": sum(1 for c in candidates if c.kept),
            "dropped": sum(1 for c in candidates if c.status == "dropped"),
        },
        totals_by_reason=dict(sorted(reasons.items())),
        scan_outcomes=dict(sorted(Counter(item.scan_outcome for item in inputs if item.scan_outcome).items())),
    )


def write_run_report(report: RunReport, destination: Path) -> Path:
    return atomic_write_json(destination / REPORT_FILE, report)


def _verdicts(report: RunReport) -> dict[tuple[str, str, str], tuple[str, str | None]]:
    return {(c.family, c.partition_key, c.task_id): (c.status, c.reason) for c in report.candidates}


def report_disagreements(workspace: Workspace, families: list[str], destination: Path) -> list[str]:
    """Where ``report.json`` disagrees with the candidates' status files (nothing when they agree)."""
    path = destination / REPORT_FILE
    if not path.is_file():
        return [f"{path} is missing"]
    written = RunReport.model_validate_json(path.read_text(encoding="utf-8"))
    fresh = with_dataset_quality(
        build_run_report(workspace, families, [item.partition_key for item in written.inputs], written.llm_scope),
        destination,
    )
    reported, actual = _verdicts(written), _verdicts(fresh)
    differences = [
        f"{'/'.join(key)}: report says {reported.get(key)}, stage files say {actual.get(key)}"
        for key in sorted(reported.keys() | actual.keys())
        if reported.get(key) != actual.get(key)
    ]
    if written.funnel != fresh.funnel:
        differences.append(f"funnel: report says {written.funnel}, stage files say {fresh.funnel}")
    return differences
