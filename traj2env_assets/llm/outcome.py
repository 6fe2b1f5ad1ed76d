"""What one proposal call gives a family: the validated proposal, or why the candidate is skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from traj2env_assets.llm.usage import LlmUsage

ProposalT = TypeVar("ProposalT", bound=BaseModel)

# Skip reasons a family records for the candidate. ``llm_error`` is ours: the provider
# failed (timeouts, rate limits or 5xx after the retries), nothing was cached, and a
# rerun tries again.
LlmSkipReason = Literal["llm_declined", "budget_exhausted", "llm_error"]
# Why a reply was declined: refused (or filtered), empty, cut off at the token budget
# (finish reason ``length``), not valid against the schema, or the prompt did not fit the
# model's context window.
DeclineReason = Literal["refusal", "empty", "truncated", "invalid", "prompt_too_long"]
# Where ``usage.spend_usd`` came from for a paid call.
CostSource = Literal["price_table", "provider_reported", "unknown"]


class LlmConfigurationError(RuntimeError):
    """A problem every call would hit (no model, missing key, unknown model, unsupported
    parameter): the step fails instead of skipping every candidate one by one."""


def require_model(model: str | None) -> str:
    if not model:
        raise LlmConfigurationError("build, extend and qa need a model: pass --llm <provider>/<model>")
    return model


class LlmOutcome(BaseModel, Generic[ProposalT]):
    """The result of ``LlmClient.propose``: ``proposal`` is set exactly when ``skip_reason`` is not."""

    model_config = ConfigDict(frozen=True)

    cache_key: str
    proposal: ProposalT | None = None
    skip_reason: LlmSkipReason | None = None
    decline_reason: DeclineReason | None = None
    detail: str = ""
    cache_hit: bool = False
    cost_source: CostSource | None = None
    raw_reply_path: Path | None = None
    usage: LlmUsage

    @property
    def ok(self) -> bool:
        return self.proposal is not None
