"""The run-level ``report.json``: why every input and candidate was kept or dropped."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from traj2env_assets.formats.stage import read_conversion
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
    replay_fidelity: dict[str, Any] | None = None


class RunReport(BaseModel):
    generated_at: str
    workspace: str
    inputs: list[InputRecord] = Field(default_factory=list)
    rejected_inputs: list[RejectedSource] = Field(default_factory=list)
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
    fidelity = workspace.stage_file(STAGE_REPLAY, partition_key, "fidelity.json")
    if fidelity.is_file():
        record.replay_fidelity = json.loads(fidelity.read_text(encoding="utf-8"))
    return record


def build_run_report(workspace: Workspace, partition_keys: list[str] | None = None) -> RunReport:
    registry = load_registry(workspace)
    keys = partition_keys if partition_keys is not None else sorted(registry.sources)
    inputs = [
        input_record(workspace, key, registry.sources[key].path) for key in keys if key in registry.sources
    ]
    rejected = sorted(registry.rejected.values(), key=lambda item: item.path)
    reasons = Counter(item.reason for item in inputs if item.reason)
    reasons.update(item.reason for item in rejected)
    return RunReport(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        workspace=str(workspace.root),
        inputs=inputs,
        rejected_inputs=rejected,
        totals={
            "inputs": len(inputs) + len(rejected),
            "converted": sum(1 for item in inputs if item.status == "converted"),
            "skipped": sum(1 for item in inputs if item.status == "skipped") + len(rejected),
        },
        totals_by_reason=dict(sorted(reasons.items())),
        scan_outcomes=dict(sorted(Counter(item.scan_outcome for item in inputs if item.scan_outcome).items())),
    )


def write_run_report(report: RunReport, destination: Path) -> Path:
    return atomic_write_json(destination / REPORT_FILE, report)
