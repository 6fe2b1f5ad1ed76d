"""The build family's ``calibration_failed`` for real (Dagster graph, Docker engine, the model
faked at the HTTP boundary): the model's hidden tests kill the process that runs them (the
calibration runner, their parent) as they are imported, so the calibration prints no
results. The candidate is dropped at calibration as ``calibration_failed``, the detail
saying the calibration printed nothing and how it exited; no trial runs, nothing is
published."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import docker
import pytest

from traj2env_assets.lifecycle.status import CandidateRef, read_status
from traj2env_assets_tests.families.test_build_llm import (
    ROMANS,
    ROMANS_PROPOSAL,
    ROMANS_TESTS,
)
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HARNESS_KILLER = "import os\nimport signal\n\nos.kill(os.getppid(), signal.SIGKILL)\n\n"


def test_hidden_tests_that_kill_the_calibration_drop_the_build_candidate_as_calibration_failed(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    proposal = {**ROMANS_PROPOSAL, "tests": HARNESS_KILLER + ROMANS_TESTS}
    fake_provider.default = FakeReply(content=json.dumps(proposal))
    client = docker.from_env()
    (tmp_path / "home").mkdir()
    image_tag = None
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        build = ToyPipeline(tmp_path, [ROMANS], fake_provider, instance, family="build")
        try:
            result, _ = build.run()
            assert result.success
            [candidate] = build.candidates()
            ref = CandidateRef(family="build", partition_key=candidate["partition_key"], task_id=candidate["task_id"])
            status = read_status(build.workspace, ref)
            # Only an image this run built is this test's to remove.
            image_tag = status.image.tag if status.image and status.image.built else None

            assert (candidate["status"], candidate["reason"], candidate["dropped_at"]) == (
                "dropped",
                "calibration_failed",
                "calibration",
            ), candidate
            # SIGKILL: the shell reports 128 + 9.
            assert candidate["detail"].startswith("the calibration printed no results (exit 137): "), candidate[
                "detail"
            ]
            assert "TRAJ2ENV-PYTEST-PROBE" not in candidate["detail"]
            assert status.image is not None and status.image.tag, "the image was there to calibrate in"
            assert status.drop is not None and status.drop.reason == "calibration_failed"
            assert status.trials is None and not candidate["trial_rewards"]
            assert candidate.get("published_path") is None
            assert not (build.workspace.root / "trajectory-tasks" / candidate["task_id"]).exists()
        finally:
            if image_tag:
                client.images.remove(image_tag, force=True)
