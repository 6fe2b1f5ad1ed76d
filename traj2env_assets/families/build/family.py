"""The build family as the lifecycle sees it: mining, the proposal, the task, calibration, controls.

Two modes: ``llm`` when a model is configured (``--llm``; one cached call per candidate
for the contract, stubs and hidden tests) and ``recorded`` otherwise (contract and stub
read from the reference with ``ast``, the session's own passing tests as hidden tests).

Calibration is one probe in the image (``traj2env_assets.mutation``): every hidden test
runs twice on the reference and once on the stub and on the start state; the tests that
pass both reference runs and fail the others are kept (at least ``MIN_KEPT_TESTS``,
else ``weak_tests``). Mutants of the reference's Python code then run against the kept
tests: a kill rate under ``MIN_KILL_RATE`` is ``weak_tests``; output the family cannot
read, or no mutant run, is ``calibration_failed``. The staged task then tracks only the
kept tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from traj2env_assets.families.build.candidates import BuildCandidate, mine_build_candidates
from traj2env_assets.families.build.controls import OnStub, stub_control
from traj2env_assets.families.build.proposal import (
    MAX_PROMPT_CHARS,
    PROMPT,
    BuildProposal,
    project_listing,
    prompt_chars,
)
from traj2env_assets.families.build.surface import stub_files
from traj2env_assets.families.build.task import build_materials, build_task_spec
from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
    CandidateRejected,
    Drop,
    Fact,
    Family,
    MinedCandidate,
    MiningInput,
    ProbeResult,
    ProposalRequest,
    TaskSource,
)
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.mutation import (
    Calibration,
    Mutant,
    calibration_probe,
    generate_mutants,
    kill_rate,
    parse_calibration,
)
from traj2env_assets.quality.effort import EffortWindow
from traj2env_assets.verification.controls import DEFAULT_CONTROLS, Control, NoopControl, ReferenceControl

CALIBRATION_PROBE = "calibration"
REFERENCE, STUB, MODEL_STUB, START = "reference", "stub", "model_stub", "start"
MIN_KEPT_TESTS = 6
MIN_KILL_RATE = 0.6
# At most this many mutants run, spread evenly over the project (deterministic).
MAX_MUTANTS = 120
MUTATION_BUDGET_S = 600
# One pytest run of the hidden tests; generous because calibration shares the machine.
TEST_RUN_TIMEOUT_S = 300
_SURVIVORS_SHOWN = 10


def mutants_of(candidate: BuildCandidate) -> list[Mutant]:
    mutants = generate_mutants(candidate.python_sources())
    if len(mutants) <= MAX_MUTANTS:
        return mutants
    return [mutants[index * len(mutants) // MAX_MUTANTS] for index in range(MAX_MUTANTS)]


def _kept_facts(calibration: Calibration) -> dict[str, Fact]:
    passing = {run.state: len(run.passed) for run in calibration.runs}
    return {
        "tests_found": len(calibration.test_ids),
        "tests_kept": len(calibration.kept),
        "kept_tests": calibration.kept,
        "flaky_tests": calibration.flaky,
        "passing_on_stub": passing.get(STUB, 0),
        "passing_on_start": passing.get(START, 0),
        "calibration_seconds": round(calibration.seconds, 1),
    }


class BuildFamily(Family[BuildCandidate, BuildProposal]):
    name = "build"
    version = "2"
    candidate_model = BuildCandidate
    proposal_schema = BuildProposal
    proposal_optional = True
    reward_kind = "fraction"

    def mine(self, source: MiningInput) -> list[MinedCandidate[BuildCandidate]]:
        return mine_build_candidates(source.record, source.partition_key)

    def proposal_request(self, candidate: BuildCandidate) -> ProposalRequest:
        size = prompt_chars(candidate)
        if size > MAX_PROMPT_CHARS:
            raise CandidateRejected(
                "project_too_large", f"request and project are {size:,} characters (limit {MAX_PROMPT_CHARS:,})"
            )
        return ProposalRequest(
            prompt=PROMPT, values={"request": candidate.request, "project": project_listing(candidate)}
        )

    def task_spec(self, candidate: BuildCandidate, proposal: BuildProposal | None, source: TaskSource) -> TaskSpec:
        return build_task_spec(candidate, build_materials(candidate, proposal), source)

    def calibration_plan(
        self, candidate: BuildCandidate, spec: TaskSpec, proposal: BuildProposal | None
    ) -> CalibrationPlan:
        materials = build_materials(candidate, proposal)
        ast_stubs = stub_files(candidate.python_sources())
        states = {
            REFERENCE: {path: content.decode() for path, content in spec.solution_files.items()},
            STUB: ast_stubs,
            START: {},
        }
        if materials.stubs != ast_stubs:
            states[MODEL_STUB] = materials.stubs
        probe = calibration_probe(
            CALIBRATION_PROBE,
            states=states,
            must_pass=REFERENCE,
            must_fail=[name for name in states if name != REFERENCE],
            tests=materials.test_files,
            targets=materials.test_modules,
            mutants=mutants_of(candidate),
            budget_s=MUTATION_BUDGET_S,
            run_timeout_s=TEST_RUN_TIMEOUT_S,
        )
        return CalibrationPlan(probes=[probe])

    def judge_calibration(self, candidate: BuildCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
        run = results[CALIBRATION_PROBE]
        mutants = mutants_of(candidate)
        calibration = parse_calibration(run, REFERENCE, mutants)
        if calibration is None:
            detail = f"the calibration printed no results (exit {run.exit_code}): {run.output_tail[-1500:]}"
            return CalibrationVerdict(drop=Drop(reason="calibration_failed", detail=detail))
        facts = _kept_facts(calibration)
        if len(calibration.kept) < MIN_KEPT_TESTS:
            detail = (
                f"{len(calibration.kept)} of {len(calibration.test_ids)} tests pass on the reference twice and fail on "
                f"the stub and the start state (at least {MIN_KEPT_TESTS} needed)"
            )
            return CalibrationVerdict(drop=Drop(reason="weak_tests", detail=detail), facts=facts)
        mutation = calibration.mutation
        rate = kill_rate(mutation) if mutation else None
        if mutation is None or rate is None:
            detail = f"no mutant ran ({len(mutants)} mutants of the reference)"
            return CalibrationVerdict(drop=Drop(reason="calibration_failed", detail=detail), facts=facts)
        by_id = {mutant.id: mutant for mutant in mutants}
        facts |= {
            "mutants": len(mutants),
            "mutants_killed": mutation.count("killed") + mutation.count("timeout"),
            "mutants_survived": mutation.count("survived"),
            "mutants_not_run": mutation.count("not_run"),
            "kill_rate": round(rate, 3),
            "surviving_mutants": [
                f"{by_id[i].path}:{by_id[i].line} {by_id[i].description}"
                for i in mutation.survivors()[:_SURVIVORS_SHOWN]
            ],
        }
        if rate < MIN_KILL_RATE:
            detail = f"the kept tests kill {rate:.0%} of the reference's mutants (at least {MIN_KILL_RATE:.0%} needed)"
            return CalibrationVerdict(drop=Drop(reason="weak_tests", detail=detail), facts=facts)
        return CalibrationVerdict(facts=facts)

    def calibrated_spec(self, candidate: BuildCandidate, spec: TaskSpec, verdict: CalibrationVerdict) -> TaskSpec:
        kept = verdict.facts["kept_tests"]
        assert isinstance(kept, list)  # set by judge_calibration whenever it passes
        return spec.model_copy(update={"tests": spec.test_verifier().model_copy(update={"tracked_test_ids": kept})})

    def effort_window(self, candidate: BuildCandidate) -> EffortWindow:
        # The first request builds the project.
        return EffortWindow(window="request", request_index=0)

    def controls(self, candidate: BuildCandidate) -> Sequence[Control]:
        stubs = stub_files(candidate.python_sources())
        tamper = [control for control in DEFAULT_CONTROLS if not isinstance(control, ReferenceControl | NoopControl)]
        return (ReferenceControl(), NoopControl(), stub_control(stubs), *(OnStub(control, stubs) for control in tamper))
