"""Secrets through the whole lifecycle (real Dagster graph, real Docker engine): a family
registered in the test plants keys of the common providers in two candidates of one
session. Planted in the instruction, they are redacted and the task is still published,
with no finding left in it; planted in a file the reference solution needs, the redacted
reference fails (the behaviour gate at calibration, or its trial) and the candidate is dropped as ``secret_in_task``, its detail
naming the file, never the key; planted where no redaction reaches (a line traj2env
generates), the candidate is dropped before any image is built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import dagster as dg
import docker
import pytest
from pydantic import BaseModel, ConfigDict

from traj2env_assets.families.contract import MinedCandidate, MiningInput, ProposalRequest, TaskSource
from traj2env_assets.harbor.secrets import SECRET_IN_TASK, scan_task_dir
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.lifecycle.status import CandidateRef, read_status
from traj2env_assets_tests.families.toy import Greeting, ToyCandidate, ToyFamily
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline, registered_and
from traj2env_assets_tests.harbor.test_secrets import KEYS, PEM
from traj2env_assets_tests.llm.fake_provider import FakeProvider

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AWS_KEY_ID = KEYS["aws_access_key_id"][0]
# The reference refuses to greet without what looks like an AWS key: redacted, it fails.
NEEDS_THE_KEY = (
    f'AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"\n\n\n'
    "def greet(name):\n"
    '    if not AWS_ACCESS_KEY_ID.startswith("AKIA"):\n'
    '        raise RuntimeError("no credentials")\n'
    '    return f"Hello, {name}!"\n'
)


class PlantedCandidate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plant: Literal["instruction", "reference", "dockerfile"]


class PlantedFamily(ToyFamily):
    """The toy task, with keys planted in the instruction or in the reference solution."""

    name = "planted"
    candidate_model = PlantedCandidate
    proposal_schema = None

    # mine and task_spec take planted candidates where the toy family takes its own (the
    # ignores below): the toy calibration and controls they ride on never read the candidate.
    def mine(self, source: MiningInput) -> list[MinedCandidate[PlantedCandidate]]:  # type: ignore[override]
        return [
            MinedCandidate[PlantedCandidate](
                task_id=f"{source.partition_key}-{plant}".lower(), candidate=PlantedCandidate(plant=plant)
            )
            for plant in ("instruction", "reference", "dockerfile")
        ]

    def proposal_request(self, candidate: BaseModel) -> ProposalRequest | None:
        return None

    def task_spec(self, candidate: PlantedCandidate, proposal: BaseModel | None, source: TaskSource) -> TaskSpec:  # type: ignore[override]
        toy = super().task_spec(ToyCandidate(python_files=[]), Greeting(name="Ada"), source)
        task_id = f"{source.partition_key}-{candidate.plant}".lower()
        if candidate.plant == "instruction":
            pasted = "\n".join(f"- {provider}: {key}" for provider, (key, _) in sorted(KEYS.items()))
            instruction = f"{toy.instruction}\n\nThe keys from my shell, in case:\n{pasted}\n\n{PEM}"
            return toy.model_copy(update={"task_id": task_id, "instruction": instruction})
        if candidate.plant == "reference":
            return toy.model_copy(update={"task_id": task_id, "solution_files": {"greet.py": NEEDS_THE_KEY.encode()}})
        # A short password in a line traj2env generates: nothing a redaction can edit.
        return toy.model_copy(update={"task_id": task_id, "dependency_lines": ['ENV DB_PASSWORD="abc1"']})


def test_keys_in_the_instruction_are_redacted_and_published_and_keys_the_reference_needs_drop_it(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    client = docker.from_env()
    (tmp_path / "home").mkdir()
    tags: set[str] = set()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        run = ToyPipeline(
            tmp_path,
            ["claude-code/python-pytest-fix.jsonl"],
            fake_provider,
            instance,
            family="planted",
            families=registered_and(PlantedFamily()),
        )
        try:
            result, _ = run.run()
            assert result.success
            by_plant = {c["task_id"].rsplit("-", 1)[1]: c for c in run.candidates()}
            for candidate in by_plant.values():
                status = read_status(
                    run.workspace,
                    CandidateRef(
                        family="planted", partition_key=candidate["partition_key"], task_id=candidate["task_id"]
                    ),
                )
                if status.image and status.image.tag:
                    tags.add(status.image.tag)

            published = by_plant["instruction"]
            assert published["status"] == "published", published
            assert published["trial_rewards"] == {"reference": 1.0, "noop": 0.0}
            detectors = {finding.split(" (", 1)[1].rstrip(")") for finding in published["facts"]["redactions"]}
            assert detectors >= {detector for _, detector in KEYS.values()} | {"Private Key"}
            assert all(finding.startswith("instruction.md:") for finding in published["facts"]["redactions"])
            task_dir = Path(published["published_path"])
            assert scan_task_dir(task_dir) == []
            instruction = (task_dir / "instruction.md").read_text()
            assert "[REDACTED-SECRET-" in instruction and "Hello, Ada!" in instruction
            every_file = "".join(p.read_text(errors="replace") for p in task_dir.rglob("*") if p.is_file())
            assert not any(key in every_file for key, _ in KEYS.values()) and "PRIVATE KEY" not in every_file

            dropped = by_plant["reference"]
            # The behaviour gate (calibration) or the trial matrix runs the redacted reference.
            assert (dropped["status"], dropped["reason"]) == ("dropped", SECRET_IN_TASK), dropped
            assert dropped["dropped_at"] in ("calibration", "trials")
            assert dropped["detail"].startswith("fails with secrets redacted from solution/files/greet.py; ")
            assert dropped["facts"]["redactions"] == ["solution/files/greet.py:1 (AWS Access Key)"]
            unreachable = by_plant["dockerfile"]
            assert (unreachable["reason"], unreachable["dropped_at"]) == (SECRET_IN_TASK, "images")
            assert unreachable["detail"] == (
                "a secret detector still fires after redaction: environment/Dockerfile:4 (Secret Keyword)"
            )
            report_text = json.dumps(run.report())
            assert AWS_KEY_ID not in report_text and KEYS["github"][0] not in report_text
            assert not (run.workspace.root / "trajectory-tasks" / dropped["task_id"]).exists()
        finally:
            for tag in tags:
                client.images.remove(tag, force=True)
