"""Blind rollouts: Harbor's own agents try each task; the solve rate per model goes into
the dataset manifest and the task's card.

An optional quality stage after publishing (``traj2env rollout``). Each agent runs as one
``harbor run`` job over the whole dataset (every model, ``attempts`` trials per task and
model) in the project's no-network environment, the way ``traj2env validate --oracle``
runs the oracle; the agents one after another (each job already runs its trials side by
side), each recorded as its job ends. A trial solved the task when its reward is full
(1.0). A trial without a reward, or whose agent failed for a reason of the run's (the
model server, the environment) rather than its own (:data:`AGENT_FAILURES`), is an error,
not an attempt.

Every run adds its trials to the manifest (:class:`RolloutRun`), so the figures sum every
run ever made. A task no agent and model solved in any attempt is flagged
``never_solved`` (too hard, or broken for a real agent); one every agent and model solved
in every attempt is flagged ``always_solved`` (solved at once, each time: too easy to tell
models apart).
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from harbor.models.trial.result import TrialResult
from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_write_json, atomic_write_text
from traj2env_assets.harbor.dataset import (
    MANIFEST_FILE,
    ModelRollouts,
    RolloutFlag,
    RolloutRun,
    TaskRollouts,
    dataset_lock,
    read_manifest,
    write_dataset,
)
from traj2env_assets.harbor.validate import finish_harbor_job, job_trials, start_harbor_job, trial_task
from traj2env_assets.layout import TaskLayout
from traj2env_assets.stages.publish.card import with_rollouts
from traj2env_assets.stages.report.funnel import refresh_dataset_quality

SOLVED_REWARD = 1.0
# Trial exceptions that are the agent failing the task, not the run failing the agent: it
# ran out of time, or its model out of context or output (Harbor's names).
AGENT_FAILURES = frozenset({"AgentTimeoutError", "ContextLengthExceededError", "OutputLengthExceededError"})
# Agent options every rollout of that agent gets (the user's --agent-kwarg come after and
# win). terminus-2 records its tmux session with asciinema, which the base images lack and
# a container without network cannot install: its attempts cost each trial half a minute.
AGENT_DEFAULTS: dict[str, list[str]] = {"terminus-2": ["record_terminal_session=false"]}
# The whole job's ceiling; each trial is bounded by the task's own agent and verifier timeouts.
JOB_TIMEOUT_S = 6 * 3600
# How long an interrupted ``harbor run`` gets, twice, to stop its trials' containers.
STOP_GRACE_S = 30


class TrialCount(BaseModel):
    """One run's trials of one task by one agent and model."""

    task_id: str
    agent: str
    model: str
    attempts: int = 0
    solved: int = 0
    errors: int = 0
    error: str | None = None
    """The last trial error, for the command's table."""


def count_trials(agent: str, trials: list[TrialResult]) -> list[TrialCount]:
    """The trials of one job, counted per task and model."""
    counts: dict[tuple[str, str], TrialCount] = {}
    for trial in trials:
        model = trial.config.agent.model_name or "-"
        task_id = trial_task(trial)
        count = counts.setdefault((task_id, model), TrialCount(task_id=task_id, agent=agent, model=model))
        rewards = trial.verifier_result.rewards if trial.verifier_result else None
        info = trial.exception_info
        # Harbor verifies the container even after the agent failed; only a failure of the
        # agent's own making is an unsolved attempt. A model server that never answered
        # (connection refused, rate limit) leaves a reward of 0.0 that says nothing of the task.
        if rewards and "reward" in rewards and (info is None or info.exception_type in AGENT_FAILURES):
            count.attempts += 1
            count.solved += int(float(rewards["reward"]) >= SOLVED_REWARD)
        else:
            count.errors += 1
            count.error = f"{info.exception_type}: {info.exception_message}"[:300] if info else "no reward"
    return sorted(counts.values(), key=lambda count: (count.task_id, count.agent, count.model))


def rollout_flag(models: list[ModelRollouts]) -> RolloutFlag | None:
    """``never_solved`` when no agent and model solved the task in any attempt;
    ``always_solved`` when every one solved it in every attempt; else none. A model with
    no attempt yet (only errors) says nothing either way."""
    tried = [model for model in models if model.attempts]
    if not tried:
        return None
    if all(model.solved == 0 for model in tried):
        return "never_solved"
    if all(model.solved == model.attempts for model in tried):
        return "always_solved"
    return None


