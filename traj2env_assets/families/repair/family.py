"""The repair family as the lifecycle sees it: mining, the task, calibration and its controls.

Calibration runs the recorded check in the image, before the fix, with networking off:
it must fail with the same failing tests as recorded (``check_passes_before_fix``,
``check_fails_differently`` otherwise). A candidate whose check needs a package.json the
replay never saw is ``dependencies_not_installable``; one whose failures give no test
ids a verifier can track is ``check_not_verifiable``.

When the fix also edited tests, the image holds the code before the fix with the
session's final tests, and calibration proves what SWE-bench's FAIL_TO_PASS proves: the
check fails there, and passes once the reference (the fix without its tests) is applied
(``check_on_reference``; else ``check_fails_differently``: the session saw it pass). The
tracked tests are exactly the ones failing before: a recorded failure the final tests no
longer fail on the old code is no evidence and is not tracked, a test the fix added is
tracked when it fails there. A failure neither recorded nor in a test file the fix
changed is ``check_fails_differently``. The instruction then shows that run's output.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from traj2env_assets.checks import image_argv, image_pythonpath, parse_check_result
from traj2env_assets.docker_engine.controls import (
    DEFAULT_CONTROLS,
    LINT_CONTROLS,
    Control,
)
from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
    CandidateRejected,
    Drop,
    Fact,
    Family,
    MinedCandidate,
    MiningInput,
    Probe,
    ProbeResult,
    TaskSource,
)
from traj2env_assets.families.repair.candidates import (
    RepairCandidate,
    mine_repair_candidates,
)
from traj2env_assets.families.repair.instruction import (
    failure_excerpt,
    repair_instruction,
)
from traj2env_assets.families.repair.task import (
    LINT_TOOLS,
    DependenciesNotInstallable,
    UnverifiableCheck,
    repair_task_spec,
    tracked_test_spec,
    verifier_test_ids,
)
from traj2env_assets.harbor.task_spec import WORKSPACE, TaskSpec

CHECK_PROBE = "check"
# The check's failing ids in the image that the task tracks (final tests only).
TRACKED_FACT = "tracked_failing_ids"
REFERENCE_PROBE = "check_on_reference"
CALIBRATION_TIMEOUT_S = 300


class RepairFamily(Family[RepairCandidate, BaseModel]):
    name = "repair"
    version = "4"
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
        # The check runs as recorded: in its directory, with its import paths.
        pythonpath = image_pythonpath(candidate.check, WORKSPACE)
        check = Probe(
            name=CHECK_PROBE,
            script=shlex.join(image_argv(candidate.check)) + " 2>&1",
            workdir=posixpath.join(WORKSPACE, candidate.cwd) if candidate.cwd else WORKSPACE,
            env={"CI": "1", "NO_COLOR": "1", **({"PYTHONPATH": pythonpath} if pythonpath else {})},
            timeout_s=CALIBRATION_TIMEOUT_S,
        )
        if not candidate.test_paths:
            return CalibrationPlan(probes=[check])
        # The same check after the reference is applied over the final tests' project.
        deleted = " ".join(shlex.quote(f"{WORKSPACE}/{path}") for path in candidate.solution_deleted)
        reference = check.model_copy(
            update={
                "name": REFERENCE_PROBE,
                "script": (f"rm -rf -- {deleted} && " if deleted else "") + check.script,
                "files": {f"{WORKSPACE}/{path}": text.encode() for path, text in candidate.solution_files.items()},
            }
        )
        return CalibrationPlan(probes=[check, reference])

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
                detail=result.not_run or "the check in the image ended without an exit code or a runner summary",
            )
            return CalibrationVerdict(drop=drop, facts=facts)
        if candidate.test_paths:
            return _judge_final_tests(candidate, result.failing_ids, results[REFERENCE_PROBE], facts)
        if set(result.failing_ids) != set(candidate.failing_ids):
            expected = ", ".join(sorted(candidate.failing_ids)) or "none"
            got = ", ".join(sorted(result.failing_ids)) or "none"
            drop = Drop(
                reason="check_fails_differently", detail=f"recorded failures: {expected}; in the image: {got}"
            )
            return CalibrationVerdict(drop=drop, facts=facts)
        # A test file that failed to import must fail the same way (not on a file lost in the replay).
        recorded = parse_check_result(candidate.check, candidate.failure_output, candidate.fail_exit_code).import_errors
        differing = sorted(
            f"{path}: {recorded[path]} recorded, {raised} in the image"
            for path, raised in result.import_errors.items() if recorded.get(path, raised) != raised
        )
        if differing:
            drop = Drop(reason="check_fails_differently", detail="; ".join(differing))
            return CalibrationVerdict(drop=drop, facts=facts)
        return CalibrationVerdict(facts=facts)

    def calibrated_spec(self, candidate: RepairCandidate, spec: TaskSpec, verdict: CalibrationVerdict) -> TaskSpec:
        """With the final tests: the tests failing before the fix are tracked, and the
        instruction shows the check as it fails in the image the agent gets."""
        if not candidate.test_paths:
            return spec
        tracked, excerpt = verdict.facts[TRACKED_FACT], verdict.facts["check_output"]
        assert isinstance(tracked, list) and isinstance(excerpt, str)  # set by a passed judge_calibration
        tests = tracked_test_spec(candidate, tracked)
        return spec.model_copy(
            update={"tests": tests, "instruction": repair_instruction(candidate, excerpt=excerpt, failing_ids=tracked)}
        )

    def controls(self, candidate: RepairCandidate) -> Sequence[Control]:
        # A lint or type check has no assertions: its own matrix, no assertion controls.
        return LINT_CONTROLS if candidate.check.tool in LINT_TOOLS else DEFAULT_CONTROLS


def _judge_final_tests(
    candidate: RepairCandidate, failing: list[str], reference_run: ProbeResult, facts: dict[str, Fact]
) -> CalibrationVerdict:
    """The check failed in the image on the code before the fix with the final tests; the
    reference run must pass, and every failure must be one the session's evidence covers."""
    reference = parse_check_result(candidate.check, reference_run.output_tail, reference_run.exit_code)
    if not reference.passed:
        facts = {**facts, "reference_check_output": failure_excerpt(reference_run.output_tail)}
        detail = (
            "with the fix's code and the final tests the check does not pass in the image (the session saw it "
            f"pass); failing: {', '.join(reference.failing_ids) or 'no test ids'}"
        )
        return CalibrationVerdict(drop=Drop(reason="check_fails_differently", detail=detail), facts=facts)
    changed = set(candidate.test_paths)
    files = {test_id: verifier_id.split("::", 1)[0] if verifier_id else None
             for test_id, verifier_id in zip(failing, verifier_test_ids(candidate, failing), strict=True)}
    unexplained = [test_id for test_id in failing if test_id not in candidate.failing_ids and files[test_id] not in changed]
    if unexplained:
        detail = f"fail in the image but neither failed in the recorded run nor are in a test file the fix changed: {', '.join(unexplained)}"
        return CalibrationVerdict(drop=Drop(reason="check_fails_differently", detail=detail), facts=facts)
    untrackable = [test_id for test_id in failing if files[test_id] is None]
    if not failing or untrackable:
        detail = f"no test ids the verifier can track among the failures in the image ({', '.join(untrackable) or 'none'})"
        return CalibrationVerdict(drop=Drop(reason="check_not_verifiable", detail=detail), facts=facts)
    facts = {
        **facts,
        TRACKED_FACT: failing,
        # Recorded failures the final tests no longer fail on the old code: no evidence.
        "untracked_recorded_failures": [test_id for test_id in candidate.failing_ids if test_id not in failing],
    }
    return CalibrationVerdict(facts=facts)
