"""The extend family's proposal modes on the real Dagster graph (propose_only: no Docker).

``llm`` with the local fake provider (an OpenAI-compatible HTTP server): one call per
candidate with the request, the base and the changes in the prompt; the staged task tracks
the model's tests. ``recorded`` when no model is configured: no call at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from traj2env_assets.config import RunConfigFile, RunSettings
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.lifecycle.status import CandidateRef, read_status
from traj2env_assets.stages.task_specs import task_spec_for
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply
from traj2env_assets_tests.llm.helpers import PRICED_MODEL
from traj2env_assets_tests.replay.builders import SessionBuilder

SAMPLE = "codex/python-extend-feature.jsonl"
MODEL_TESTS = "from numstats import mode\n\n" + "".join(
    f"def test_mode_{n}():\n    assert mode([{n}, {n}, 0]) == {n}\n\n" for n in range(1, 7)
)


class ExtendPipeline(ToyPipeline):
    """The toy harness with the registered extend family instead of the toy one."""

    def pipeline(self, **options: Any) -> PipelineResource:
        config = RunConfigFile.model_validate(
            {
                "source": {"path": str(self.source)},
                "pipeline": {"options": {"families": ["extend"], "llm": PRICED_MODEL, "jobs": 2, **options}},
            }
        )
        return PipelineResource.from_settings(RunSettings.resolve(config, self.workspace.root))

    def candidates(self) -> list[dict[str, Any]]:
        return [c for c in self.report()["candidates"] if c["family"] == "extend"]


@pytest.fixture
def instance(tmp_path: Path):
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        yield instance


def test_fake_provider_llm_mode_asks_once_and_the_task_tracks_the_models_tests(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    extend = ExtendPipeline(tmp_path, [SAMPLE], fake_provider, instance)
    fake_provider.default = FakeReply(
        content=json.dumps({"contract": "Add `mode(values)`.", "test_module": MODEL_TESTS})
    )

    result, _ = extend.run(propose_only=True)

    assert result.success
    second, third = extend.candidates()
    assert (second["status"], third["reason"]) == ("passed_proposals", "not_python")
    assert fake_provider.request_count == 1
    prompt = json.dumps(fake_provider.requests[0])
    assert "Add mode() (the most frequent value" in prompt and "def median(values)" in prompt
    assert "tests/test_numstats.py::test_mean_of_integers" in prompt
    status = read_status(
        extend.workspace, CandidateRef(family="extend", partition_key=extend.keys[0], task_id=second["task_id"])
    )
    spec = task_spec_for(extend.workspace, extend.families.by_name("extend"), status, "local")
    assert spec.tests is not None
    assert spec.tests.tracked_test_ids == [f"tests/test_request_2.py::test_mode_{n}" for n in range(1, 7)]
    assert spec.tests.test_files["tests/test_request_2.py"] == MODEL_TESTS
    assert "Add `mode(values)`." in spec.instruction

    extend.run(propose_only=True)
    assert fake_provider.request_count == 1  # the proposal is reused


def test_fake_provider_truncated_reply_is_llm_declined(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    extend = ExtendPipeline(tmp_path, [SAMPLE], fake_provider, instance)
    fake_provider.then(FakeReply(content='{"contract": "Add', finish_reason="length"))

    extend.run(propose_only=True)

    assert extend.candidates()[0]["reason"] == "llm_declined"


def test_without_a_model_the_recorded_mode_goes_on_without_a_call(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    extend = ExtendPipeline(tmp_path, [SAMPLE], fake_provider, instance)

    extend.run(llm=None, propose_only=True)

    second = extend.candidates()[0]
    assert second["status"] == "passed_proposals" and second.get("proposal") is None
    assert fake_provider.request_count == 0


def test_requests_that_change_no_file_are_counted_per_session_not_as_candidates(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    calc = "def add(a, b):\n    return a + b\n"
    session = (
        SessionBuilder()
        .user("Build calc.py with add().")
        .call("Write", {"file_path": "calc.py", "content": calc})
        .user("What does add() do?")
        .call("Read", {"file_path": "calc.py"}, "     1\tdef add(a, b):\n", file_content=calc)
        .user("Add sub().")
        .call("Write", {"file_path": "calc.py", "content": calc + "\n\ndef sub(a, b):\n    return a - b\n"})
        .user("Thanks!")
    )
    log = tmp_path / "logs" / "calc-session.json"
    log.parent.mkdir()
    log.write_text(session.build().model_dump_json(exclude_none=True))
    extend = ExtendPipeline(tmp_path / "run", [str(log)], fake_provider, instance)

    extend.run(llm=None, propose_only=True)

    report = extend.report()
    assert [c["task_id"].rsplit("-", 1)[-1] for c in extend.candidates()] == ["3"]
    assert report["funnel"]["candidates"] == 1
    [item] = report["inputs"]
    assert item["mining_facts"] == {"extend": {"requests_without_changes": 2}}
