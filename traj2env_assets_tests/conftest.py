"""Shared test fixtures: the real agent logs copied from the public sources in fixtures/real/SOURCES.md."""

from __future__ import annotations

from pathlib import Path

import pytest

REAL_FIXTURES = Path(__file__).parent / "fixtures" / "real"


@pytest.fixture
def real_fixtures() -> Path:
    return REAL_FIXTURES
