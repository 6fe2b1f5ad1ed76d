from __future__ import annotations

from collections.abc import Iterator

import pytest

from traj2env_assets_tests.llm.fake_provider import FakeProvider


@pytest.fixture
def fake_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    # LiteLLM's OpenAI route needs some key; the fake server ignores it.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    provider = FakeProvider()
    provider.start()
    yield provider
    provider.stop()
