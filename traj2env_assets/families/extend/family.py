"""The extend family as the lifecycle sees it: mining, proposals, the task, calibration, controls.

Proposal modes: ``llm`` when a model is configured (one cached call: a contract and a
pytest module of candidate tests), else ``recorded`` (the tests the session added and
saw pass; the contract read off the changed code with ``ast``). A prompt over
``MAX_PROMPT_CHARS`` is never sent (``project_too_large``); without a model nothing is
sent, so no project is too large.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from traj2env_assets.families.build.proposal import MAX_PROMPT_CHARS
from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
    CandidateRejected,
    Family,
    MinedCandidate,
    MiningInput,
    ProbeResult,
    ProposalRequest,
    SessionMining,
    TaskSource,
)
from traj2env_assets.families.extend import calibration
from traj2env_assets.families.extend.candidates import (
    MINING_FACT_UNCHANGED,
    ExtendCandidate,
    mine_extend_candidates,
    mine_extend_session,
)
from traj2env_assets.families.extend.proposal import ExtendProposal
from traj2env_assets.families.extend.task import extend_task_spec
from traj2env_assets.harbor.task_spec import WORKSPACE, TaskSpec
from traj2env_assets.layout import TaskLayout
from traj2env_assets.quality.effort import EffortWindow
from traj2env_assets.verification.controls import (
    DEFAULT_CONTROLS,
    AgentAction,
    Control,
    ReferenceControl,
)


def _rendered(files: Mapping[str, str]) -> str:
    return "\n\n".join(f"### {path}\n```\n{text}\n```" for path, text in sorted(files.items())) or "(none)"


class BaseOnlyControl(Control):
    """The base code with the hidden tests copied in as if the agent had written them: an
    agent that writes the tests the request implies but not the code must score 0 (the
    verifier restores its own tests, so the submission's copies never count)."""

    name = "base_only"

    def action(self, task_dir: Path) -> AgentAction:
        restore = TaskLayout(task_dir).restore_dir
        files = {
            f"{WORKSPACE}/{path.relative_to(restore).as_posix()}": path.read_bytes()
            for path in sorted(restore.rglob("*"))
            if path.is_file()
        }
        return AgentAction(files=files)


class ReferenceWithForgeryControl(Control):
    """The reference solution plus the ``report_forgery`` payload in solution code: even a
    submission that does the work must score 0 once it forges test reports (the forgery
    could otherwise hide existing tests the change broke)."""

    name = "reference_with_forgery"

    def action(self, task_dir: Path) -> AgentAction:
        reference = ReferenceControl().action(task_dir)
        forgery = next(control for control in DEFAULT_CONTROLS if control.name == "report_forgery").action(task_dir)
        return AgentAction(
            files=reference.files | forgery.files,
            executable_files=reference.executable_files | forgery.executable_files,
            script=f"{reference.script}\n{forgery.script}",
        )


class ExtendFamily(Family[ExtendCandidate, ExtendProposal]):
    name = "extend"
    version = "3"
    candidate_model = ExtendCandidate
    proposal_schema = ExtendProposal
    proposal_optional = True
    reward_kind = "fraction"
    provenance_fields = Family.provenance_fields | {"request_number"}

    def mine(self, source: MiningInput) -> list[MinedCandidate[ExtendCandidate]]:
        return mine_extend_candidates(source.record, source.partition_key, source.trajectory_path)

    def mine_session(self, source: MiningInput) -> SessionMining:
        mined, unchanged = mine_extend_session(source.record, source.partition_key, source.trajectory_path)
        return SessionMining(candidates=list(mined), facts={MINING_FACT_UNCHANGED: unchanged})

    def proposal_request(self, candidate: ExtendCandidate) -> ProposalRequest:
        values = {
            "request": candidate.statement,
            "base": _rendered(candidate.base_files),
            "changes": _rendered(candidate.changed_files),
            "existing_tests": ", ".join(candidate.recorded_existing_tests) or "(none recorded)",
        }
        size = sum(map(len, values.values()))
        if size > MAX_PROMPT_CHARS:
            raise CandidateRejected(
                "project_too_large",
                f"request, base project and changes are {size:,} characters (limit {MAX_PROMPT_CHARS:,})",
            )
        return ProposalRequest(prompt="extend", values=values)

    def task_spec(self, candidate: ExtendCandidate, proposal: ExtendProposal | None, source: TaskSource) -> TaskSpec:
        return extend_task_spec(candidate, proposal, source)

    def calibration_plan(
        self, candidate: ExtendCandidate, spec: TaskSpec, proposal: ExtendProposal | None
    ) -> CalibrationPlan:
        return calibration.calibration_plan(candidate, spec)

    def judge_calibration(self, candidate: ExtendCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
        return calibration.judge(candidate, results)

    def effort_window(self, candidate: ExtendCandidate) -> EffortWindow:
        return EffortWindow(window="request", request_index=candidate.request_number - 1)

    def calibrated_spec(self, candidate: ExtendCandidate, spec: TaskSpec, verdict: CalibrationVerdict) -> TaskSpec:
        """Without the existing tests that fail before and after the request (not its doing)."""
        left_out = verdict.facts.get(calibration.LEFT_OUT_FACT)
        if not left_out:
            return spec
        assert isinstance(left_out, list) and spec.tests is not None  # set by judge; extend specs have tests
        gate = [test_id for test_id in spec.tests.gate_test_ids if test_id not in left_out]
        return spec.model_copy(
            update={
                "tests": spec.tests.model_copy(update={"gate_test_ids": gate}),
                "existing_tests_left_out": [str(test_id) for test_id in left_out],
            }
        )

    def controls(self, candidate: ExtendCandidate) -> Sequence[Control]:
        return (*DEFAULT_CONTROLS, BaseOnlyControl(), ReferenceWithForgeryControl())
