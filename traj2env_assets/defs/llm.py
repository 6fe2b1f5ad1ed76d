"""The "llm" resource: the shared LLM client for the build, extend and qa assets, and its metadata."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from traj2env_assets.config import PipelineOptions
from traj2env_assets.defs.resources import WorkspaceResource
from traj2env_assets.llm.ledger import SpendLedger
from traj2env_assets.llm.outcome import require_model
from traj2env_assets.llm.settings import DEFAULT_NUM_RETRIES, DEFAULT_TIMEOUT_S, LlmSettings
from traj2env_assets.llm.usage import LlmUsage

if TYPE_CHECKING:
    from traj2env_assets.llm.client import LlmClient

# Runs that share a spend ledger: those tagged with one spend scope (the generate command
# tags its runs), else every run of one backfill (Dagster tags them with its id).
SPEND_SCOPE_TAG = "traj2env/spend_scope"
BACKFILL_TAG = "dagster/backfill"
# The Dagster concurrency pool of every asset that calls the model (``@dg.asset(pool=LLM_POOL)``).
# Limited to ``jobs`` slots, it keeps at most ``jobs`` calls in flight across all runs of a
# backfill, which is what bounds the spend cap's overshoot (see ``traj2env_assets.llm.ledger``).
LLM_POOL = "llm"
OPTION_DEFAULTS = PipelineOptions()


class LlmResource(dg.ConfigurableResource):
    """The LLM options of the run (same names and defaults as ``PipelineOptions``).

    ``spend_scope`` names the run's spend ledger, so all Dagster runs of one generate
    share one cap. Left empty, an asset's client uses the run's ``traj2env/spend_scope``
    tag, else its backfill id, else its run id. ``api_base`` points LiteLLM at a proxy or a
    local OpenAI-compatible server.
    """

    workspace: WorkspaceResource
    llm: str | None = None
    max_llm_tokens: int = OPTION_DEFAULTS.max_llm_tokens
    reasoning_effort: str | None = None
    llm_cache_dir: str = str(OPTION_DEFAULTS.llm_cache_dir)
    max_llm_spend_usd: float = OPTION_DEFAULTS.max_llm_spend_usd
    jobs: int = OPTION_DEFAULTS.jobs
    spend_scope: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    num_retries: int = DEFAULT_NUM_RETRIES
    api_base: str | None = None

    @classmethod
    def from_options(
        cls, options: PipelineOptions, workspace: WorkspaceResource, spend_scope: str | None = None
    ) -> LlmResource:
        return cls(
            workspace=workspace,
            llm=options.llm,
            max_llm_tokens=options.max_llm_tokens,
            reasoning_effort=options.reasoning_effort,
            llm_cache_dir=str(options.llm_cache_dir),
            max_llm_spend_usd=options.max_llm_spend_usd,
            jobs=options.jobs,
            spend_scope=spend_scope,
        )

    def scope_for(self, context: dg.AssetExecutionContext) -> str:
        tags = context.run.tags
        return self.spend_scope or tags.get(SPEND_SCOPE_TAG) or tags.get(BACKFILL_TAG) or context.run.run_id

    def settings(self) -> LlmSettings:
        return LlmSettings.model_validate(
            {
                "model": require_model(self.llm),
                "max_tokens": self.max_llm_tokens,
                "reasoning_effort": self.reasoning_effort,
                "cache_dir": Path(self.llm_cache_dir),
                "max_spend_usd": self.max_llm_spend_usd,
                "timeout_s": self.timeout_s,
                "num_retries": self.num_retries,
                "api_base": self.api_base,
            }
        )

    def client(self, scope: str) -> LlmClient:
        # Imported here: LiteLLM takes seconds to import, and every Dagster step process
        # loads this module, including repair-only runs that never call a model.
        from traj2env_assets.llm.client import LlmClient

        settings = self.settings()
        ledger = SpendLedger(self.workspace.workspace().root, scope, settings.max_spend_usd, self.jobs)
        return LlmClient(settings, ledger)

    def client_for(self, context: dg.AssetExecutionContext) -> LlmClient:
        return self.client(self.scope_for(context))


def limit_llm_pool(instance: dg.DagsterInstance, jobs: int) -> None:
    """Give the LLM pool ``jobs`` slots; the generate command calls this before launching runs."""
    instance.event_log_storage.set_concurrency_slots(LLM_POOL, jobs)


def llm_usage_metadata(usage: LlmUsage) -> dict[str, dg.MetadataValue]:
    """The partition's model use, for ``MaterializeResult(metadata=...)``."""
    return {
        "llm_calls": dg.MetadataValue.int(usage.calls),
        "llm_cache_hits": dg.MetadataValue.int(usage.cache_hits),
        "llm_tokens_in": dg.MetadataValue.int(usage.tokens_in),
        "llm_tokens_out": dg.MetadataValue.int(usage.tokens_out),
        "llm_spend_usd": dg.MetadataValue.float(round(usage.spend_usd, 6)),
        "llm_unpriced_calls": dg.MetadataValue.int(usage.unpriced_calls),
        "llm_errors": dg.MetadataValue.int(usage.errors),
        "llm_budget_exhausted": dg.MetadataValue.int(usage.budget_exhausted),
        "llm_declines": dg.MetadataValue.json(usage.declines),
    }
