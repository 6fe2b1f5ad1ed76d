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
- ``side_channel.model_call`` (high): fires on any text the agent wrote that calls a
  model API, and an agent building an app that talks to an LLM writes exactly that
  (a real Codex session was blocked for an ``https://api.openai.com/v1/chat/completions``
  URL in the app it built; Claude Code ``Write`` and Codex ``apply_patch`` code is matched
  like a ``curl`` to the API). A model the agent consulted does not make its fix
  wrong: the task is built from the replayed files and every trial runs with
  networking off, so a solution that needs a model at test time fails its own trials.
A finding whose severity this gate cannot resolve (a scanner release with a new level,
a detector without one) blocks unless its id is allowed: it is never ``clean``.

Medium checks such as ``tamper.harness_hooks`` (writing ``conftest.py``) and
``access.test_path`` stay below the default threshold for the same reason.

Only the detectors that can block under the run's settings run (``checks_run`` says how
many): the others cannot change the outcome, and running all 87 cost ~3.6x the CPU of the
~20 that can block (the throughput issue's profile put the scan at half of a cheap run).
``scan_block`` ids (or a lower ``blocking_severity``) run more of them.

The options ``scan_block`` and ``scan_allow`` (finding ids) override the set: a blocked
id blocks at any severity, an allowed id never blocks. Every finding that blocks
carries its evidence (step id, channel, tool, a secret-masked excerpt) into
``verdict.json`` and ``report.json``.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, Field

from traj2env_assets.atif_scanner import scanner_installed
from traj2env_assets.atomic_files import atomic_write_json
from traj2env_assets.conventions import sorted_json_sha256
from traj2env_assets.layout import Workspace
from traj2env_assets.stages.convert.conversion import read_conversion

GateOutcome = Literal["clean", "blocked", "disabled", "scanner_absent", "scan_error", "not_converted"]
SeverityName = Literal["info", "low", "medium", "high", "critical"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "low": 25, "medium": 50, "high": 75, "critical": 100}
EXEMPT_CHECKS: frozenset[str] = frozenset({"code.verifier_path_reference", "side_channel.model_call"})
MAX_CITATIONS = 3
EXCERPT_CHARS = 120
"""Characters of context kept on each side of a cited match."""
PASSING_OUTCOMES: frozenset[str] = frozenset({"clean", "disabled", "scanner_absent"})


class FindingEvidence(BaseModel):
    """Where a blocking finding matched (atif-scan's citation, secrets masked)."""

    step_id: int | str | None = None
    channel: str
    tool: str | None = None
    excerpt: str


class ScanFinding(BaseModel):
    id: str
    severity: SeverityName | None = None
    blocking: bool = False
    evidence: list[FindingEvidence] = Field(default_factory=list)
    """Up to ``MAX_CITATIONS`` places the finding matched; filled for blocking findings."""


class _GateSettings(TypedDict):
    """The settings a verdict records, whatever its outcome."""

    blocking_severity: SeverityName
    block: list[str]
    allow: list[str]


class ScanVerdict(BaseModel):
    """``<workspace>/scan/<key>/verdict.json``."""

    outcome: GateOutcome
    reason: str | None = None
    blocking_severity: SeverityName = "high"
    block: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)
    findings: list[ScanFinding] = Field(default_factory=list)
    scanner_version: str | None = None
    checks_run: int | None = None
    """How many of the scanner's detectors ran: those that can block under these settings."""
    input_key: str | None = None
    """The converted trajectory and the gate's settings it was scanned with: unchanged → not scanned again."""

    @property
    def allows_downstream(self) -> bool:
        return self.outcome in PASSING_OUTCOMES

    @property
    def blocking_ids(self) -> list[str]:
        return [finding.id for finding in self.findings if finding.blocking]


def is_blocking(
    finding_id: str,
    severity: SeverityName | None,
    blocking_severity: SeverityName,
    block: frozenset[str] | set[str] = frozenset(),
    allow: frozenset[str] | set[str] = frozenset(),
) -> bool:
    if finding_id in block:
        return True
    if finding_id in allow or finding_id in EXEMPT_CHECKS:
        return False
    if severity is None:  # a severity this gate cannot rank could be critical: fail closed
        return True
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[blocking_severity]


def blocking_detectors(
    blocking_severity: SeverityName, block: frozenset[str] | set[str], allow: frozenset[str] | set[str]
) -> list[Any]:
    """The scanner's detectors whose finding would block under these settings."""
    from atif_scan import builtin_detectors

    return [
        detector
        for detector in builtin_detectors()
        if is_blocking(detector.spec.id, _severity_name(detector.spec.severity), blocking_severity, block, allow)
    ]


