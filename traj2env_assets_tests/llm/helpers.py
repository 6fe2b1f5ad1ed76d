"""Building a client the way a family would, pointed at the fake provider."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.config import PipelineOptions, ReasoningEffort
from traj2env_assets.llm.client import LlmClient
from traj2env_assets.llm.ledger import SpendLedger
from traj2env_assets.llm.prompts import Prompt, load_prompt
from traj2env_assets.llm.settings import LlmSettings

PROMPTS_DIR = Path(__file__).parent / "prompts"
PRICED_MODEL = "openai/gpt-4o-mini"
# gpt-4o-mini in LiteLLM's bundled table: $0.15 / 1M input, $0.60 / 1M output tokens.
PRICED_COST_1000_IN_500_OUT = 1000 * 0.15e-6 + 500 * 0.60e-6
UNPRICED_MODEL = "openai/traj2env-local-model"
SCOPE = "run-1"


def title_prompt() -> Prompt:
    return load_prompt(PROMPTS_DIR, "propose_title")


def settings_for(
    root: Path,
    api_base: str,
    *,
    model: str = PRICED_MODEL,
    max_spend_usd: float = 5.0,
    reasoning_effort: ReasoningEffort | None = None,
    timeout_s: float = 5.0,
    num_retries: int = 1,
) -> LlmSettings:
    options = PipelineOptions(
        llm=model,
        llm_cache_dir=root / "cache",
        max_llm_spend_usd=max_spend_usd,
        reasoning_effort=reasoning_effort,
    )
    return LlmSettings.from_options(options, timeout_s=timeout_s, num_retries=num_retries, api_base=api_base)


def client_for(settings: LlmSettings, root: Path, jobs: int = 4) -> LlmClient:
    return LlmClient(settings, SpendLedger(root, SCOPE, settings.max_spend_usd, jobs))
