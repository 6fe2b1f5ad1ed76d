"""A toy family for the tests: the whole of it is this folder plus one registry line.

It finds one candidate per trajectory that left Python files behind, asks the model
for a name, and makes a task: implement ``greet(name)`` so it returns ``Hello, <name>!``
(an argument, so the behaviour gate has calls to perturb).
Calibration checks that the start state fails its test; the matrix is the reference
(1) and a no-op (0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from traj2env_assets.families.contract import (
    CalibrationPlan,
    CalibrationVerdict,
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
from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.sources import safe_key
from traj2env_assets.verification.controls import Control, NoopControl, ReferenceControl

STUB = "def greet(name):\n    raise NotImplementedError\n"


class ToyCandidate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    python_files: list[str]


class Greeting(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str


def _test_file(name: str) -> str:
    return f"from greet import greet\n\n\ndef test_greet():\n    assert greet({name!r}) == {f'Hello, {name}!'!r}\n"


class ToyFamily(Family[ToyCandidate, Greeting]):
    """Greets whoever the model names (a test family)."""

    name = "toy"
    version = "1"
    candidate_model: ClassVar[type[BaseModel]] = ToyCandidate
    proposal_schema: ClassVar[type[BaseModel] | None] = Greeting
    reward_kind = "binary"

    def mine(self, source: MiningInput) -> list[MinedCandidate[ToyCandidate]]:
        python_files = sorted(path for path in source.record.final_files() if path.endswith(".py"))
        if not python_files:
            return []
        return [
            MinedCandidate[ToyCandidate](
                task_id=safe_key(f"{source.partition_key}-toy").lower(),
                candidate=ToyCandidate(python_files=python_files),
                facts={"python_files": python_files},
            )
        ]

    def proposal_request(self, candidate: ToyCandidate) -> ProposalRequest | None:
        return ProposalRequest(prompt="greeting", values={"files": ", ".join(candidate.python_files)})

    def task_spec(self, candidate: ToyCandidate, proposal: Greeting | None, source: TaskSource) -> TaskSpec:
        assert proposal is not None  # the lifecycle only stages candidates whose proposal passed
        test = _test_file(proposal.name)
        return TaskSpec(
            family=self.name,
            task_id=safe_key(f"{source.partition_key}-toy").lower(),
            org=source.org,
            instruction=f"Make `greet(name)` in greet.py return `Hello, <name>!`, e.g. `Hello, {proposal.name}!`.",
            base_image="python",
            project_files={"greet.py": STUB.encode(), "tests/test_greet.py": test.encode()},
            solution_files={"greet.py": b'def greet(name):\n    return f"Hello, {name}!"\n'},
            tests=VerifierSpec(
                runner="pytest",
                tracked_test_ids=["tests/test_greet.py::test_greet"],
                test_files={"tests/test_greet.py": test},
                timeout_sec=120,
            ),
            source_trace=source.partition_key,
            source_model=source.source_model,
            agent_timeout_sec=120,
            verifier_timeout_sec=180,
            build_timeout_sec=300,
        )

    def calibration_plan(self, candidate: ToyCandidate, spec: TaskSpec, proposal: Greeting | None) -> CalibrationPlan:
        return CalibrationPlan(
            probes=[Probe(name="start_state", script="python -m pytest -q tests 2>&1", timeout_s=120)]
        )

    def judge_calibration(self, candidate: ToyCandidate, results: Mapping[str, ProbeResult]) -> CalibrationVerdict:
        run = results["start_state"]
        facts: dict[str, Fact] = {"exit_code": run.exit_code if run.exit_code is not None else -1}
        if run.exit_code == 0:
            return CalibrationVerdict(
                drop=Drop(reason="start_state_passes", detail=run.output_tail[-500:]), facts=facts
            )
        return CalibrationVerdict(facts=facts)

    def controls(self, candidate: ToyCandidate) -> Sequence[Control]:
        return (ReferenceControl(), NoopControl())