def _evidence(trace: Any, locators: tuple[Any, ...]) -> list[FindingEvidence]:
    from atif_scan.evidence.cite import cite

    cited: list[FindingEvidence] = []
    for locator in locators[:MAX_CITATIONS]:
        try:
            citation = cite(trace, locator)
        except (IndexError, KeyError, ValueError):  # a locator the trace cannot resolve: cite nothing
            continue
        before = str(citation.get("before", ""))[-EXCERPT_CHARS:]
        after = str(citation.get("after", ""))[:EXCERPT_CHARS]
        cited.append(
            FindingEvidence(
                step_id=citation.get("step_id"),
                channel=str(citation.get("channel")),
                tool=citation.get("tool"),
                excerpt=f"{before}{citation.get('match', '')}{after}",
            )
        )
    return cited


def _severity_name(severity: Any) -> SeverityName | None:
    name = getattr(severity, "name", None) or (str(severity) if severity is not None else None)
    lowered = name.lower() if name else None
    return lowered if lowered in SEVERITY_RANK else None  # type: ignore[return-value]


def scan_trajectory(
    document: dict[str, Any],
    *,
    enabled: bool = True,
    blocking_severity: SeverityName = "high",
    block: list[str] | None = None,
    allow: list[str] | None = None,
    scanner_available: bool | None = None,
) -> ScanVerdict:
    """Scan one ATIF document (as a JSON dict) and decide whether it passes the gate."""
    settings: _GateSettings = {
        "blocking_severity": blocking_severity,
        "block": sorted(block or []),
        "allow": sorted(allow or []),
    }
    if not enabled:
        return ScanVerdict(outcome="disabled", **settings)
    if not (scanner_installed() if scanner_available is None else scanner_available):
        return ScanVerdict(outcome="scanner_absent", **settings)
    from atif_scan import Context, Engine, Status, TraceError, parse_trace

    detectors = blocking_detectors(blocking_severity, set(block or []), set(allow or []))
    try:
        trace = parse_trace(document)
        assessments = Engine(detectors).evaluate(trace, Context())
    except TraceError as exc:
        return ScanVerdict(outcome="scan_error", reason=f"scanner rejected the trace: {exc}", **settings)
    except Exception as exc:  # noqa: BLE001 - any scanner failure must yield scan_error, never clean
        return ScanVerdict(outcome="scan_error", reason=f"{type(exc).__name__}: {exc}", **settings)
    findings: dict[str, ScanFinding] = {}
    for assessment in assessments:
        if assessment.result.status != Status.MATCH:
            continue
        severity = _severity_name(assessment.spec.severity)
        blocking = is_blocking(assessment.spec.id, severity, blocking_severity, set(block or []), set(allow or []))
        evidence = _evidence(trace, assessment.result.evidence) if blocking else []
        findings[assessment.spec.id] = ScanFinding(
            id=assessment.spec.id, severity=severity, blocking=blocking, evidence=evidence
        )
    ordered = sorted(findings.values(), key=lambda f: (-SEVERITY_RANK.get(f.severity or "info", 0), f.id))
    blocked = any(finding.blocking for finding in ordered)
    return ScanVerdict(
        outcome="blocked" if blocked else "clean",
        reason="gate" if blocked else None,
        findings=ordered,
        **settings,
        scanner_version=_scanner_version(),
        checks_run=len(detectors),
    )


def _scanner_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atif-scan")
    except PackageNotFoundError:
        return None


SCAN_GATE_VERSION = "3"
"""Bumped when the gate's own rules change (the default blocking set, evidence), so old verdicts are redone."""


def read_verdict(workspace: Workspace, partition_key: str) -> ScanVerdict | None:
    path = workspace.verdict_file(partition_key)
    if not path.is_file():
        return None
    return ScanVerdict.model_validate_json(path.read_text(encoding="utf-8"))


def scan_partition(
    workspace: Workspace,
    partition_key: str,
    *,
    enabled: bool = True,
    blocking_severity: SeverityName = "high",
    block: list[str] | None = None,
    allow: list[str] | None = None,
) -> ScanVerdict:
    """Scan the partition's converted trajectory and write ``scan/<key>/verdict.json``,
    unless the same trajectory was already scanned the same way."""
    conversion = read_conversion(workspace, partition_key)
    scanner = _scanner_version() if enabled and scanner_installed() else None
    settings = [
        conversion.content_sha256 if conversion else None,
        enabled,
        blocking_severity,
        scanner,
        sorted(block or []),
        sorted(allow or []),
        SCAN_GATE_VERSION,
    ]
    # No mappings in the list, so sorting keys leaves the key what it always was.
    input_key = sorted_json_sha256(settings)
    previous = read_verdict(workspace, partition_key)
    if previous is not None and previous.input_key == input_key:
        return previous
    if conversion is None or conversion.status != "converted":
        verdict = ScanVerdict(
            outcome="not_converted",
            reason=conversion.reason if conversion else "no conversion record",
            blocking_severity=blocking_severity,
            block=sorted(block or []),
            allow=sorted(allow or []),
        )
    else:
        document = json.loads(workspace.trajectory_file(partition_key).read_text(encoding="utf-8"))
        verdict = scan_trajectory(
            document, enabled=enabled, blocking_severity=blocking_severity, block=block, allow=allow
        )
    verdict = verdict.model_copy(update={"input_key": input_key})
    atomic_write_json(workspace.verdict_file(partition_key), verdict)
    return verdict
