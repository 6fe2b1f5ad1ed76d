"""Stage 2: the atif-scan gate.

Outcomes (exact strings in report.json):

- ``clean``: scanned, no blocking finding.
- ``blocked``: a finding at or above the blocking severity that is not exempt; the
  trajectory is dropped with reason ``gate`` and the finding ids are recorded.
- ``disabled``: ``scan=false``.
- ``scanner_absent``: atif-scan is not installed; the trajectory passes and the report says so.
- ``scan_error``: the scanner failed on this input; never a clean label, the
  trajectory is kept as a skipped record.
- ``not_converted``: the conversion stage skipped the input, so there was nothing to scan.

Blocking set. atif-scan severities are review priorities, not verdicts, and ordinary
coding sessions trip some checks. We block at ``high`` and above (reward tampering,
benchmark/solution lookup, verifier feedback injection, isolation bypass, side
channels) except for the checks below, which fire on honest coding work:

- ``code.verifier_path_reference`` (high): any session that writes its own
  ``tests/`` or ``conftest.py`` references "verifier paths"; repair sessions do
  exactly that.
Medium checks such as ``tamper.harness_hooks`` (writing ``conftest.py``) and
``access.test_path`` stay below the default threshold for the same reason.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from traj2env_assets.formats.stage import read_conversion, trajectory_path
from traj2env_assets.workspace import STAGE_SCAN, Workspace, atomic_write_json

GateOutcome = Literal["clean", "blocked", "disabled", "scanner_absent", "scan_error", "not_converted"]
SeverityName = Literal["info", "low", "medium", "high", "critical"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "low": 25, "medium": 50, "high": 75, "critical": 100}
EXEMPT_CHECKS: frozenset[str] = frozenset({"code.verifier_path_reference"})
PASSING_OUTCOMES: frozenset[str] = frozenset({"clean", "disabled", "scanner_absent"})


class ScanFinding(BaseModel):
    id: str
    severity: SeverityName | None = None
    blocking: bool = False


class ScanVerdict(BaseModel):
    """``<workspace>/scan/<key>/verdict.json``."""

    outcome: GateOutcome
    reason: str | None = None
    blocking_severity: SeverityName = "high"
    findings: list[ScanFinding] = Field(default_factory=list)
    scanner_version: str | None = None
    input_key: str | None = None
    """The converted trajectory and the gate's settings it was scanned with: unchanged → not scanned again."""

    @property
    def allows_downstream(self) -> bool:
        return self.outcome in PASSING_OUTCOMES

    @property
    def blocking_ids(self) -> list[str]:
        return [finding.id for finding in self.findings if finding.blocking]


def scanner_installed() -> bool:
    return importlib.util.find_spec("atif_scan") is not None


def _severity_name(severity: Any) -> SeverityName | None:
    name = getattr(severity, "name", None) or (str(severity) if severity is not None else None)
    lowered = name.lower() if name else None
    return lowered if lowered in SEVERITY_RANK else None  # type: ignore[return-value]


def scan_trajectory(
    document: dict[str, Any],
    *,
    enabled: bool = True,
    blocking_severity: SeverityName = "high",
    scanner_available: bool | None = None,
) -> ScanVerdict:
    """Scan one ATIF document (as a JSON dict) and decide whether it passes the gate."""
    if not enabled:
        return ScanVerdict(outcome="disabled", blocking_severity=blocking_severity)
    if not (scanner_installed() if scanner_available is None else scanner_available):
        return ScanVerdict(outcome="scanner_absent", blocking_severity=blocking_severity)
    from atif_scan import Context, Engine, Status, TraceError, builtin_detectors, parse_trace

    try:
        trace = parse_trace(document)
        assessments = Engine(builtin_detectors()).evaluate(trace, Context())
    except TraceError as exc:
        return ScanVerdict(outcome="scan_error", reason=f"scanner rejected the trace: {exc}", blocking_severity=blocking_severity)
    except Exception as exc:  # noqa: BLE001 - any scanner failure must yield scan_error, never clean
        return ScanVerdict(
            outcome="scan_error", reason=f"{type(exc).__name__}: {exc}", blocking_severity=blocking_severity
        )
    threshold = SEVERITY_RANK[blocking_severity]
    findings: dict[str, ScanFinding] = {}
    for assessment in assessments:
        if assessment.result.status != Status.MATCH:
            continue
        severity = _severity_name(assessment.spec.severity)
        blocking = (
            severity is not None
            and SEVERITY_RANK[severity] >= threshold
            and assessment.spec.id not in EXEMPT_CHECKS
        )
        findings[assessment.spec.id] = ScanFinding(id=assessment.spec.id, severity=severity, blocking=blocking)
    ordered = sorted(findings.values(), key=lambda f: (-SEVERITY_RANK.get(f.severity or "info", 0), f.id))
    blocked = any(finding.blocking for finding in ordered)
    return ScanVerdict(
        outcome="blocked" if blocked else "clean",
        reason="gate" if blocked else None,
        blocking_severity=blocking_severity,
        findings=ordered,
        scanner_version=_scanner_version(),
    )


def _scanner_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atif-scan")
    except PackageNotFoundError:
        return None


VERDICT_FILE = "verdict.json"


def read_verdict(workspace: Workspace, partition_key: str) -> ScanVerdict | None:
    path = workspace.stage_file(STAGE_SCAN, partition_key, VERDICT_FILE)
    if not path.is_file():
        return None
    return ScanVerdict.model_validate_json(path.read_text(encoding="utf-8"))


def scan_partition(
    workspace: Workspace, partition_key: str, *, enabled: bool = True, blocking_severity: SeverityName = "high"
) -> ScanVerdict:
    """Scan the partition's converted trajectory and write ``scan/<key>/verdict.json``,
    unless the same trajectory was already scanned the same way."""
    conversion = read_conversion(workspace, partition_key)
    scanner = _scanner_version() if enabled and scanner_installed() else None
    settings = [conversion.content_sha256 if conversion else None, enabled, blocking_severity, scanner]
    input_key = hashlib.sha256(json.dumps(settings).encode()).hexdigest()
    previous = read_verdict(workspace, partition_key)
    if previous is not None and previous.input_key == input_key:
        return previous
    if conversion is None or conversion.status != "converted":
        verdict = ScanVerdict(
            outcome="not_converted",
            reason=conversion.reason if conversion else "no conversion record",
            blocking_severity=blocking_severity,
        )
    else:
        document = json.loads(trajectory_path(workspace, partition_key).read_text(encoding="utf-8"))
        verdict = scan_trajectory(document, enabled=enabled, blocking_severity=blocking_severity)
    verdict = verdict.model_copy(update={"input_key": input_key})
    atomic_write_json(workspace.stage_file(STAGE_SCAN, partition_key, VERDICT_FILE), verdict)
    return verdict
