from __future__ import annotations

from pathlib import Path

from traj2env_assets.llm.cache import ModelRequest, ReplyCache, cache_key
from traj2env_assets.llm.provider import CompletionRequest
from traj2env_assets_tests.llm.fake_provider import FakeProvider, TitleProposal
from traj2env_assets_tests.llm.helpers import client_for, settings_for, title_prompt

ASKED = ModelRequest(
    model="openai/gpt-4o-mini",
    messages=[{"role": "user", "content": "hi"}],
    response_format={"type": "json_schema"},
    max_tokens=100,
    reasoning_effort=None,
)


def test_cache_key_ignores_how_the_request_is_sent() -> None:
    fast = CompletionRequest(**ASKED.model_dump(), timeout_s=1, num_retries=0, api_base="http://a")
    patient = CompletionRequest(**ASKED.model_dump(), timeout_s=600, num_retries=3)

    assert cache_key(fast, "p", "1") == cache_key(patient, "p", "1") == cache_key(ASKED, "p", "1")
    assert cache_key(ASKED, "p", "1") != cache_key(ASKED, "p", "2")
    assert cache_key(ASKED, "p", "1") != cache_key(ASKED.model_copy(update={"model": "openai/gpt-4o"}), "p", "1")


def test_fake_provider_damaged_cache_file_is_a_miss_and_gets_replaced(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    settings = settings_for(tmp_path, fake_provider.api_base)
    first = client_for(settings, tmp_path).propose(title_prompt(), {"request": "x"}, TitleProposal)
    cached = ReplyCache(settings.cache_dir).path(first.cache_key)
    cached.write_text('{"cache_key": "trunc')

    again = client_for(settings, tmp_path).propose(title_prompt(), {"request": "x"}, TitleProposal)

    assert again.ok and not again.cache_hit
    assert fake_provider.request_count == 2
    assert ReplyCache(settings.cache_dir).get(first.cache_key) is not None