def _with_run(models: list[ModelRollouts], count: TrialCount, at: str) -> list[ModelRollouts]:
    run = RolloutRun(at=at, attempts=count.attempts, solved=count.solved, errors=count.errors)
    earlier = next((m for m in models if (m.agent, m.model) == (count.agent, count.model)), None)
    runs = [*(earlier.runs if earlier else []), run]
    attempts, solved = sum(r.attempts for r in runs), sum(r.solved for r in runs)
    merged = ModelRollouts(
        agent=count.agent,
        model=count.model,
        attempts=attempts,
        solved=solved,
        solve_rate=solved / attempts if attempts else None,
        runs=runs,
    )
    return [merged if m is earlier else m for m in models] if earlier else [*models, merged]


def merge_rollouts(earlier: list[TaskRollouts], counts: list[TrialCount], at: str) -> list[TaskRollouts]:
    """``earlier`` with one run's ``counts`` added (never replacing an earlier run), flags
    recomputed; tasks in task id order, models in agent and model order."""
    by_task = {task.task_id: task.models for task in earlier}
    for count in counts:
        by_task[count.task_id] = _with_run(by_task.get(count.task_id, []), count, at)
    merged = []
    for task_id in sorted(by_task):
        models = sorted(by_task[task_id], key=lambda model: (model.agent, model.model))
        merged.append(TaskRollouts(task_id=task_id, models=models, flag=rollout_flag(models)))
    return merged


def run_rollouts(
    dataset: Path,
    agent: str,
    models: list[str],
    attempts: int,
    jobs_dir: Path,
    *,
    concurrent: int = 2,
    harbor_options: list[str] | None = None,
    timeout_s: float = JOB_TIMEOUT_S,
) -> list[TrialCount]:
    """The agent's ``harbor run`` job: every model, ``attempts`` trials of every task; its
    folder is ``jobs_dir/AGENT``. Raises HarborJobFailed when the job itself fails (not a trial)."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    options = [*(arg for model in models for arg in ("-m", model)), "-k", str(attempts)]
    defaults = [arg for kwarg in AGENT_DEFAULTS.get(agent, []) for arg in ("--ak", kwarg)]
    process = start_harbor_job(
        dataset,
        agent,
        jobs_dir,
        concurrent=concurrent,
        job_name=agent,
        options=[*options, *defaults, *(harbor_options or [])],
    )
    try:
        finish_harbor_job(process, timeout_s=timeout_s)
    finally:
        if process.poll() is None:  # interrupted: no orphaned harbor
            _stop(process)
    return count_trials(agent, job_trials(jobs_dir / agent))


def _stop(process: subprocess.Popen[str]) -> None:
    """Ctrl-C reaches ``harbor run`` too (one process group) and it then removes its trials'
    containers: wait for that. One the interrupt did not reach gets SIGTERM, which Harbor
    handles as Ctrl-C; a second signal could cut its clean-up short, hence the wait first.
    Killed last."""
    try:
        process.communicate(timeout=STOP_GRACE_S)
        return
    except subprocess.TimeoutExpired:
        process.terminate()
    try:
        process.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def record_rollouts(dataset: Path, counts: list[TrialCount], at: datetime) -> list[TaskRollouts]:
    """Add one run's counts to the manifest and rewrite the cards of the tasks it ran;
    returns the manifest's rollouts."""
    with dataset_lock(dataset):
        manifest = read_manifest(dataset)
        merged = merge_rollouts(manifest.rollouts, counts, at.astimezone(UTC).isoformat(timespec="seconds"))
        ran = {count.task_id for count in counts}
        for task in merged:
            card = TaskLayout(dataset / task.task_id).card_path
            if task.task_id in ran and card.parent.is_dir():
                text = card.read_text(encoding="utf-8") if card.is_file() else f"# {task.task_id}\n"
                atomic_write_text(card, with_rollouts(text, task))
        # The cards are part of the tasks' content hashes: rebuild the manifest, then add the rollouts.
        rebuilt = write_dataset(
            dataset, name=manifest.name, org=manifest.org, seed=manifest.seed, fraction=manifest.test_fraction
        )
        atomic_write_json(dataset / MANIFEST_FILE, rebuilt.model_copy(update={"rollouts": merged}))
        refresh_dataset_quality(dataset)
    return merged
