"""How the LLM client calls the model: the run's LLM options plus transport settings.

Kept apart from the client so the Dagster resource can build and validate settings
without importing LiteLLM.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from traj2env_assets.config import PipelineOptions, ReasoningEffort
from traj2env_assets.llm.outcome import require_model

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_NUM_RETRIES = 2


class LlmSettings(BaseModel):
    """How calls are made; the option-backed fields come from ``PipelineOptions`` (see ``from_options``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    max_tokens: int = Field(ge=1)
    reasoning_effort: ReasoningEffort | None
    cache_dir: Path
    max_spend_usd: float = Field(ge=0)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    num_retries: int = Field(default=DEFAULT_NUM_RETRIES, ge=0)
    api_base: str | None = None

    @classmethod
    def from_options(
        cls,
        options: PipelineOptions,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        num_retries: int = DEFAULT_NUM_RETRIES,
        api_base: str | None = None,
    ) -> LlmSettings:
        if options.llm_cache_dir is None:
            raise ValueError("llm_cache_dir is resolved against the workspace (RunSettings) before LLM settings")
        return cls(
            model=require_model(options.llm),
            max_tokens=options.max_llm_tokens,
            reasoning_effort=options.reasoning_effort,
            cache_dir=options.llm_cache_dir,
            max_spend_usd=options.max_llm_spend_usd,
            timeout_s=timeout_s,
            num_retries=num_retries,
            api_base=api_base,
        )
