"""Shared test fixtures: the real agent logs copied from the public sources in fixtures/real/SOURCES.md,
a local fake of the LLM providers' HTTP APIs, and the main command's run on the bundled samples."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from traj2env_assets_tests.example_run import ExampleRun, run_examples
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


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> ExampleRun:
    """``traj2env generate`` on every bundled sample, twice (Docker; shared by the end-to-end
    tests and the attack suite)."""
    run = run_examples(tmp_path_factory.mktemp("examples-run"))
    request.config.stash[_EXAMPLE_RUN] = run
    return run


_EXAMPLE_RUN = pytest.StashKey[ExampleRun]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if (run := config.stash.get(_EXAMPLE_RUN, None)) is not None:
        terminalreporter.section("main command on the samples")
        terminalreporter.write_line(run.timing())
