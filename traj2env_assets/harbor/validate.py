"""``traj2env validate --oracle``: the oracle and the no-op agent through ``harbor run``.

A published task is sound when Harbor's own ``oracle`` agent (the reference solution)
scores 1.0 and its ``nop`` agent (no change at all) scores 0.0. Both run as ``harbor run``
jobs side by side (a trial mostly waits on the engine) in :data:`IMPORT_PATH`'s
environment, the one that enforces the tasks' ``no-network`` policy on an engine without
a registry. Results are read from Harbor's own ``TrialResult`` files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harbor.models.trial.result import TrialResult
from pydantic import BaseModel, ValidationError

from traj2env_assets.harbor.no_network_environment import IMPORT_PATH
from traj2env_assets.layout import TaskLayout

HARBOR = Path(sys.executable).parent / "harbor"
EXPECTED_REWARD: dict[str, float] = {"oracle": 1.0, "nop": 0.0}


class AgentOutcome(BaseModel):
    reward: float | None = None
    error: str | None = None
    """Why there is no reward: the trial's exception, or no trial at all."""


class TaskValidation(BaseModel):
    task: str
    outcomes: dict[str, AgentOutcome]

    @property
    def passed(self) -> bool:
        return all(self.outcomes[agent].reward == expected for agent, expected in EXPECTED_REWARD.items())


class HarborJobFailed(RuntimeError):
    """``harbor run`` itself failed (not a trial): its exit code and the end of its output."""


def start_harbor_job(
    dataset: Path,
    agent: str,
    jobs_dir: Path,
    *,
    concurrent: int = 2,
    job_name: str | None = None,
    options: list[str] | None = None,
) -> subprocess.Popen[str]:
    """``harbor run -a AGENT`` on every task under ``dataset``; results in ``jobs_dir/JOB_NAME``
    (the agent's name by default). ``options``: more ``harbor run`` arguments (models, attempts)."""
    command = [
        str(HARBOR),
        "run",
        "-p",
        str(dataset),
        "-a",
        agent,
        "-e",
        IMPORT_PATH,
        "--jobs-dir",
        str(jobs_dir),
        "--job-name",
        job_name or agent,
        "-n",
        str(concurrent),
        *(options or []),
    ]
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def finish_harbor_job(process: subprocess.Popen[str], *, timeout_s: float) -> str:
    """Wait for the job; its output. A job that times out is killed; a failed job raises."""
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise HarborJobFailed(f"harbor run timed out after {timeout_s:.0f} s:\n{output[-3000:]}") from None
    if process.returncode != 0:
        raise HarborJobFailed(f"harbor run exited {process.returncode}:\n{output[-3000:]}")
    return output


def job_trials(job_dir: Path) -> list[TrialResult]:
    """Every trial of one job (each trial's ``result.json``)."""
    trials = []
    for path in sorted(job_dir.glob("*/result.json")):
        try:
            trials.append(TrialResult.model_validate_json(path.read_text(encoding="utf-8")))
        except (OSError, ValidationError):
            continue  # a job-level or unreadable file: the task then shows "no trial"
    return trials


def trial_task(trial: TrialResult) -> str:
    """The trial's task directory name (Harbor's ``task_name`` is the task.toml's ``org/name``)."""
    task_dir = trial.config.task.path
    return task_dir.name if task_dir else trial.task_name


def trial_results(job_dir: Path) -> dict[str, TrialResult]:
    """Every trial of a job of one attempt per task, by its task's directory name."""
    return {trial_task(trial): trial for trial in job_trials(job_dir)}


def _outcome(trial: TrialResult | None) -> AgentOutcome:
    if trial is None:
        return AgentOutcome(error="no trial")
    rewards = trial.verifier_result.rewards if trial.verifier_result else None
    if trial.exception_info is not None:
        info = trial.exception_info
        return AgentOutcome(error=f"{info.exception_type}: {info.exception_message}"[:300])
    if not rewards or "reward" not in rewards:
        return AgentOutcome(error="no reward")
    return AgentOutcome(reward=float(rewards["reward"]))


def task_names(dataset: Path) -> list[str]:
    return sorted(p.name for p in dataset.iterdir() if p.is_dir() and TaskLayout(p).config_path.is_file())


def validate_dataset(
    dataset: Path, jobs_dir: Path, *, concurrent: int = 2, timeout_s: float = 3600
) -> list[TaskValidation]:
    """Run oracle and nop on every task under ``dataset``; one row per task."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    running = {agent: start_harbor_job(dataset, agent, jobs_dir, concurrent=concurrent) for agent in EXPECTED_REWARD}
    trials: dict[str, dict[str, TrialResult]] = {}
    try:
        for agent, process in running.items():
            finish_harbor_job(process, timeout_s=timeout_s)
            trials[agent] = trial_results(jobs_dir / agent)
    finally:
        for process in running.values():
            if process.poll() is None:  # the other job, when one failed: no orphaned harbor
                process.kill()
                process.communicate()
    return [
        TaskValidation(task=name, outcomes={agent: _outcome(trials[agent].get(name)) for agent in EXPECTED_REWARD})
        for name in task_names(dataset)
    ]
