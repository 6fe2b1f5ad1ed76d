"""A new family is one folder and one registry line: the toy family (``toy/``), handed to the
definitions beside the registered ones, goes through every stage against the real Docker engine and a real Dagster
instance, with the model faked at the HTTP boundary (a local OpenAI-compatible server).

``propose_only`` stops after the proposal with the cache filled: no container is created
and nothing is built; the next run makes no model call and builds, calibrates, trials
and publishes; a third run does no Docker work at all.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from pathlib import Path

import dagster as dg
import docker
import pandas as pd
import pytest

from traj2env_assets.docker_engine.base_images import PYTHON_SLIM
from traj2env_assets.docker_engine.labels import ROLE_LABEL
from traj2env_assets.lifecycle.status import CandidateRef, read_status
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply

pytestmark = [pytest.mark.docker, pytest.mark.slow]

STAGE_ASSETS = ("candidates/toy", "proposals", "images", "calibration", "trials", "publish")
SESSION_LABEL = "traj2env.test_session"
MARKER_ROLE = "marker"


class ContainerCreations:
    """The roles of the containers created with this session's label, read off the engine's
    live event stream from the start. Not a query of past events (``since``): the engine
    keeps only its latest events, and under load (other workers' trials) this test's were
    gone by the time it asked."""

    def __init__(self, client: docker.DockerClient, session: str) -> None:
        self._client, self._session = client, session
        self._stream = client.events(
            decode=True, filters={"type": "container", "event": "create", "label": f"{SESSION_LABEL}={session}"}
        )
        self._roles: list[str] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="container-creations", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for event in self._stream:
            with self._lock:
                self._roles.append(event["Actor"]["Attributes"].get(ROLE_LABEL, "?"))

    def take(self) -> list[str]:
        """The roles created since the last call. A marker container is created last, and
        the stream delivers in order: once the marker is read, every earlier creation is."""
        marker = self._client.containers.create(
            PYTHON_SLIM.name, ["true"], labels={SESSION_LABEL: self._session, ROLE_LABEL: MARKER_ROLE}
        )
        marker.remove(force=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with self._lock:
                if MARKER_ROLE in self._roles:
                    taken = self._roles[: self._roles.index(MARKER_ROLE)]
                    del self._roles[: len(taken) + 1]
                    return taken
            time.sleep(0.05)
        raise AssertionError("the engine's event stream never delivered the marker container's creation")

    def close(self) -> None:
        self._stream.close()


def _funnel_csv(toy: ToyPipeline) -> dict[str, int]:
    funnel = pd.read_csv(toy.workspace.root / "trajectory-tasks" / "funnel.csv", index_col="stage")
    assert list(funnel.columns) == ["toy"]
    return funnel["toy"].to_dict()


def _docker_steps(result: dg.ExecuteInProcessResult) -> list[str]:
    return sorted(
        {
            event.step_key
            for event in result.all_events
            if event.is_step_start and event.step_key and "_candidate[" in event.step_key
        }
    )


def test_fake_provider_toy_family_goes_through_every_stage_and_propose_only_stops_before_docker(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    session = uuid.uuid4().hex
    # A name no earlier test run used: its task image cannot exist yet.
    fake_provider.default = FakeReply(content=json.dumps({"name": f"Ada {session[:8]}"}))
    client = docker.from_env()
    (tmp_path / "home").mkdir()
    image_tag = None
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        toy = ToyPipeline(
            tmp_path,
            ["claude-code/python-pytest-fix.jsonl"],
            fake_provider,
            instance,
            container_labels={SESSION_LABEL: session},
        )
        [key] = toy.keys
        creations = ContainerCreations(client, session)
        try:
            proposed, _ = toy.run(propose_only=True)
            assert proposed.success
            [candidate] = toy.candidates()
            assert candidate["status"] == "passed_proposals" and fake_provider.request_count == 1
            assert _funnel_csv(toy) == {
                "inputs": 1,
                "converted": 1,
                "passed_gate": 1,
                "candidates": 1,
                "distinct": 1,
                "built": 0,
                "calibrated": 0,
                "tried": 0,
                "published": 0,
                "accepted": 0,
                "solved_in_rollouts": 0,
            }
            assert creations.take() == []
            assert _docker_steps(proposed) == []
            ref = CandidateRef(family="toy", partition_key=key, task_id=candidate["task_id"])
            assert read_status(toy.workspace, ref).image is None

            cold, checks = toy.run()
            assert cold.success
            [candidate] = toy.candidates()
            # Only the drop's fields: a whole candidate is cut off in CI's excerpt of the log.
            drop = {field: candidate.get(field) for field in ("dropped_at", "reason", "detail")}
            assert candidate["status"] == "published", drop
            assert candidate["trial_rewards"] == {"reference": 1.0, "noop": 0.0}
            assert fake_provider.request_count == 1, "the proposal of the propose_only run is reused"
            status = read_status(toy.workspace, ref)
            assert status.image is not None
            image_tag = status.image.tag
            assert status.image.built is True, "propose_only had built nothing"
            assert sorted(set(creations.take())) == ["agent", "probe", "verifier"]
            assert [step.split("[")[0] for step in _docker_steps(cold)] == [
                "calibration.calibration_candidate",
                "images.images_candidate",
                "trials.trials_candidate",
            ]
            assert (Path(candidate["published_path"]) / "task.toml").is_file()
            card = (Path(candidate["published_path"]) / "README.md").read_text()
            assert card.startswith(f"# {candidate['task_id']}\n") and "| `reference` | 1.0 |" in card
            assert card in toy.latest_metadata("publish", key)["task_cards"]
            for asset in STAGE_ASSETS:
                table = toy.latest_metadata(asset, key)["candidate_table"]
                assert [row.data["task"] for row in table.records] == [candidate["task_id"]], asset
            assert all(evaluation.passed for evaluation in checks.get_asset_check_evaluations())
            assert len(checks.get_asset_check_evaluations()) == 2
            every_stage = dict.fromkeys(
                (
                    "inputs",
                    "converted",
                    "passed_gate",
                    "candidates",
                    "distinct",
                    "built",
                    "calibrated",
                    "tried",
                    "published",
                ),
                1,
            ) | {"accepted": 0, "solved_in_rollouts": 0}
            assert _funnel_csv(toy) == every_stage
            report_metadata = toy.latest_metadata("report", None)
            assert {row.data["stage"]: row.data["toy"] for row in report_metadata["funnel"].records} == every_stage
            assert re.search(r"\| published +\| +1 \|", report_metadata["funnel_markdown"])
            assert Path(report_metadata["funnel_png"]).read_bytes().startswith(b"\x89PNG")

            warm, _ = toy.run()
            assert warm.success and _docker_steps(warm) == [] and creations.take() == []
            assert fake_provider.request_count == 1
            assert toy.candidates()[0]["status"] == "published"
        finally:
            creations.close()
            if image_tag:
                client.images.remove(image_tag, force=True)
