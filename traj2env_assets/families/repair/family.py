"""The repair family as the lifecycle sees it: mining, the task, calibration and its controls.

Calibration runs the recorded check in the image, before the fix, with networking off:
it must fail with the same failing tests as recorded (``check_passes_before_fix``,
``check_fails_differently`` otherwise). A candidate whose check needs a package.json the
replay never saw is ``dependencies_not_installable``; one whose failures give no test
ids a verifier can track is ``check_not_verifiable``.

Then the same check runs once the reference is applied (``check_on_reference``): it must
pass, as the session saw it pass and as the verifier's reference trial will require
(``check_fails_differently`` otherwise: files the replay lost, a system library the image
lacks). A failure masked before the fix (a test file that failed to import) shows here.

When the fix also edited tests, the image holds the code before the fix with the
session's final tests, and calibration proves what SWE-bench's FAIL_TO_PASS proves: the
check fails there, and passes once the reference (the fix without its tests) is applied.
The tracked tests are exactly the ones failing before: a recorded failure the final tests no
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
    NODE_LINT_TOOLS,
    DependenciesNotInstallable,
    UnverifiableCheck,
    diagnostic_ids,
    lint_tool,
    repair_task_spec,
    tracked_test_spec,
    verifier_test_ids,
)
from traj2env_assets.harbor.task_spec import IMPORTS_KEPT_TOOLS, WORKSPACE, TaskSpec
from traj2env_assets.quality.effort import EffortWindow
from traj2env_assets.verification.controls import (
    BUILD_CONTROLS,
    DEFAULT_CONTROLS,
    LINT_CONTROLS,
    Control,
)

CHECK_PROBE = "check"
# The check's failing ids in the image that the task tracks (final tests only).
TRACKED_FACT = "tracked_failing_ids"
REFERENCE_PROBE = "check_on_reference"
# Tests the check fails in the image with the reference too: the verifier deselects them.
DESELECTED_FACT = "deselected_failing_on_reference"
CALIBRATION_TIMEOUT_S = 300


class RepairFamily(Family[RepairCandidate, BaseModel]):
    name = "repair"
    version = "7"
    candidate_model = RepairCandidate
    reward_kind = "binary"
    # The recorded runs of the check: the same failure logged twice is the same work.
    provenance_fields = Family.provenance_fields | {
        "fail_command_index",
        "pass_command_index",
        "fail_exit_code",
        "failure_output",
    }

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
        # A Node lint check runs with the verifier's tool (Debian's, not whatever `npx` finds).
        node_lint = lint_tool(candidate) in NODE_LINT_TOOLS
        argv = spec.tests.check_command if node_lint and spec.tests else image_argv(candidate.check)
        check = Probe(
            name=CHECK_PROBE,
            script=shlex.join(argv) + " 2>&1",
            workdir=posixpath.join(WORKSPACE, candidate.cwd) if candidate.cwd else WORKSPACE,
            env={"CI": "1", "NO_COLOR": "1", **({"PYTHONPATH": pythonpath} if pythonpath else {})},
            timeout_s=CALIBRATION_TIMEOUT_S,
        )
        # The same check after the reference is applied (over the final tests' project when the fix changed tests).
        deleted = " ".join(shlex.quote(f"{WORKSPACE}/{path}") for path in candidate.solution_deleted)
        reference = check.model_copy(
            update={
                "name": REFERENCE_PROBE,
                "script": (f"rm -rf -- {deleted} && " if deleted else "") + check.script,
                "files": {f"{WORKSPACE}/{path}": text.encode() for path, text in candidate.solution_files.items()},
            }
        )
        return CalibrationPlan(probes=[check, reference])

    def judge_calibration(self, candidate: RepairCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
        run = results[CHECK_PROBE]
        result = parse_check_result(candidate.check, run.output_tail, run.exit_code)
        facts: dict[str, Fact] = {
            "failing_ids_in_image": result.failing_ids,
            "check_output": failure_excerpt(run.output_tail),
        }
        if result.passed:
            drop = Drop(reason="check_passes_before_fix", detail="the check passes in the image before the fix")
            return CalibrationVerdict(drop=drop, facts=facts)
        if result.outcome == "unknown":
            drop = Drop(
                reason="check_fails_differently",
                detail=result.not_run or "the check in the image ended without an exit code or a runner summary",
            )
            return CalibrationVerdict(drop=drop, facts=facts)
        on_reference = _reference_fails(candidate, results[REFERENCE_PROBE], facts)
        if candidate.test_paths:
            return on_reference or _judge_final_tests(candidate, result.failing_ids, facts)
        # Tests the image fails with the reference too are ungraded: they do not make the
        # failure before the fix differ from the recorded one.
        ungraded = on_reference and _without_tests_the_image_fails(candidate, results[REFERENCE_PROBE], facts)
        broken = ungraded.facts[DESELECTED_FACT] if ungraded else []
        assert isinstance(broken, list)  # set by _without_tests_the_image_fails
        recorded_ids, image_ids = candidate.failing_ids, result.failing_ids
        if lint_tool(candidate) is not None:  # eslint names files by absolute path
            recorded_ids, image_ids = diagnostic_ids(candidate, recorded_ids), diagnostic_ids(candidate, image_ids)
        if set(image_ids) - set(broken) != set(recorded_ids):
            expected = ", ".join(sorted(recorded_ids)) or "none"
            got = ", ".join(sorted(image_ids)) or "none"
            drop = Drop(reason="check_fails_differently", detail=f"recorded failures: {expected}; in the image: {got}")
            return CalibrationVerdict(drop=drop, facts=facts)
        # A test file that failed to import must fail the same way (not on a file lost in the replay).
        recorded = parse_check_result(candidate.check, candidate.failure_output, candidate.fail_exit_code).import_errors
        differing = sorted(
            f"{path}: {recorded[path]} recorded, {raised} in the image"
            for path, raised in result.import_errors.items()
            if recorded.get(path, raised) != raised
        )
        if differing:
            drop = Drop(reason="check_fails_differently", detail="; ".join(differing))
            return CalibrationVerdict(drop=drop, facts=facts)
        if on_reference is None:
            return CalibrationVerdict(facts=facts)
        return ungraded or on_reference

    def calibrated_spec(self, candidate: RepairCandidate, spec: TaskSpec, verdict: CalibrationVerdict) -> TaskSpec:
        """With the final tests: the tests failing before the fix are tracked, and the
        instruction shows the check as it fails in the image the agent gets. Without them,
        tests the image fails with the reference too are deselected and named as ungraded."""
        if not candidate.test_paths:
            deselected = verdict.facts.get(DESELECTED_FACT)
            if not deselected:
                return spec
            tracked = verdict.facts[TRACKED_FACT]
            assert isinstance(tracked, list) and isinstance(deselected, list)  # set by judge_calibration
            verifier_ids = [test_id for test_id in verifier_test_ids(candidate, deselected) if test_id]
            tests = tracked_test_spec(candidate, tracked).model_copy(update={"deselected_test_ids": verifier_ids})
            instruction = repair_instruction(candidate, failing_ids=tracked, ungraded_ids=deselected)
            return spec.model_copy(update={"tests": tests, "instruction": instruction})
        tracked, excerpt = verdict.facts[TRACKED_FACT], verdict.facts["check_output"]
        assert isinstance(tracked, list) and isinstance(excerpt, str)  # set by a passed judge_calibration
        tests = tracked_test_spec(candidate, tracked)
        return spec.model_copy(
            update={"tests": tests, "instruction": repair_instruction(candidate, excerpt=excerpt, failing_ids=tracked)}
        )

    def effort_window(self, candidate: RepairCandidate) -> EffortWindow:
        return EffortWindow(
            window="fail_to_pass", first_command=candidate.fail_command_index, last_command=candidate.pass_command_index
        )

    def controls(self, candidate: RepairCandidate) -> Sequence[Control]:
        # A lint, type or build check has no assertions: its own matrix, no assertion controls.
        tool = lint_tool(candidate)
        if tool is None:
            return DEFAULT_CONTROLS
        return BUILD_CONTROLS if tool in IMPORTS_KEPT_TOOLS else LINT_CONTROLS


def _reference_fails(
    candidate: RepairCandidate, reference_run: ProbeResult, facts: dict[str, Fact]
) -> CalibrationVerdict | None:
    """The drop when the check does not pass in the image with the reference applied."""
    reference = parse_check_result(candidate.check, reference_run.output_tail, reference_run.exit_code)
    if reference.passed:
        return None
    facts = {**facts, "reference_check_output": failure_excerpt(reference_run.output_tail)}
    tests = " and the final tests" if candidate.test_paths else ""
    detail = (
        f"with the fix's code{tests} the check does not pass in the image (the session saw it "
        f"pass); failing: {', '.join(reference.failing_ids) or 'no test ids'}"
    )
    return CalibrationVerdict(drop=Drop(reason="check_fails_differently", detail=detail), facts=facts)


def _without_tests_the_image_fails(
    candidate: RepairCandidate, reference_run: ProbeResult, facts: dict[str, Fact]
) -> CalibrationVerdict | None:
    """The candidate without the tests the check fails in the image with the reference
    applied, or None when that leaves no sound task.

    The session saw the check pass with the fix, so such a test fails on something the fix
    does not touch (a data file the replay never saw, a system library the image lacks): no
    submission could pass it. It is deselected when it is a test (not a file that failed to
    import), none of them is a recorded failure, and a recorded failing unit is left that
    holds none of them: those units are tracked.
    """
    reference = parse_check_result(candidate.check, reference_run.output_tail, reference_run.exit_code)
    broken = reference.failing_ids
    if reference.outcome != "failed" or not broken or any("::" not in test_id for test_id in broken):
        return None
    if set(broken) & set(candidate.failing_ids) or not all(verifier_test_ids(candidate, broken)):
        return None
    tracked = [
        unit
        for unit in candidate.failing_ids
        if not any(test_id == unit or test_id.startswith(unit + "::") for test_id in broken)
    ]
    if not tracked:
        return None
    return CalibrationVerdict(
        facts={
            **facts,
            TRACKED_FACT: tracked,
            DESELECTED_FACT: broken,
            "untracked_recorded_failures": [unit for unit in candidate.failing_ids if unit not in tracked],
            "reference_check_output": failure_excerpt(reference_run.output_tail),
        }
    )


def _judge_final_tests(candidate: RepairCandidate, failing: list[str], facts: dict[str, Fact]) -> CalibrationVerdict:
    """The check failed in the image on the code before the fix with the final tests and
    passed with the reference; every failure must be one the session's evidence covers."""
    changed = set(candidate.test_paths)
    files = {
        test_id: verifier_id.split("::", 1)[0] if verifier_id else None
        for test_id, verifier_id in zip(failing, verifier_test_ids(candidate, failing), strict=True)
    }
    unexplained = [
        test_id for test_id in failing if test_id not in candidate.failing_ids and files[test_id] not in changed
    ]
    if unexplained:
        detail = (
            "fail in the image but neither failed in the recorded run nor are in a test file the fix changed: "
            + ", ".join(unexplained)
        )
        return CalibrationVerdict(drop=Drop(reason="check_fails_differently", detail=detail), facts=facts)
    untrackable = [test_id for test_id in failing if files[test_id] is None]
    if not failing or untrackable:
        detail = (
            f"no test ids the verifier can track among the failures in the image ({', '.join(untrackable) or 'none'})"
        )
        return CalibrationVerdict(drop=Drop(reason="check_not_verifiable", detail=detail), facts=facts)
    facts = {
        **facts,
        TRACKED_FACT: failing,
        # Recorded failures the final tests no longer fail on the old code: no evidence.
        "untracked_recorded_failures": [test_id for test_id in candidate.failing_ids if test_id not in failing],
    }
    return CalibrationVerdict(facts=facts)
