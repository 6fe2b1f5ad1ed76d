from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.llm.ledger import SpendLedger, ledger_path, read_llm_usage, read_spend_ledger
from traj2env_assets.llm.usage import LlmUsage


def test_usage_adds_up_counters_and_declines_by_reason() -> None:
    total = LlmUsage.total(
        [
            LlmUsage(calls=1, tokens_in=10, tokens_out=5, spend_usd=0.25, declines={"truncated": 1}),
            LlmUsage(cache_hits=2),
            LlmUsage(calls=1, spend_usd=0.5, declines={"truncated": 1, "invalid": 1}),
        ]
    )

    assert total == LlmUsage(
        calls=2,
        cache_hits=2,
        tokens_in=10,
        tokens_out=5,
        spend_usd=0.75,
        declines={"invalid": 1, "truncated": 2},
    )
    assert total.declined == 3


def test_run_without_model_calls_reads_as_zero_usage(tmp_path: Path) -> None:
    assert read_spend_ledger(tmp_path, "never-ran") is None
    assert read_llm_usage(tmp_path, "never-ran") == LlmUsage()


def test_ledger_admits_until_the_cap_then_counts_exhausted_candidates(tmp_path: Path) -> None:
    ledger = SpendLedger(tmp_path, "backfill-1", max_spend_usd=1.0, jobs=2)

    assert ledger.admit()
    ledger.record(LlmUsage(calls=1, spend_usd=1.2))
    assert not ledger.admit()
    assert not ledger.admit()

    assert ledger.usage() == LlmUsage(calls=1, spend_usd=1.2, budget_exhausted=2)
    assert ledger_path(tmp_path, "backfill-1") == tmp_path / "llm_ledger" / "backfill-1.json"


@pytest.mark.parametrize("scope", ["", "../escape", "a/b", "x" * 129])
def test_ledger_scope_cannot_leave_the_ledger_folder(tmp_path: Path, scope: str) -> None:
    with pytest.raises(ValueError, match="spend scope"):
        ledger_path(tmp_path, scope)
