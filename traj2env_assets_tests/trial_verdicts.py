"""A trial's verdict for tests that read it: every trial the verifier ran has one."""

from __future__ import annotations

from typing import Any

from traj2env_assets.verification.trial import TrialResult


def verdict_of(result: TrialResult) -> dict[str, Any]:
    assert result.verdict is not None, result.control
    return result.verdict
