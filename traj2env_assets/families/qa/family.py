"""The qa family as the lifecycle sees it: a fact computed from Hugging Face dataset files
becomes a grounded question with a typed exact grader (reward 1/0).

- mining (``candidates``): one tool output reading hub dataset files, dated with a timezone;
- proposal: one cached model call (``prompts/propose.md``, schema ``QaProposal``); without
  a model every candidate stops at ``llm_not_configured``;
- task spec (image stage): grounding (``proposal``), pinning every input to the dataset
  commit current at the trajectory's moment (``pinning``), the analysis wheels
  (``wheels``; ``image_build_failed`` when they cannot be downloaded) and the task (``task``);
- calibration: the reference program runs in the image, networking off, and the task's
  grader must give its answer file 1 (``reference_failed``: the program failed;
  ``reference_answer_mismatch``: its answer is not the gold one, e.g. the data at the
  pinned commit differs from what the trajectory saw);
- trials: ``controls.QA_CONTROLS``; only ``/workdir/answer.txt`` crosses into the verifier.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources

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
    ProposalRequest,
    TaskSource,
)
from traj2env_assets.families.qa.candidates import QaCandidate, dated, mine_qa_candidates
from traj2env_assets.families.qa.controls import QA_CONTROLS
from traj2env_assets.families.qa.pinning import pin_inputs
from traj2env_assets.families.qa.proposal import QaProposal, ground
from traj2env_assets.families.qa.task import qa_task_spec
from traj2env_assets.families.qa.wheels import WheelsUnavailable, analysis_wheels
from traj2env_assets.harbor.scripts import REFERENCE_PROGRAM
from traj2env_assets.harbor.task_spec import ANSWER_FILE, ANSWER_WORKDIR, TaskSpec
from traj2env_assets.harbor.writer import ANSWER_GRADER
from traj2env_assets.verification.controls import Control
from traj2env_assets.verification.trial import QA_SUBMISSION

REFERENCE_PROBE = "reference"
PROBE_DIR = "/tmp/traj2env-calibration"
CALIBRATION_TIMEOUT_S = 300


class QaFamily(Family[QaCandidate, QaProposal]):
    name = "qa"
    version = "1"
    candidate_model = QaCandidate
    proposal_schema = QaProposal
    reward_kind = "binary"
    # ``context`` is the rendered session up to the command: the session, not the fact.
    provenance_fields = Family.provenance_fields | {"command_index", "context"}
    submission_path = QA_SUBMISSION

    def mine(self, source: MiningInput) -> list[MinedCandidate[QaCandidate]]:
        return mine_qa_candidates(source.record, source.partition_key)

    def proposal_request(self, candidate: QaCandidate) -> ProposalRequest:
        scripts = "\n\n".join(f"### {path}\n```\n{text}\n```" for path, text in candidate.scripts.items())
        return ProposalRequest(
            prompt="propose",
            values={
                "trajectory": candidate.context,
                "command": candidate.command,
                "output": candidate.output,
                "scripts": scripts or "(none)",
                "references": ", ".join(candidate.hub_references) or "(none spotted)",
            },
        )

    def task_spec(self, candidate: QaCandidate, proposal: QaProposal | None, source: TaskSource) -> TaskSpec:
        assert proposal is not None  # the lifecycle stages only candidates whose proposal passed
        question = ground(candidate.output, proposal)
        moment = dated(candidate.timestamp)
        assert moment is not None and moment.tzinfo is not None  # mining dropped undated candidates
        if source.cache_root is None:
            raise CandidateRejected("input_not_resolvable", "no cache directory to download the inputs into")
        pinned = pin_inputs(proposal.inputs, moment, source.cache_root)
        try:
            wheels = analysis_wheels(source.cache_root)
        except WheelsUnavailable as exc:
            raise CandidateRejected("image_build_failed", f"the analysis wheels: {exc}") from exc
        return qa_task_spec(
            candidate.task_id,
            question,
            proposal.reference_solution,
            pinned,
            wheels,
            source_trace=source.partition_key,
            source_model=source.source_model,
            org=source.org,
        )

    def calibration_plan(self, candidate: QaCandidate, spec: TaskSpec, proposal: QaProposal | None) -> CalibrationPlan:
        """The reference program on the pinned data, graded in the image by the task's own grader."""
        assert spec.answer is not None
        gold = json.dumps({"kind": spec.answer.kind, "answer": spec.answer.gold}).encode()
        grader = (resources.files("traj2env_assets.verification") / "verifier_files" / ANSWER_GRADER).read_bytes()
        script = (
            f"python3 {PROBE_DIR}/reference.py > {ANSWER_FILE} 2> {PROBE_DIR}/errors "
            f"|| {{ cat {PROBE_DIR}/errors; exit 1; }}\n"
            f"mkdir -p {PROBE_DIR}/verdict && python3 -I -S {PROBE_DIR}/{ANSWER_GRADER} {ANSWER_FILE} "
            f"{PROBE_DIR}/gold.json {PROBE_DIR}/verdict || exit 1\n"
            f"head -c 300 {ANSWER_FILE}; echo; cat {PROBE_DIR}/verdict/verdict.json\n"
        )
        files = {
            f"{PROBE_DIR}/reference.py": spec.solution_files[REFERENCE_PROGRAM],
            f"{PROBE_DIR}/{ANSWER_GRADER}": grader,
            f"{PROBE_DIR}/gold.json": gold,
        }
        probe = Probe(
            name=REFERENCE_PROBE, script=script, workdir=ANSWER_WORKDIR, files=files, timeout_s=CALIBRATION_TIMEOUT_S
        )
        return CalibrationPlan(probes=[probe])

    def judge_calibration(self, candidate: QaCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
        run = results[REFERENCE_PROBE]
        lines = run.output_tail.strip().splitlines()
        facts: dict[str, Fact] = {"reference_output": run.output_tail[-500:]}
        if run.exit_code != 0 or run.timed_out or not lines:
            return CalibrationVerdict(drop=Drop(reason="reference_failed", detail=run.output_tail[-2000:]), facts=facts)
        try:
            verdict = json.loads(lines[-1])
        except ValueError:
            verdict = {}
        if verdict.get("reward") != 1:
            detail = f"the reference answered {lines[0][:200]!r}: {verdict.get('reason', 'no verdict')}"
            return CalibrationVerdict(drop=Drop(reason="reference_answer_mismatch", detail=detail), facts=facts)
        return CalibrationVerdict(facts=facts)

    def controls(self, candidate: QaCandidate) -> Sequence[Control]:
        return QA_CONTROLS
