"""The qa family end to end on the bundled sample session: the real Dagster graph, the real
Docker engine and ``huggingface_hub``; the model is the local fake provider and the hub
the local fake (``fake_hub``), both on 127.0.0.1.

Without a model the candidate stops at ``llm_not_configured``; with one it is proposed,
pinned (the commit of 2026-02-20, not the later one), built, calibrated, passes the
whole qa matrix and is published; Harbor's oracle scores the published task 1.0, nop 0.0.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import docker
import pytest

from traj2env_assets.config import RunConfigFile, RunSettings
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.families.qa.controls import QA_CONTROLS
from traj2env_assets.lifecycle.status import CandidateRef, read_status
from traj2env_assets_tests.families.qa.fake_hub import FakeHub, sample_hub
from traj2env_assets_tests.families.qa.sample import sample_reply
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.harbor_jobs import rewards_of, run_harbor_agents
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply
from traj2env_assets_tests.llm.helpers import PRICED_MODEL

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SAMPLE = "atif/python-hf-dataset-stats.json"
SAMPLE_COMMIT = "278a54087c62f66549faa2f067ce59855d594549"  # examples/hub: the commit of 2026-02-20


class QaPipeline(ToyPipeline):
    """The toy family's test pipeline, run with the registered qa family instead."""

    def pipeline(self, **options: Any) -> PipelineResource:
        options = {"families": ["qa"], "llm": PRICED_MODEL, "jobs": 2, **options}
        config = RunConfigFile.model_validate({"source": {"path": str(self.source)}, "pipeline": {"options": options}})
        return PipelineResource.from_settings(RunSettings.resolve(config, self.workspace.root))

    def candidates(self) -> list[dict[str, Any]]:
        return [c for c in self.report()["candidates"] if c["family"] == "qa"]


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    hub = sample_hub().start()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HF_ENDPOINT", hub.endpoint)
            yield hub
    finally:
        hub.stop()


@pytest.fixture(scope="module")
def qa_run(tmp_path_factory: pytest.TempPathFactory, hub: FakeHub) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("qa-e2e")
    provider = FakeProvider()
    provider.default = FakeReply(content=sample_reply())
    provider.start()
    session = uuid.uuid4().hex
    client = docker.from_env()
    image_tag = None
    (root / "home").mkdir()
    try:
        with pytest.MonkeyPatch.context() as patch, dg.instance_for_test(temp_dir=str(root / "home")) as instance:
            patch.setenv("OPENAI_API_KEY", "sk-fake")  # LiteLLM's OpenAI route needs a key; the fake ignores it
            qa = QaPipeline(root, [SAMPLE], provider, instance, container_labels={"traj2env.test_session": session})
            without_model, _ = qa.run(llm=None)
            unmodelled = qa.candidates()
            hub.requests.clear()
            with_model, checks = qa.run()
            [candidate] = qa.candidates()
            ref = CandidateRef(family="qa", partition_key=qa.keys[0], task_id=candidate["task_id"])
            status = read_status(qa.workspace, ref)
            image_tag = status.image.tag if status.image else None
            yield {
                "root": root,
                "qa": qa,
                "provider": provider,
                "hub_requests": [
                    # The Hub client also fetches its registry of agent harnesses, once.
                    request
                    for request in hub.requests
                    if request != "GET /api/agent-harnesses"
                ],
                "without_model": (without_model.success, unmodelled),
                "candidate": candidate,
                "success": with_model.success,
                "checks": checks,
                "status": status,
            }
    finally:
        provider.stop()
        if image_tag:
            # Another session's engine fixture may already have swept it (they share the engine).
            with contextlib.suppress(docker.errors.ImageNotFound):
                client.images.remove(image_tag, force=True)


def test_without_a_model_the_qa_candidate_is_recorded_as_llm_not_configured(qa_run: dict[str, Any]) -> None:
    success, candidates = qa_run["without_model"]
    assert success
    assert [(c["status"], c["reason"]) for c in candidates] == [("dropped", "llm_not_configured")]


def test_fake_provider_and_fake_hub_publish_the_sample_as_a_qa_task(qa_run: dict[str, Any]) -> None:
    assert qa_run["success"]
    candidate = qa_run["candidate"]
    assert candidate["status"] == "published", candidate
    assert len(candidate["task_id"]) == 12
    assert qa_run["provider"].request_count == 1
    expected = {control.name: control.expected_reward for control in QA_CONTROLS}
    assert candidate["trial_rewards"] == expected
    assert all(evaluation.passed for evaluation in qa_run["checks"].get_asset_check_evaluations())
    # Pinned through the hub client: the commit list, then the file at the commit of 2026-02-20.
    assert qa_run["hub_requests"][0] == "GET /api/datasets/traj2env-samples/city-temperatures/commits/main"
    assert any(SAMPLE_COMMIT in request for request in qa_run["hub_requests"][1:])
    task = Path(candidate["published_path"])
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert "sha256sum --check" in dockerfile and "train.parquet" in dockerfile
    assert (task / "environment" / "data" / "train.parquet").is_file()
    assert SAMPLE_COMMIT[:12] in (task / "instruction.md").read_text()
    assert not (task / "environment" / "workspace").exists()
    toml = (task / "task.toml").read_text()
    assert 'artifacts = ["/workdir/answer.txt"]' in toml and 'workdir = "/workdir"' in toml
    gold = json.loads((task / "tests" / "traj2env" / "answer.json").read_text())
    assert gold == {"kind": "number", "answer": "4.325"}
    assert qa_run["status"].calibration.passed


def test_harbor_oracle_scores_one_and_nop_zero_on_the_published_qa_task(qa_run: dict[str, Any]) -> None:
    dataset = Path(qa_run["candidate"]["published_path"]).parent
    # Harbor builds the task's environment from its own context (wheels and data included).
    results = run_harbor_agents(dataset, ["oracle", "nop"], qa_run["root"] / "jobs")
    assert list(rewards_of(results["oracle"]).values()) == [1.0]
    assert list(rewards_of(results["nop"]).values()) == [0.0]
