"""The ``llm`` resource: the shared LLM client of the proposal stage, and its metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING

import dagster as dg

from traj2env_assets.defs.resources import PipelineResource
from traj2env_assets.llm.ledger import SpendLedger
from traj2env_assets.llm.settings import DEFAULT_NUM_RETRIES, DEFAULT_TIMEOUT_S, LlmSettings
from traj2env_assets.llm.usage import LlmUsage

if TYPE_CHECKING:
    from traj2env_assets.llm.client import LlmClient

# Runs that share a spend ledger: those tagged with one spend scope (the generate command
# tags its runs), else every run of one backfill (Dagster tags them with its id).
SPEND_SCOPE_TAG = "traj2env/spend_scope"
BACKFILL_TAG = "dagster/backfill"


class LlmResource(dg.ConfigurableResource):
    """How the model is reached; what is asked (model, budget, cache, spend cap) comes from
    the run's options in ``pipeline``.

    ``spend_scope`` names the run's spend ledger, so all Dagster runs of one generate
    share one cap. Left empty, an asset's client uses the run's ``traj2env/spend_scope``
    tag, else its backfill id, else its run id. ``api_base`` points LiteLLM at a proxy or a
    local OpenAI-compatible server.
    """

    pipeline: PipelineResource
    spend_scope: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    num_retries: int = DEFAULT_NUM_RETRIES
    api_base: str | None = None

    def scope_for(self, context: dg.AssetExecutionContext) -> str:
        tags = context.run.tags
        return self.spend_scope or tags.get(SPEND_SCOPE_TAG) or tags.get(BACKFILL_TAG) or context.run.run_id

    def settings(self) -> LlmSettings:
        return LlmSettings.from_options(
            self.pipeline.options(), timeout_s=self.timeout_s, num_retries=self.num_retries, api_base=self.api_base
        )

    def client(self, scope: str) -> LlmClient:
        # Imported here: LiteLLM takes seconds to import, and every Dagster step process
        # loads this module, including repair-only runs that never call a model.
        from traj2env_assets.llm.client import LlmClient

        settings = self.settings()
        ledger = SpendLedger(
            self.pipeline.settings().workspace, scope, settings.max_spend_usd, self.pipeline.options().jobs
        )
        return LlmClient(settings, ledger)

    def client_for(self, context: dg.AssetExecutionContext) -> LlmClient:
        return self.client(self.scope_for(context))


def llm_usage_metadata(usage: LlmUsage) -> dict[str, dg.MetadataValue]:
    """Model use, for a materialization's metadata."""
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
