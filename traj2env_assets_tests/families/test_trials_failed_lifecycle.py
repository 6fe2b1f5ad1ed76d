"""``trials_failed`` from a real matrix (real Dagster graph, real Docker engine): a family
registered in the test makes a task whose test only checks that ``greet`` exists, and a
calibration that only checks that the tests run, so calibration passes. In the trials the
no-op submission scores 1.0 where 0 is expected; the candidate is dropped at the trials
as ``trials_failed`` naming the no-op, in report.json and in its status record, and nothing
is published."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import dagster as dg
import docker
import pytest

from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
    Drop,
    Probe,
    ProbeResult,
    ProposalRequest,
    TaskSource,
)
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.lifecycle.status import (
    CandidateRef,
    candidate_files,
    read_status,
)
from traj2env_assets_tests.families.final_tests_session import write_final_tests_session
from traj2env_assets_tests.families.toy import Greeting, ToyCandidate, ToyFamily
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline, registered_and
from traj2env_assets_tests.llm.fake_provider import FakeProvider

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Passes on the stub the agent starts from: any submission, doing nothing included, earns 1.
EXISTS_TEST = "from greet import greet\n\n\ndef test_greet():\n    assert callable(greet)\n"


class ExistsOnlyFamily(ToyFamily):
    """The toy task with a test the start state already passes, and a calibration that
    never runs the start state (the matrix is what catches it)."""

    name = "exists_only"
    proposal_schema = None

    def proposal_request(self, candidate: ToyCandidate) -> ProposalRequest | None:
        return None

    def task_spec(self, candidate: ToyCandidate, proposal: Greeting | None, source: TaskSource) -> TaskSpec:
        toy = super().task_spec(candidate, Greeting(name="Ada"), source)
        assert toy.tests is not None
        tests = toy.tests.model_copy(update={"test_files": {"tests/test_greet.py": EXISTS_TEST}})
        return toy.model_copy(
            update={
                "project_files": {**toy.project_files, "tests/test_greet.py": EXISTS_TEST.encode()},
                "tests": tests,
            }
        )

    def calibration_plan(self, candidate: ToyCandidate, spec: TaskSpec, proposal: Greeting | None) -> CalibrationPlan:
        return CalibrationPlan(probes=[Probe(name="collects", script="python -m pytest -q --collect-only tests 2>&1")])

    def judge_calibration(self, candidate: ToyCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
        run = results["collects"]
        if run.exit_code != 0:
            return CalibrationVerdict(drop=Drop(reason="calibration_failed", detail=run.output_tail[-500:]))
        return CalibrationVerdict(facts={"collected": True})


def test_a_matrix_the_noop_passes_drops_the_candidate_as_trials_failed_and_publishes_nothing(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    session = write_final_tests_session(tmp_path / "made" / "shop.jsonl")
    client = docker.from_env()
    (tmp_path / "home").mkdir()
    image_tag = None
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        run = ToyPipeline(
            tmp_path,
            [str(session)],
            fake_provider,
            instance,
            family="exists_only",
            families=registered_and(ExistsOnlyFamily()),
        )
        try:
            result, _ = run.run()
            assert result.success
            [candidate] = run.candidates()
            ref = CandidateRef(
                family="exists_only", partition_key=candidate["partition_key"], task_id=candidate["task_id"]
            )
            status = read_status(run.workspace, ref)
            # Only an image this run built is this test's to remove.
            image_tag = status.image.tag if status.image and status.image.built else None

            assert (candidate["status"], candidate["reason"], candidate["dropped_at"]) == (
                "dropped",
                "trials_failed",
                "trials",
            ), candidate
            assert candidate["detail"] == "noop: 1.0 (expected 0)"
            assert candidate["trial_rewards"] == {"reference": 1.0, "noop": 1.0}
            # Calibration passed: the family's probe, and the behaviour gate found no call to record.
            facts = candidate["calibration_facts"]
            assert facts["collected"] is True and facts["gate_absent"] == "no judged test's calls could be recorded"
            assert fake_provider.request_count == 0
            # The status record says the same, with the matrix it ran kept beside it.
            assert status.drop is not None and status.drop.reason == "trials_failed"
            assert status.dropped_at == "trials" and status.reached == "calibration"
            assert status.trials is not None and status.trials.passed is False
            assert status.trials.failures == "noop: 1.0 (expected 0)"
            matrix = json.loads(candidate_files(run.workspace, ref).trials_file.read_text())
            assert {r["control"]: r["reward"] for r in matrix["results"]} == {"reference": 1.0, "noop": 1.0}
            assert candidate.get("published_path") is None
            assert not (run.workspace.root / "trajectory-tasks" / candidate["task_id"]).exists()
        finally:
            if image_tag:
                client.images.remove(image_tag, force=True)
