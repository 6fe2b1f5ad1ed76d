"""The run's spend cap with 4 concurrent workers, as threads and as processes sharing one ledger."""

from __future__ import annotations

import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from traj2env_assets.llm.ledger import read_llm_usage, read_spend_ledger
from traj2env_assets.llm.settings import LlmSettings
from traj2env_assets_tests.llm.fake_provider import FakeProvider, FakeReply, TitleProposal
from traj2env_assets_tests.llm.helpers import SCOPE, client_for, settings_for, title_prompt

JOBS = 4
CANDIDATES_PER_WORKER = 5
CAP_USD = 0.01
# gpt-4o-mini: 10,000 input tokens at $0.15/1M + 5,000 output at $0.60/1M.
COST_PER_CALL = 10_000 * 0.15e-6 + 5_000 * 0.60e-6
# A slow reply keeps several calls in flight when the cap is crossed.
PRICEY_SLOW_REPLY = FakeReply(prompt_tokens=10_000, completion_tokens=5_000, delay_s=0.1)


def _worker(settings: LlmSettings, root: Path, worker: int) -> list[str | None]:
    client = client_for(settings, root, jobs=JOBS)
    return [
        client.propose(title_prompt(), {"request": f"worker {worker} candidate {i}"}, TitleProposal).skip_reason
        for i in range(CANDIDATES_PER_WORKER)
    ]


def _assert_cap_held(root: Path, provider: FakeProvider, skip_reasons: list[str | None]) -> None:
    calls = provider.request_count
    calls_to_reach_cap = math.ceil(CAP_USD / COST_PER_CALL)
    usage = read_llm_usage(root, SCOPE)
    assert len(skip_reasons) == JOBS * CANDIDATES_PER_WORKER
    assert skip_reasons.count(None) == calls == usage.calls
    assert skip_reasons.count("budget_exhausted") == usage.budget_exhausted == len(skip_reasons) - calls
    # Every call admitted below the cap finishes: the cap is reached, and the calls past
    # it are only those that were in flight then (fewer than jobs).
    assert calls_to_reach_cap <= calls <= calls_to_reach_cap + JOBS - 1
    assert usage.spend_usd == pytest.approx(calls * COST_PER_CALL)
    assert CAP_USD <= usage.spend_usd <= CAP_USD + JOBS * COST_PER_CALL
    ledger = read_spend_ledger(root, SCOPE)
    assert ledger is not None and (ledger.max_spend_usd, ledger.jobs) == (CAP_USD, JOBS)


def test_fake_provider_spend_cap_holds_across_4_threads(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.default = PRICEY_SLOW_REPLY
    settings = settings_for(tmp_path, fake_provider.api_base, max_spend_usd=CAP_USD)

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        results = list(pool.map(lambda worker: _worker(settings, tmp_path, worker), range(JOBS)))

    _assert_cap_held(tmp_path, fake_provider, [reason for result in results for reason in result])


# Separate processes share only the file-locked ledger. spawn children start as fresh
# interpreters: plain fork copies this long-lived test process, whose other threads
# (Docker, Dagster) may hold locks the child would then wait on for ever, and a forkserver
# may already have been started by an earlier test (Dagster's multiprocess executor uses
# one) in a state this test does not control. The children reach the fake provider over
# HTTP on 127.0.0.1.
@pytest.mark.timeout(180)
def test_fake_provider_spend_cap_holds_across_4_processes(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.default = PRICEY_SLOW_REPLY
    settings = settings_for(tmp_path, fake_provider.api_base, max_spend_usd=CAP_USD)
    context = multiprocessing.get_context("spawn")

    # An executor, not multiprocessing.Pool: Pool's context exit calls terminate(), which
    # hung for 180 s under load once LiteLLM's worker threads were up; shutdown joins.
    with ProcessPoolExecutor(JOBS, mp_context=context) as pool:
        results = list(pool.map(_worker, [settings] * JOBS, [tmp_path] * JOBS, range(JOBS)))

    _assert_cap_held(tmp_path, fake_provider, [reason for result in results for reason in result])


def test_fake_provider_cached_replies_stay_free_after_the_cap(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.default = PRICEY_SLOW_REPLY
    settings = settings_for(tmp_path, fake_provider.api_base, max_spend_usd=COST_PER_CALL / 2)
    client = client_for(settings, tmp_path)
    first = client.propose(title_prompt(), {"request": "first"}, TitleProposal)

    second = client.propose(title_prompt(), {"request": "second"}, TitleProposal)
    first_again = client.propose(title_prompt(), {"request": "first"}, TitleProposal)

    assert first.ok and second.skip_reason == "budget_exhausted"
    assert first_again.ok and first_again.cache_hit
    assert fake_provider.request_count == 1


def test_fake_provider_zero_cap_is_unlimited(tmp_path: Path, fake_provider: FakeProvider) -> None:
    fake_provider.default = FakeReply(prompt_tokens=10_000_000, completion_tokens=0)
    client = client_for(settings_for(tmp_path, fake_provider.api_base, max_spend_usd=0), tmp_path)

    outcomes = [client.propose(title_prompt(), {"request": str(i)}, TitleProposal) for i in range(3)]

    assert all(outcome.ok for outcome in outcomes)
    assert read_llm_usage(tmp_path, SCOPE).spend_usd == pytest.approx(3 * 10_000_000 * 0.15e-6)
