"""The "llm" Dagster resource: options, the run's ledger scope, and usage metadata on a materialization."""

import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from traj2env_assets.config import PipelineOptions, RunConfigFile, RunSettings
from traj2env_assets.defs.llm import BACKFILL_TAG, SPEND_SCOPE_TAG, LlmResource, llm_usage_metadata
from traj2env_assets.defs.pools import DOCKER_BUILD_POOL, DOCKER_TRIAL_POOL, LLM_POOL, apply_pool_limits
from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.llm.ledger import read_llm_usage
from traj2env_assets.llm.outcome import LlmConfigurationError
from traj2env_assets_tests.llm.fake_provider import FakeProvider, TitleProposal
from traj2env_assets_tests.llm.helpers import PRICED_MODEL, title_prompt


def _pipeline(root: Path, options: PipelineOptions) -> PipelineResource:
    config = RunConfigFile.model_validate({"pipeline": {"options": options.model_dump()}})
    return PipelineResource.from_settings(RunSettings.resolve(config, root))


def _llm_on_fake_provider(root: Path, provider: FakeProvider) -> LlmResource:
    options = PipelineOptions(llm=PRICED_MODEL, llm_cache_dir=root / "cache")
    return LlmResource(pipeline=_pipeline(root, options), api_base=provider.api_base)


@dg.asset(pool=LLM_POOL)
def proposal(context: dg.AssetExecutionContext, llm: LlmResource) -> dg.MaterializeResult:
    outcome = llm.client_for(context).propose(title_prompt(), {"request": "Add a --json flag"}, TitleProposal)
    return dg.MaterializeResult(metadata=llm_usage_metadata(outcome.usage))


def test_resource_takes_the_pipeline_options(tmp_path: Path) -> None:
    options = PipelineOptions(
        llm="anthropic/claude-sonnet-4-5",
        max_llm_tokens=9000,
        reasoning_effort="low",
        jobs=2,
        max_llm_spend_usd=0,
    )

    resource = LlmResource(pipeline=_pipeline(tmp_path, options))
    client = resource.client("generate-1")

    assert (client.settings.model, client.settings.max_tokens, client.reasoning_effort) == (
        "anthropic/claude-sonnet-4-5",
        9000,
        "low",
    )
    # The cache lives under the workspace root, like every output.
    assert client.settings.cache_dir == tmp_path.resolve() / "cache" / "trajectory_to_env" / "llm"
    assert client.settings.max_spend_usd == 0
    assert client.ledger.path == tmp_path.resolve() / "llm_ledger" / "generate-1.json"
    assert client.ledger.jobs == 2


def test_resource_module_loads_without_importing_litellm() -> None:
    # Every Dagster step process loads the resource; LiteLLM costs seconds to import.
    probe = "import sys, traj2env_assets.defs.llm; print('litellm' in sys.modules)"

    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert loaded.stdout.strip() == "False"


def test_resource_without_a_model_fails_with_a_clear_message(tmp_path: Path) -> None:
    resource = LlmResource(pipeline=_pipeline(tmp_path, PipelineOptions()))

    with pytest.raises(LlmConfigurationError, match="--llm"):
        resource.client("run-1")


def test_fake_provider_materialization_carries_usage_and_fills_the_run_ledger(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    llm = _llm_on_fake_provider(tmp_path, fake_provider)

    result = dg.materialize([proposal], resources={"llm": llm})

    metadata = result.asset_materializations_for_node("proposal")[0].metadata
    assert metadata["llm_calls"].value == 1
    assert metadata["llm_cache_hits"].value == 0
    assert metadata["llm_tokens_in"].value == 1000
    assert metadata["llm_declines"].value == {}
    # Without a spend scope, a single run's ledger is named by its run id.
    assert read_llm_usage(tmp_path.resolve(), result.run_id).calls == 1
    assert fake_provider.request_count == 1


@pytest.mark.parametrize(
    ("tags", "scope"),
    [
        ({SPEND_SCOPE_TAG: "generate-7", BACKFILL_TAG: "backfill-1"}, "generate-7"),
        ({BACKFILL_TAG: "backfill-1"}, "backfill-1"),
    ],
)
def test_fake_provider_runs_with_one_scope_tag_share_a_ledger(
    tmp_path: Path, fake_provider: FakeProvider, tags: dict[str, str], scope: str
) -> None:
    llm = _llm_on_fake_provider(tmp_path, fake_provider)

    for _ in range(2):
        dg.materialize([proposal], resources={"llm": llm}, tags=tags)

    usage = read_llm_usage(tmp_path.resolve(), scope)
    assert (usage.calls, usage.cache_hits) == (1, 1)


def test_pools_get_their_limits_from_jobs(tmp_path: Path) -> None:
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        apply_pool_limits(instance, PipelineOptions(jobs=3))

        slots = {
            pool: instance.event_log_storage.get_concurrency_info(pool).slot_count
            for pool in (DOCKER_BUILD_POOL, DOCKER_TRIAL_POOL, LLM_POOL)
        }
        # One proposal step at a time, each with `jobs` calls in flight: at most `jobs` calls.
        assert slots == {DOCKER_BUILD_POOL: 3, DOCKER_TRIAL_POOL: 1, LLM_POOL: 1}
