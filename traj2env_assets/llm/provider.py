"""The one module that imports LiteLLM: the completion call, its prices and capabilities.

Retries are LiteLLM's own (``num_retries`` with exponential backoff), limited by a retry
policy to timeouts, connection errors, 429 and 5xx; a 4xx other than 429 is not retried.
For OpenAI-compatible providers LiteLLM also hands ``num_retries`` to the OpenAI SDK for
the first attempt, so one call makes at most ``2 * num_retries + 1`` requests.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict

from traj2env_assets.llm.cache import ModelRequest
from traj2env_assets.llm.outcome import CostSource, DeclineReason, LlmConfigurationError

# Without these, importing litellm fetches the remote model-cost map (retrying for
# seconds when offline) and the first Anthropic call fetches a beta-header table; the
# copies bundled with the pinned release keep prices and requests stable and offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")

import litellm
import openai
from litellm.types.router import RetryPolicy
from litellm.types.utils import ModelResponse, Usage
from litellm.utils import type_to_response_format_param

# LiteLLM otherwise prints provider lists and help banners to stdout on every error.
litellm.suppress_debug_info = True


class ProviderDeclined(Exception):
    """The provider refused the request itself (content policy, prompt too long)."""

    def __init__(self, reason: DeclineReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class ProviderFailed(Exception):
    """The call failed after its retries (timeout, connection, 429, 5xx)."""


class CompletionRequest(ModelRequest):
    """The request plus how to send it."""

    timeout_s: float
    num_retries: int
    api_base: str | None = None


class ProviderReply(BaseModel):
    """The parts of a provider reply the client judges and accounts."""

    model_config = ConfigDict(extra="forbid")

    finish_reason: str | None
    content: str | None
    refusal: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    cost_source: CostSource


def strict_response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The strict ``json_schema`` response format LiteLLM (and OpenAI's SDK) derive from a pydantic model."""
    response_format = type_to_response_format_param(schema)
    assert response_format is not None  # a model class always yields a format
    return response_format


def _model_info(model: str) -> dict[str, Any] | None:
    try:
        return dict(litellm.get_model_info(model))
    except Exception:  # noqa: BLE001 - LiteLLM raises assorted errors for a model not in its table
        return None


def supports_reasoning(model: str) -> bool:
    """LiteLLM's per-model capability record; a model it does not know gets no reasoning effort."""
    try:
        return bool(litellm.supports_reasoning(model=model))
    except Exception:  # noqa: BLE001 - LiteLLM raises assorted errors for an unknown model
        return False


def output_token_limit(model: str) -> int | None:
    info = _model_info(model)
    limit = info.get("max_output_tokens") if info else None
    return int(limit) if limit else None


def _table_price(model: str, usage: Usage) -> float | None:
    info = _model_info(model)
    if not info or (info.get("input_cost_per_token") is None and info.get("output_cost_per_token") is None):
        return None
    # Price the tokens alone: a cost the provider states in ``usage`` would otherwise win.
    tokens_only = usage.model_copy(update={"cost": None})
    prompt_cost, completion_cost = litellm.cost_per_token(model=model, usage_object=tokens_only)
    return float(prompt_cost + completion_cost)


def _provider_reported_cost(response: ModelResponse) -> float | None:
    # LiteLLM's completion_cost knows where each provider reports a cost (``usage.cost``,
    # response headers); for a model it cannot price and no reported cost, it raises.
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - as above, for a response it cannot price
        return None


def _price(model: str, response: ModelResponse, usage: Usage) -> tuple[float, CostSource]:
    table = _table_price(model, usage)
    if table is not None:
        return table, "price_table"
    reported = _provider_reported_cost(response)
    if reported is not None:
        return reported, "provider_reported"
    return 0.0, "unknown"


def _retry_policy(num_retries: int) -> RetryPolicy:
    return RetryPolicy(
        TimeoutErrorRetries=num_retries,
        RateLimitErrorRetries=num_retries,
        InternalServerErrorRetries=num_retries,
        ServiceUnavailableErrorRetries=num_retries,
        DefaultRetries=0,
        BadRequestErrorRetries=0,
        AuthenticationErrorRetries=0,
        ContentPolicyViolationErrorRetries=0,
        NotFoundErrorRetries=0,
    )


def complete(request: CompletionRequest) -> ProviderReply:
    """One completion with retries; raises ProviderDeclined, ProviderFailed or LlmConfigurationError."""
    kwargs: dict[str, Any] = {}
    if request.reasoning_effort is not None:
        kwargs["reasoning_effort"] = request.reasoning_effort
    if request.api_base is not None:
        kwargs["api_base"] = request.api_base
    try:
        response = litellm.completion(
            model=request.model,
            messages=request.messages,
            response_format=request.response_format,
            max_tokens=request.max_tokens,
            timeout=request.timeout_s,
            num_retries=request.num_retries,
            retry_policy=_retry_policy(request.num_retries),
            retry_strategy="exponential_backoff_retry",
            **kwargs,
        )
    except litellm.ContextWindowExceededError as exc:
        raise ProviderDeclined("prompt_too_long", str(exc)) from exc
    except litellm.ContentPolicyViolationError as exc:
        raise ProviderDeclined("refusal", str(exc)) from exc
    except (
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
    ) as exc:
        raise ProviderFailed(f"{type(exc).__name__}: {exc}") from exc
    except (
        litellm.AuthenticationError,
        litellm.PermissionDeniedError,
        litellm.NotFoundError,
        litellm.BadRequestError,
    ) as exc:
        raise LlmConfigurationError(f"{request.model}: {type(exc).__name__}: {exc}") from exc
    except openai.APIError as exc:  # the base of every LiteLLM provider error not named above
        raise ProviderFailed(f"{type(exc).__name__}: {exc}") from exc
    assert isinstance(response, ModelResponse)  # not streaming
    # Some providers answer with no choice at all; that reads as an empty reply.
    choice = response.choices[0] if response.choices else None
    message = choice.message if choice else None
    usage: Usage = getattr(response, "usage", None) or Usage()
    cost, source = _price(request.model, response, usage)
    return ProviderReply(
        finish_reason=choice.finish_reason if choice else None,
        content=message.content if message else None,
        refusal=getattr(message, "refusal", None),
        tokens_in=usage.prompt_tokens or 0,
        tokens_out=usage.completion_tokens or 0,
        cost_usd=cost,
        cost_source=source,
    )
