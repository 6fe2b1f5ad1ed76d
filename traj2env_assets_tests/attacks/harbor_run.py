"""Attacks through ``harbor run``: one Harbor job per sample task, one agent per attack.

Each job's config lists the task and one :class:`AttackAgent` per attack (its kwargs name
the attack), plus Harbor's oracle as the reference and its no-op agent, and runs in our
no-network environment (see ``traj2env_assets/harbor/no_network_environment.py``).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel

from traj2env_assets.harbor.no_network_environment import (
    IMPORT_PATH as ENVIRONMENT_IMPORT_PATH,
)
from traj2env_assets.harbor.validate import HARBOR
from traj2env_assets_tests.attacks.harbor_agent import IMPORT_PATH as AGENT_IMPORT_PATH
from traj2env_assets_tests.attacks.model import Attack, Runner

REFERENCE = "oracle"
NOOP = "nop"


class HarborOutcome(BaseModel):
    agent: str
    runner: Runner
    reward: float | None
    exception: str | None
    result_path: Path


class HarborRun(BaseModel):
    outcomes: list[HarborOutcome]
    jobs_dir: Path
    seconds: float

    def reference(self, runner: Runner) -> HarborOutcome:
        return next(o for o in self.outcomes if o.runner is runner and o.agent == REFERENCE)

    def noop(self, runner: Runner) -> HarborOutcome:
        return next(o for o in self.outcomes if o.runner is runner and o.agent == NOOP)

    def attacks(self) -> list[HarborOutcome]:
        return [o for o in self.outcomes if o.agent not in (REFERENCE, NOOP)]


def job_config(runner: Runner, task_dir: Path, attacks: Sequence[Attack], jobs_dir: Path, concurrency: int) -> dict:
    agents = [{"name": REFERENCE}, {"name": NOOP}] + [
        {"import_path": AGENT_IMPORT_PATH, "kwargs": {"attack": attack.name, "runner": runner.value}}
        for attack in attacks
    ]
    return {
        "job_name": f"attacks-{runner}",
        "jobs_dir": str(jobs_dir),
        "n_concurrent_trials": concurrency,
        "environment": {"import_path": ENVIRONMENT_IMPORT_PATH},
        "tasks": [{"path": str(task_dir)}],
        "agents": agents,
    }


def run_harbor(
    tasks: Mapping[Runner, Path],
    attacks: Mapping[Runner, Sequence[Attack]],
    jobs_dir: Path,
    *,
    concurrency: int = 2,
    timeout_s: float = 3600,
) -> HarborRun:
    """One ``harbor run -c <job config>`` per runner, the jobs side by side (a trial mostly
    waits on the engine); every trial's reward."""
    started = time.monotonic()
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    running: dict[Runner, subprocess.Popen[str]] = {}
    for runner, task_dir in tasks.items():
        config = jobs_dir / f"attacks-{runner}.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(yaml.safe_dump(job_config(runner, task_dir, attacks[runner], jobs_dir, concurrency)))
        running[runner] = subprocess.Popen(
            [str(HARBOR), "run", "-c", str(config), "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
    failures = []
    for runner, process in running.items():
        try:
            output, _ = process.communicate(timeout=max(1.0, timeout_s - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        if process.returncode != 0:
            failures.append(f"{runner}: exit {process.returncode}\n{output[-3000:]}")
    if failures:
        raise RuntimeError("harbor run failed:\n" + "\n".join(failures))
    outcomes = [
        _outcome(runner, path)
        for runner in tasks
        for path in sorted((jobs_dir / f"attacks-{runner}").glob("*/result.json"))
    ]
    return HarborRun(outcomes=outcomes, jobs_dir=jobs_dir, seconds=round(time.monotonic() - started, 3))


def host_plants(jobs_dir: Path) -> list[str]:
    """Files in the jobs folder with a setuid/setgid bit, and links that lead out of it."""
    root = jobs_dir.resolve()
    found = []
    for path in sorted(jobs_dir.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            target = (path.parent / os.readlink(path)).resolve()
            if not target.is_relative_to(root):
                found.append(f"{path} -> {os.readlink(path)} (resolves to {target})")
        elif info.st_mode & (stat.S_ISUID | stat.S_ISGID):
            found.append(f"{path} mode {stat.filemode(info.st_mode)} owner {info.st_uid}")
    return found


def _outcome(runner: Runner, path: Path) -> HarborOutcome:
    result = json.loads(path.read_text())
    agent = result["config"]["agent"]
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    exception = result.get("exception_info")
    return HarborOutcome(
        agent=agent.get("kwargs", {}).get("attack") or agent.get("name") or "?",
        runner=runner,
        reward=rewards.get("reward"),
        exception=json.dumps(exception)[:2000] if exception else None,
        result_path=path,
    )
