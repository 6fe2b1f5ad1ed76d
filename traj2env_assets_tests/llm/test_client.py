"""The client against a fake OpenAI-compatible provider on 127.0.0.1: replies, declines, retries, cache, prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.llm.cache import CachedReply, DeclinedReply
from traj2env_assets.llm.ledger import read_llm_usage
from traj2env_assets.llm.outcome import LlmConfigurationError
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply, TitleProposal
from traj2env_assets_tests.llm.helpers import (
    PRICED_COST_1000_IN_500_OUT,
    PRICED_MODEL,
    SCOPE,
    UNPRICED_MODEL,
    client_for,
    settings_for,
    title_prompt,
)

REQUEST = {"request": "Read a CSV file and print its header row."}


def test_fake_provider_valid_reply_is_validated_priced_and_cached(tmp_path: Path, fake_provider: FakeProvider) -> None:
    client = client_for(settings_for(tmp_path, fake_provider.api_base), tmp_path)

    outcome = client.propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.proposal == TitleProposal(title="Parse CSV headers", tests=["test_header", "test_empty"])
    assert outcome.skip_reason is None and not outcome.cache_hit
    assert outcome.cost_source == "price_table"
    assert outcome.usage.spend_usd == pytest.approx(PRICED_COST_1000_IN_500_OUT)
    assert (outcome.usage.calls, outcome.usage.tokens_in, outcome.usage.tokens_out) == (1, 1000, 500)
    sent = fake_provider.requests[0]
    assert sent["messages"] == [
        {
            "role": "user",
            "content": "Propose a title and a few test names for this request.\n\n"
            "Request: Read a CSV file and print its header row.\n",
        }
    ]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["strict"] is True
    assert sent["response_format"]["json_schema"]["schema"]["additionalProperties"] is False
    # 32000 by default, lowered to gpt-4o-mini's own output limit in LiteLLM's table.
    assert sent["max_tokens"] == 16384
    assert "reasoning_effort" not in sent
    cached = CachedReply.model_validate_json(client.cache.path(outcome.cache_key).read_text())
    assert (cached.prompt_name, cached.prompt_version) == ("propose_title", "1")


def test_fake_provider_rerun_is_a_cache_hit_with_no_call(tmp_path: Path, fake_provider: FakeProvider) -> None:
    settings = settings_for(tmp_path, fake_provider.api_base)
    first = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    rerun = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert fake_provider.request_count == 1
    assert rerun.cache_hit and rerun.proposal == first.proposal
    assert rerun.usage.spend_usd == 0 and rerun.usage.cache_hits == 1 and rerun.usage.calls == 0
    run = read_llm_usage(tmp_path, SCOPE)
    assert (run.calls, run.cache_hits) == (1, 1)
    assert run.spend_usd == pytest.approx(PRICED_COST_1000_IN_500_OUT)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (FakeReply(content='{"title": "Parse CSV', finish_reason="length"), "truncated"),
        (FakeReply(content='{"title": 5, "tests": []}'), "invalid"),
        (FakeReply(content='{"title": "x", "tests": [], "extra": 1}'), "invalid"),
        (FakeReply(content="not json"), "invalid"),
        (FakeReply(content=None, refusal="I can't help with that."), "refusal"),
        (FakeReply(content="", finish_reason="content_filter"), "refusal"),
        (FakeReply(content="  "), "empty"),
        (FakeReply(content=None, no_choices=True), "empty"),
    ],
)
def test_fake_provider_bad_reply_is_declined_saved_and_not_cached(
    tmp_path: Path, fake_provider: FakeProvider, reply: FakeReply, reason: str
) -> None:
    settings = settings_for(tmp_path, fake_provider.api_base)
    fake_provider.then(reply)

    declined = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert declined.skip_reason == "llm_declined" and declined.decline_reason == reason
    assert declined.proposal is None and declined.detail
    assert declined.raw_reply_path is not None
    saved = DeclinedReply.model_validate_json(declined.raw_reply_path.read_text())
    assert (saved.reason, saved.content, saved.refusal) == (reason, reply.content, reply.refusal)
    # The provider still charged for the reply.
    assert declined.usage.spend_usd == pytest.approx(PRICED_COST_1000_IN_500_OUT)
    assert declined.usage.declines == {reason: 1}
    # Not cached: the rerun asks again and gets the default, valid reply.
    rerun = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)
    assert fake_provider.request_count == 2
    assert rerun.ok and not rerun.cache_hit
    assert read_llm_usage(tmp_path, SCOPE).declines == {reason: 1}


def test_fake_provider_429_then_success_is_retried(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.then(FakeReply(status=429))

    outcome = client_for(settings_for(tmp_path, fake_provider.api_base), tmp_path).propose(
        title_prompt(), REQUEST, TitleProposal
    )

    assert outcome.ok
    assert fake_provider.request_count == 2


def test_fake_provider_503s_are_retried_then_reported_as_llm_error(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.default = FakeReply(status=503)
    settings = settings_for(tmp_path, fake_provider.api_base, num_retries=1)

    outcome = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.skip_reason == "llm_error"
    # Bounded: 1 + num_retries attempts, doubled by the OpenAI SDK's own retry of the first.
    assert 2 <= fake_provider.request_count <= 2 * settings.num_retries + 1
    assert not list((tmp_path / "cache").glob("??/*.json"))
    assert read_llm_usage(tmp_path, SCOPE).errors == 1


def test_fake_provider_timeout_is_an_llm_error_and_not_cached(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.default = FakeReply(delay_s=1.0)
    settings = settings_for(tmp_path, fake_provider.api_base, timeout_s=0.2, num_retries=1)

    outcome = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.skip_reason == "llm_error" and "Timeout" in outcome.detail
    assert 2 <= fake_provider.request_count <= 2 * settings.num_retries + 1
    assert not list((tmp_path / "cache").glob("??/*.json"))


def test_fake_provider_auth_error_fails_the_step_without_retries(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.then(FakeReply(status=401))

    with pytest.raises(LlmConfigurationError, match="AuthenticationError"):
        client_for(settings_for(tmp_path, fake_provider.api_base), tmp_path).propose(
            title_prompt(), REQUEST, TitleProposal
        )

    assert fake_provider.request_count == 1


def test_fake_provider_prompt_over_the_context_window_is_declined(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.then(FakeReply(status=400, error_message="This model's maximum context length is 128000 tokens."))

    outcome = client_for(settings_for(tmp_path, fake_provider.api_base), tmp_path).propose(
        title_prompt(), REQUEST, TitleProposal
    )

    assert outcome.skip_reason == "llm_declined" and outcome.decline_reason == "prompt_too_long"
    assert outcome.raw_reply_path is not None and outcome.raw_reply_path.exists()
    assert fake_provider.request_count == 1


def test_fake_provider_priced_model_uses_the_price_table_over_a_reported_cost(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    fake_provider.then(FakeReply(reported_cost=0.5))

    outcome = client_for(settings_for(tmp_path, fake_provider.api_base), tmp_path).propose(
        title_prompt(), REQUEST, TitleProposal
    )

    assert outcome.cost_source == "price_table"
    assert outcome.usage.spend_usd == pytest.approx(PRICED_COST_1000_IN_500_OUT)


def test_fake_provider_unpriced_model_uses_the_provider_reported_cost(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    fake_provider.then(FakeReply(reported_cost=0.123))
    settings = settings_for(tmp_path, fake_provider.api_base, model=UNPRICED_MODEL)

    outcome = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.ok and outcome.cost_source == "provider_reported"
    assert outcome.usage.spend_usd == pytest.approx(0.123)
    assert outcome.usage.unpriced_calls == 0
    # No output limit is known for the model, so the full budget is sent.
    assert fake_provider.requests[0]["max_tokens"] == 32000


def test_fake_provider_unpriced_model_without_a_reported_cost_counts_zero_and_is_flagged(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    settings = settings_for(tmp_path, fake_provider.api_base, model=UNPRICED_MODEL)

    outcome = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.ok and outcome.cost_source == "unknown"
    assert outcome.usage.spend_usd == 0 and outcome.usage.unpriced_calls == 1
    assert read_llm_usage(tmp_path, SCOPE).unpriced_calls == 1


def test_fake_provider_reasoning_effort_is_sent_only_to_reasoning_models(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    reasoning = settings_for(tmp_path, fake_provider.api_base, model="openai/o3-mini", reasoning_effort="high")
    plain = settings_for(tmp_path, fake_provider.api_base, model=PRICED_MODEL, reasoning_effort="high")

    client_for(reasoning, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)
    client_for(plain, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    to_o3, to_4o_mini = fake_provider.requests
    assert to_o3["reasoning_effort"] == "high"
    assert "reasoning_effort" not in to_4o_mini


def test_fake_provider_cache_key_follows_prompt_version_budget_and_effort(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    base = settings_for(tmp_path, fake_provider.api_base, model="openai/o3-mini")
    prompt = title_prompt()
    variants = [
        (base, prompt),
        (base, prompt.model_copy(update={"version": "2"})),
        (base.model_copy(update={"max_tokens": 1000}), prompt),
        (base.model_copy(update={"reasoning_effort": "low"}), prompt),
    ]

    keys = {client_for(settings, tmp_path).propose(p, REQUEST, TitleProposal).cache_key for settings, p in variants}

    assert len(keys) == 4
    assert fake_provider.request_count == 4
    assert fake_provider.requests[2]["max_completion_tokens"] == 1000


def test_fake_provider_anthropic_model_gets_native_schema_thinking_and_table_price(
    tmp_path: Path, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    settings = settings_for(
        tmp_path,
        fake_provider.anthropic_api_base,
        model="anthropic/claude-sonnet-4-5",
        reasoning_effort="low",
    )

    outcome = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.ok and outcome.cost_source == "price_table"
    # claude-sonnet-4-5: $3 / 1M input, $15 / 1M output tokens.
    assert outcome.usage.spend_usd == pytest.approx(1000 * 3e-6 + 500 * 15e-6)
    sent = fake_provider.requests[0]
    assert sent["max_tokens"] == 32000
    assert sent["output_format"]["schema"]["additionalProperties"] is False
    assert sent["thinking"]["type"] == "enabled"


def test_fake_provider_anthropic_max_tokens_stop_is_truncated(
    tmp_path: Path, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    fake_provider.then(FakeReply(content='{"title": "Parse', finish_reason="length"))
    settings = settings_for(tmp_path, fake_provider.anthropic_api_base, model="anthropic/claude-sonnet-4-5")

    outcome = client_for(settings, tmp_path).propose(title_prompt(), REQUEST, TitleProposal)

    assert outcome.decline_reason == "truncated"
