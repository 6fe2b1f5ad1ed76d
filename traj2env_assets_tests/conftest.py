"""Shared test fixtures: the real agent logs copied from the public sources in fixtures/real/SOURCES.md,
and a local fake of the LLM providers' HTTP APIs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from traj2env_assets_tests.llm.fake_provider import FakeProvider

REAL_FIXTURES = Path(__file__).parent / "fixtures" / "real"


@pytest.fixture
def real_fixtures() -> Path:
    return REAL_FIXTURES


@pytest.fixture
def fake_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    # LiteLLM's OpenAI route needs some key; the fake server ignores it.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    provider = FakeProvider()
    provider.start()
    yield provider
    provider.stop()
