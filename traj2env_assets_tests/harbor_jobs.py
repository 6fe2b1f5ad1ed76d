"""``harbor run`` of several agents on one dataset, in our no-network environment.

The agents' jobs run side by side: a Harbor trial mostly waits on the engine (compose up,
builds, container starts), so two jobs of two trials each finish far sooner than one
after the other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from traj2env_assets.harbor.no_network_environment import IMPORT_PATH

HARBOR = Path(sys.executable).parent / "harbor"


def run_harbor_agents(dataset: Path, agents: list[str], jobs: Path, *, timeout_s: float = 1800) -> dict[str, dict[str, dict]]:
    """Every agent's trial results (``result.json``) by task name; asserts each job succeeded."""
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    running = {
        agent: subprocess.Popen(
            [str(HARBOR), "run", "-p", str(dataset), "-a", agent, "-e", IMPORT_PATH,
             "--jobs-dir", str(jobs), "--job-name", agent, "-n", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )
        for agent in agents
    }
    results: dict[str, dict[str, dict]] = {}
    for agent, process in running.items():
        try:
            output, _ = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        assert process.returncode == 0, f"harbor run -a {agent} exited {process.returncode}:\n{output[-3000:]}"
        trials = [json.loads(path.read_text()) for path in (jobs / agent).glob("*/result.json")]
        results[agent] = {trial["task_name"]: trial for trial in trials}
    return results


def rewards_of(results: dict[str, dict]) -> dict[str, float]:
    return {name: result["verifier_result"]["rewards"]["reward"] for name, result in results.items()}
