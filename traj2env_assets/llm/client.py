"""The one LLM client of the build, extend and qa families: cached, budgeted, schema-strict.

A family loads its prompt, renders it with the candidate's values and asks for a reply
that validates against a pydantic model::

    prompt = load_prompt(Path(__file__).parent / "prompts", "propose")
    outcome = client.propose(prompt, {"request": request_text}, BuildProposal)
    if outcome.ok:
        ...  # outcome.proposal is a BuildProposal
    else:
        ...  # record outcome.skip_reason (llm_declined, budget_exhausted, llm_error) and outcome.detail

Each call goes: reply cache (free) → spend ledger admission → LiteLLM → judge the reply →
cache it if it is complete and valid → add its usage to the run's ledger.

``propose_only``: the client only makes calls and fills the cache. The ``proposals``
asset runs as usual; the Docker stages after it plan no work (``defs/docker_stages.py``),
so candidates stay ``passed_proposals`` and nothing is built or started. A later run
without ``propose_only`` then reuses every proposal and makes no call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import NamedTuple

from pydantic import ValidationError

from traj2env_assets.config import ReasoningEffort
from traj2env_assets.llm.cache import CachedReply, DeclinedReply, ReplyCache, cache_key
from traj2env_assets.llm.ledger import SpendLedger
from traj2env_assets.llm.outcome import (
    DeclineReason,
    LlmConfigurationError,
    LlmOutcome,
    ProposalT,
)
from traj2env_assets.llm.prompts import Prompt
from traj2env_assets.llm.provider import (
    CompletionRequest,
    ProviderDeclined,
    ProviderFailed,
    ProviderReply,
    complete,
    output_token_limit,
    strict_response_format,
    supports_reasoning,
)
from traj2env_assets.llm.settings import LlmSettings
from traj2env_assets.llm.usage import LlmUsage

logger = logging.getLogger(__name__)

VALIDATION_DETAIL_LIMIT = 2000


class LlmClient:
    def __init__(self, settings: LlmSettings, ledger: SpendLedger) -> None:
        self.settings = settings
        self.ledger = ledger
        self.cache = ReplyCache(settings.cache_dir)
        self.reasoning_effort = self._effective_reasoning_effort()
        self.max_tokens = self._effective_max_tokens()

    def _effective_reasoning_effort(self) -> ReasoningEffort | None:
        effort = self.settings.reasoning_effort
        if effort is not None and not supports_reasoning(self.settings.model):
            logger.warning(
                "reasoning_effort=%s not sent: LiteLLM records no reasoning support for %s",
                effort,
                self.settings.model,
            )
            return None
        return effort

    def _effective_max_tokens(self) -> int:
        # A budget above the model's own output limit is a 400 from most providers.
        limit = output_token_limit(self.settings.model)
        return min(self.settings.max_tokens, limit) if limit else self.settings.max_tokens

    def propose(self, prompt: Prompt, values: Mapping[str, object], schema: type[ProposalT]) -> LlmOutcome[ProposalT]:
        """One proposal for one candidate. A per-candidate problem is an outcome, never an exception;
        raises only PromptError (values that do not fit the prompt) and LlmConfigurationError
        (a problem every call would hit, such as a missing key or an unknown model)."""
        messages = [{"role": "user", "content": prompt.render(values)}]
        request = CompletionRequest(
            model=self.settings.model,
            messages=messages,
            response_format=strict_response_format(schema),
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort,
            timeout_s=self.settings.timeout_s,
            num_retries=self.settings.num_retries,
            api_base=self.settings.api_base,
        )
        key = cache_key(request, prompt.name, prompt.version)
        outcome = self._from_cache(key, schema)
        if outcome is None:
            outcome = self._from_provider(key, prompt, request, schema)
        if outcome.skip_reason != "budget_exhausted":  # admission already counted it
            self.ledger.record(outcome.usage)
        return outcome

    def _from_cache(self, key: str, schema: type[ProposalT]) -> LlmOutcome[ProposalT] | None:
        cached = self.cache.get(key)
        if cached is None:
            return None
        try:
            proposal = schema.model_validate_json(cached.content, strict=True)
        except ValidationError:
            return None
        return LlmOutcome(cache_key=key, proposal=proposal, cache_hit=True, usage=LlmUsage(cache_hits=1))

    def _from_provider(
        self, key: str, prompt: Prompt, request: CompletionRequest, schema: type[ProposalT]
    ) -> LlmOutcome[ProposalT]:
        if not self.ledger.admit():
            return LlmOutcome(
                cache_key=key,
                skip_reason="budget_exhausted",
                detail=f"LLM spend reached max_llm_spend_usd={self.settings.max_spend_usd}",
                usage=LlmUsage(budget_exhausted=1),
            )
        try:
            reply = complete(request)
        except ProviderDeclined as declined:
            return self._declined(key, prompt, declined.reason, declined.detail, None, LlmUsage(calls=1))
        except ProviderFailed as failed:
            logger.warning("LLM call %s failed after retries: %s", key[:12], failed)
            return LlmOutcome(
                cache_key=key, skip_reason="llm_error", detail=str(failed), usage=LlmUsage(calls=1, errors=1)
            )
        except LlmConfigurationError:
            self.ledger.record(LlmUsage(calls=1, errors=1))
            raise
        paid = LlmUsage(
            calls=1,
            tokens_in=reply.tokens_in,
            tokens_out=reply.tokens_out,
            spend_usd=reply.cost_usd,
            unpriced_calls=int(reply.cost_source == "unknown"),
        )
        judged = _judge(reply, schema)
        if isinstance(judged, Decline):
            return self._declined(key, prompt, judged.reason, judged.detail, reply, paid)
        self.cache.put(
            CachedReply(
                cache_key=key,
                model=request.model,
                prompt_name=prompt.name,
                prompt_version=prompt.version,
                content=reply.content or "",
                tokens_in=reply.tokens_in,
                tokens_out=reply.tokens_out,
                cost_usd=reply.cost_usd,
            )
        )
        return LlmOutcome(cache_key=key, proposal=judged, cost_source=reply.cost_source, usage=paid)

    def _declined(
        self,
        key: str,
        prompt: Prompt,
        reason: DeclineReason,
        detail: str,
        reply: ProviderReply | None,
        usage: LlmUsage,
    ) -> LlmOutcome[ProposalT]:
        saved = self.cache.save_declined(
            DeclinedReply(
                cache_key=key,
                model=self.settings.model,
                prompt_name=prompt.name,
                prompt_version=prompt.version,
                reason=reason,
                detail=detail,
                finish_reason=reply.finish_reason if reply else None,
                content=reply.content if reply else None,
                refusal=reply.refusal if reply else None,
            )
        )
        return LlmOutcome(
            cache_key=key,
            skip_reason="llm_declined",
            decline_reason=reason,
            detail=detail,
            cost_source=reply.cost_source if reply else None,
            raw_reply_path=saved,
            usage=usage.plus(LlmUsage(declines={reason: 1})),
        )


class Decline(NamedTuple):
    reason: DeclineReason
    detail: str


def _judge(reply: ProviderReply, schema: type[ProposalT]) -> ProposalT | Decline:
    """The validated proposal, or why the reply is declined."""
    if reply.refusal:
        return Decline("refusal", reply.refusal)
    if reply.finish_reason == "content_filter":
        return Decline("refusal", "the provider's content filter stopped the reply")
    if reply.finish_reason == "length":
        return Decline("truncated", f"the reply hit the output budget after {reply.tokens_out} tokens")
    if not (reply.content or "").strip():
        return Decline("empty", f"no content (finish reason {reply.finish_reason})")
    try:
        return schema.model_validate_json(reply.content or "", strict=True)
    except ValidationError as exc:
        return Decline("invalid", str(exc)[:VALIDATION_DETAIL_LIMIT])
