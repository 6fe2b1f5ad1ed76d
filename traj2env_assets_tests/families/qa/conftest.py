"""A fake hub on 127.0.0.1 with ``HF_ENDPOINT`` pointing at it, for the qa tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from traj2env_assets_tests.families.qa.fake_hub import FakeHub


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    hub = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    try:
        yield hub
    finally:
        hub.stop()
