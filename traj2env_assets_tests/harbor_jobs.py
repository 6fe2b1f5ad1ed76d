"""``harbor run`` of several agents on one dataset, in our no-network environment.

The agents' jobs run side by side: a Harbor trial mostly waits on the engine (compose up,
builds, container starts), so two jobs of two trials each finish far sooner than one
after the other.
"""

from __future__ import annotations

import json
from pathlib import Path

from traj2env_assets.harbor.validate import (
    HarborJobFailed,
    finish_harbor_job,
    start_harbor_job,
)


def run_harbor_agents(
    dataset: Path, agents: list[str], jobs: Path, *, timeout_s: float = 1800
) -> dict[str, dict[str, dict]]:
    """Every agent's trial results (``result.json``) by task name; asserts each job succeeded."""
    running = {agent: start_harbor_job(dataset, agent, jobs) for agent in agents}
    results: dict[str, dict[str, dict]] = {}
    for agent, process in running.items():
        try:
            finish_harbor_job(process, timeout_s=timeout_s)
        except HarborJobFailed as exc:
            raise AssertionError(f"harbor run -a {agent}: {exc}") from exc
        trials = [json.loads(path.read_text()) for path in (jobs / agent).glob("*/result.json")]
        results[agent] = {trial["task_name"]: trial for trial in trials}
    return results


def rewards_of(results: dict[str, dict]) -> dict[str, float]:
    return {name: result["verifier_result"]["rewards"]["reward"] for name, result in results.items()}
