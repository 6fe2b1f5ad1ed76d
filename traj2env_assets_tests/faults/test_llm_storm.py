"""A storm of 429s and 5xxs from the (fake) LLM provider: every candidate is dropped with
``llm_error``, nothing is cached, published or half-written, the task already in the
destination stays; when the provider recovers, the rerun gets every proposal."""

from __future__ import annotations

import itertools
from pathlib import Path

import dagster as dg

from traj2env_assets.harbor.dataset import MANIFEST_FILE, SPLITS_FILE
from traj2env_assets_tests.families.toy_pipeline import ToyPipeline
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply

SAMPLES = ["claude-code/python-pytest-fix.jsonl", "codex/python-unittest-fix.jsonl"]
REPORT_FILES = ["funnel.csv", "funnel.md", "funnel.png", "report.json", MANIFEST_FILE, SPLITS_FILE]


def test_fake_provider_storm_of_429_and_5xx_drops_cleanly_and_the_rerun_completes(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    storm = itertools.islice(itertools.cycle((429, 500, 502, 503, 529)), 40)
    fake_provider.then(*(FakeReply(status=status) for status in storm))
    fake_provider.default = FakeReply(status=503)
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        toy = ToyPipeline(tmp_path, SAMPLES, fake_provider, instance)
        destination = toy.workspace.root / "trajectory-tasks"
        existing = destination / "task-from-before"
        existing.mkdir(parents=True)
        (existing / "task.toml").write_text("kept\n")

        result, report_run = toy.run(jobs=2)

        assert result.success and report_run.success
        assert [c["reason"] for c in toy.candidates()] == ["llm_error", "llm_error"]
        assert toy.report()["llm_usage"]["errors"] == 2
        assert sorted(p.name for p in destination.iterdir()) == sorted(["task-from-before", *REPORT_FILES])
        assert not list((toy.workspace.root / "cache").rglob("??/*.json")), "an error reply was cached"
        assert (existing / "task.toml").read_text() == "kept\n"
        storm_calls = fake_provider.request_count

        fake_provider.script.clear()
        fake_provider.default = FakeReply(content='{"name": "Ada"}')
        toy.run(propose_only=True)

        assert [c["status"] for c in toy.candidates()] == ["passed_proposals", "passed_proposals"]
        assert fake_provider.request_count == storm_calls + 2
        assert (existing / "task.toml").read_text() == "kept\n"
