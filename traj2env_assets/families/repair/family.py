"""The repair family as the lifecycle sees it: mining, the task, calibration and its controls.

Calibration runs the recorded check in the image, before the fix, with networking off:
it must fail with the same failing tests as recorded (``check_passes_before_fix``,
``check_fails_differently`` otherwise). A candidate whose check needs a package.json the
replay never saw is ``dependencies_not_installable``; one whose failures give no test
ids a verifier can track is ``check_not_verifiable``.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from traj2env_assets.checks import parse_check_result
from traj2env_assets.docker_engine.controls import DEFAULT_CONTROLS, LINT_CONTROLS, Control
from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
    CandidateRejected,
    Drop,
    Family,
    MinedCandidate,
    MiningInput,
    Probe,
    ProbeResult,
    TaskSource,
)
from traj2env_assets.families.repair.candidates import RepairCandidate, mine_repair_candidates
from traj2env_assets.families.repair.instruction import failure_excerpt
from traj2env_assets.families.repair.task import (
    LINT_TOOLS,
    DependenciesNotInstallable,
    UnverifiableCheck,
    repair_task_spec,
)
from traj2env_assets.harbor.task_spec import TaskSpec

CHECK_PROBE = "check"
CALIBRATION_TIMEOUT_S = 300


class RepairFamily(Family[RepairCandidate, BaseModel]):
    name = "repair"
    version = "2"
    candidate_model = RepairCandidate
    reward_kind = "binary"

    def mine(self, source: MiningInput) -> list[MinedCandidate[RepairCandidate]]:
        return mine_repair_candidates(source.record, source.partition_key)

    def task_spec(self, candidate: RepairCandidate, proposal: BaseModel | None, source: TaskSource) -> TaskSpec:
        try:
            return repair_task_spec(
                candidate,
                source_trace=source.partition_key,
                source_model=source.source_model,
                org=source.org,
                wheelhouse_dir=Path(source.wheelhouse_dir) if source.wheelhouse_dir else None,
            )
        except DependenciesNotInstallable as exc:
            raise CandidateRejected("dependencies_not_installable", str(exc)) from exc
        except UnverifiableCheck as exc:
            raise CandidateRejected("check_not_verifiable", str(exc)) from exc

    def calibration_plan(
        self, candidate: RepairCandidate, spec: TaskSpec, proposal: BaseModel | None
    ) -> CalibrationPlan:
        return CalibrationPlan(
            probes=[
                Probe(
                    name=CHECK_PROBE,
                    script=shlex.join(candidate.check.argv) + " 2>&1",
                    workdir="/workspace/" + candidate.cwd if candidate.cwd else "/workspace",
                    env={"CI": "1", "NO_COLOR": "1"},
                    timeout_s=CALIBRATION_TIMEOUT_S,
                )
            ]
        )

    def judge_calibration(
        self, candidate: RepairCandidate, results: Mapping[str, ProbeResult]
    ) -> CalibrationVerdict:
        run = results[CHECK_PROBE]
        result = parse_check_result(candidate.check, run.output_tail, run.exit_code)
        facts = {"failing_ids_in_image": result.failing_ids, "check_output": failure_excerpt(run.output_tail)}
        if result.passed:
            drop = Drop(reason="check_passes_before_fix", detail="the check passes in the image before the fix")
            return CalibrationVerdict(drop=drop, facts=facts)
        if result.outcome == "unknown":
            drop = Drop(
                reason="check_fails_differently",
                detail="the check in the image ended without an exit code or a runner summary",
            )
            return CalibrationVerdict(drop=drop, facts=facts)
        if set(result.failing_ids) != set(candidate.failing_ids):
            expected = ", ".join(sorted(candidate.failing_ids)) or "none"
            got = ", ".join(sorted(result.failing_ids)) or "none"
            drop = Drop(
                reason="check_fails_differently", detail=f"recorded failures: {expected}; in the image: {got}"
            )
            return CalibrationVerdict(drop=drop, facts=facts)
        return CalibrationVerdict(facts=facts)

    def controls(self, candidate: RepairCandidate) -> Sequence[Control]:
        # A lint or type check has no assertions: its own matrix, no assertion controls.
        return LINT_CONTROLS if candidate.check.tool in LINT_TOOLS else DEFAULT_CONTROLS
