"""The proposal stage with the toy family and a fake LLM provider (HTTP boundary): declines,
the spend cap and a missing model reach report.json per candidate; no Docker is touched."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply

SAMPLES = ["claude-code/python-pytest-fix.jsonl", "codex/python-unittest-fix.jsonl"]


@pytest.fixture
def instance(tmp_path: Path):
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        yield instance


def test_fake_provider_decline_and_spend_cap_reach_the_report_per_candidate(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    toy = ToyPipeline(tmp_path, SAMPLES, fake_provider, instance)
    fake_provider.then(FakeReply(content='{"na', finish_reason="length"))

    result, report_run = toy.run(jobs=1, max_llm_spend_usd=1e-9)

    assert result.success and report_run.success
    first, second = toy.candidates()
    assert (first["reason"], first["proposal"]["decline_reason"]) == ("llm_declined", "truncated")
    assert Path(first["proposal"]["raw_reply_path"]).is_file()
    assert second["reason"] == "budget_exhausted"
    assert fake_provider.request_count == 1
    usage = toy.report()["llm_usage"]
    assert (usage["calls"], usage["budget_exhausted"], usage["declines"]) == (1, 1, {"truncated": 1})
    declined = toy.latest_metadata("proposals", toy.keys[0])
    assert (declined["llm_calls"], declined["llm_tokens_out"], declined["llm_declines"]) == (1, 500, {"truncated": 1})
    assert toy.latest_metadata("proposals", toy.keys[1])["llm_budget_exhausted"] == 1
    assert toy.latest_metadata("images", toy.keys[0])["candidates"] == 0


def test_fake_provider_declined_candidate_is_asked_again_on_the_next_run(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    toy = ToyPipeline(tmp_path, SAMPLES[:1], fake_provider, instance)
    fake_provider.then(FakeReply(content="", finish_reason="stop"))
    toy.run(propose_only=True)
    assert toy.candidates()[0]["reason"] == "llm_declined"

    fake_provider.default = FakeReply(content='{"name": "Ada"}')
    toy.run(propose_only=True)
    toy.run(propose_only=True)

    [candidate] = toy.candidates()
    assert (candidate["status"], candidate["proposal"]["cache_hit"]) == ("passed_proposals", True)
    assert fake_provider.request_count == 2


def test_without_a_model_each_candidate_is_llm_not_configured(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    toy = ToyPipeline(tmp_path, SAMPLES, fake_provider, instance)

    toy.run(llm=None)

    assert [c["reason"] for c in toy.candidates()] == ["llm_not_configured", "llm_not_configured"]
    assert fake_provider.request_count == 0


def test_status_files_with_the_former_stage_names_rerun_without_a_model_call(
    tmp_path: Path, fake_provider: FakeProvider, instance: dg.DagsterInstance
) -> None:
    toy = ToyPipeline(tmp_path, SAMPLES[:1], fake_provider, instance)
    fake_provider.default = FakeReply(content='{"name": "Ada"}')
    toy.run(propose_only=True)
    # The status files as a workspace written before the stages were named for their folders has them.
    [path] = list((toy.workspace.root / "candidates" / "toy").rglob("status.json"))
    status = json.loads(path.read_text())
    assert status["reached"] == "proposals"
    path.write_text(json.dumps({**status, "reached": "proposal"}))

    toy.run(propose_only=True)

    [candidate] = toy.candidates()
    assert candidate["status"] == "passed_proposals" and fake_provider.request_count == 1
    assert json.loads(path.read_text())["reached"] == "proposals"
