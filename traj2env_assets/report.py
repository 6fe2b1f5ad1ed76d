"""The run-level ``report.json``: why every input and candidate was kept or dropped."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from traj2env_assets.families.repair.stage import partition_dir, read_mining, read_progress
from traj2env_assets.formats.stage import read_conversion
from traj2env_assets.llm.ledger import read_llm_usage
from traj2env_assets.llm.usage import LlmUsage
from traj2env_assets.replay.models import ReplayFidelity
from traj2env_assets.replay.stage import read_fidelity
from traj2env_assets.scan_gate import read_verdict
from traj2env_assets.sources import RejectedSource, load_registry
from traj2env_assets.workspace import STAGE_REPLAY, Workspace, atomic_write_json

REPORT_FILE = "report.json"


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
    scan_findings: list[str] = Field(default_factory=list)
    replay_fidelity: ReplayFidelity | None = None


class CandidateRecord(BaseModel):
    """One task candidate: kept (published) or dropped, with its reason and evidence."""

    family: str
    task_id: str
    partition_key: str
    status: str
    kept: bool
    reason: str | None = None
    detail: str | None = None
    check: str | None = None
    failing_ids: list[str] = Field(default_factory=list)
    fixed_paths: list[str] = Field(default_factory=list)
    trial_rewards: dict[str, float | None] = Field(default_factory=dict)
    evidence: dict[str, str] = Field(default_factory=dict)
    published_path: str | None = None


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


def input_record(workspace: Workspace, partition_key: str, path: str) -> InputRecord:
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
        record.scan_findings = [finding.id for finding in verdict.findings]
        if verdict.outcome == "blocked":
            record.status, record.reason = "skipped", "gate"
        elif verdict.outcome == "scan_error":
            record.status, record.reason, record.detail = "skipped", "scan_error", verdict.reason
    record.replay_fidelity = read_fidelity(workspace.stage_dir(STAGE_REPLAY, partition_key))
    return record


def repair_candidate_records(workspace: Workspace, partition_key: str) -> list[CandidateRecord]:
    mining = read_mining(workspace, partition_key)
    records = []
    for summary in mining.candidates if mining else []:
        progress = read_progress(workspace, partition_key, summary.task_id)
        status = progress.status if progress else summary.status
        evidence = {"candidate": str(partition_dir(workspace, partition_key) / summary.task_id / "candidate.json")}
        if progress and progress.trials_file:
            evidence["trials"] = progress.trials_file
        records.append(
            CandidateRecord(
                family="repair",
                task_id=summary.task_id,
                partition_key=partition_key,
                status=status,
                kept=status == "published",
                reason=progress.reason if progress else summary.reason,
                detail=progress.detail if progress else summary.detail,
                check=summary.check,
                failing_ids=summary.failing_ids,
                fixed_paths=summary.fixed_paths,
                trial_rewards=progress.trial_rewards if progress else {},
                evidence=evidence,
                published_path=progress.published_path if progress else None,
            )
        )
    return records


# How far a candidate got: its status, or for a dropped one the stage that dropped it.
_CANDIDATE_RANK = {"candidate": 0, "calibrated": 1, "trials_passed": 2, "published": 3}
_DROPPED_AT_RANK = {"trials_failed": 1, "duplicate": 2}


def _candidate_rank(candidate: CandidateRecord) -> int:
    if candidate.status == "dropped":
        return _DROPPED_AT_RANK.get(candidate.reason or "", 0)
    return _CANDIDATE_RANK.get(candidate.status, 0)


def _funnel(inputs: list[InputRecord], rejected: int, candidates: list[CandidateRecord]) -> dict[str, int]:
    ranks = [_candidate_rank(candidate) for candidate in candidates]
    return {
        "inputs": len(inputs) + rejected,
        "converted": sum(1 for item in inputs if item.status == "converted"),
        "passed_gate": sum(1 for item in inputs if item.scan_outcome in ("clean", "disabled", "scanner_absent")),
        "replayed": sum(1 for item in inputs if item.replay_fidelity is not None),
        "candidates": len(candidates),
        "calibrated": sum(1 for rank in ranks if rank >= 1),
        "trials_passed": sum(1 for rank in ranks if rank >= 2),
        "published": sum(1 for rank in ranks if rank >= 3),
    }


def build_run_report(
    workspace: Workspace, partition_keys: list[str] | None = None, llm_scope: str | None = None
) -> RunReport:
    registry = load_registry(workspace)
    keys = partition_keys if partition_keys is not None else sorted(registry.sources)
    inputs = [
        input_record(workspace, key, registry.sources[key].path) for key in keys if key in registry.sources
    ]
    rejected = sorted(registry.rejected.values(), key=lambda item: item.path)
    candidates = [record for item in inputs for record in repair_candidate_records(workspace, item.partition_key)]
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
