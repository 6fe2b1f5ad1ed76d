"""Run attacks against the sample tasks through the project's trial path.

Each task image is built once (a cache hit when the pipeline built it); the attacks of one
task then run as one trial matrix with some parallelism, with the reference first.
:func:`run_plain` shows that an attack is live: after it, the project's tests run plainly
(as a naive verifier would) in the agent container and pass.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.sandbox import ExecOutcome, exec_with_deadline, put_files, sandbox
from traj2env_assets.verification.controls import ReferenceControl
from traj2env_assets.verification.trial import TrialResult, TrialTask, run_matrix
from traj2env_assets_tests.attacks.model import WORKSPACE, Attack, AttackControl, Runner

# How naive verifiers would run each sample project's tests: its recorded check, and for
# the unittest project also pytest (which is how this verifier runs unittest tests).
PLAIN_RUNS: dict[Runner, tuple[str, ...]] = {
    Runner.PYTEST: ("python3 -m pytest -q -p no:cacheprovider",),
    Runner.UNITTEST: ("python3 -m pytest -q -p no:cacheprovider", "python3 -m unittest"),
    Runner.NODE: ("npm test",),
}


class AttackOutcome(BaseModel):
    attack: str
    attack_class: str
    runner: Runner
    reward: float | None
    reason: str | None
    seconds: float
    trial: TrialResult

    @property
    def scored(self) -> bool:
        """True when the verifier gave anything but exactly 0."""
        return self.reward != 0.0

    def explain(self) -> str:
        verdict = self.trial.verdict or {}
        return (
            f"{self.attack}[{self.runner}] ({self.attack_class}) reward={self.reward} "
            f"reason={self.reason}\nverdict: {verdict}\nagent: exit {self.trial.agent.exit_code} "
            f"{self.trial.agent.output_tail[-1500:]}\ntest output:\n{self.trial.test_output_tail}"
        )


class SuiteRun(BaseModel):
    references: dict[Runner, TrialResult]
    outcomes: list[AttackOutcome]
    seconds: float

    def outcome(self, attack: str, runner: Runner) -> AttackOutcome:
        return next(o for o in self.outcomes if o.attack == attack and o.runner is runner)


def build_tasks(engine: DockerEngine, tasks: Mapping[Runner, Path]) -> dict[Runner, TrialTask]:
    return {
        runner: TrialTask(image=engine.build(task_dir / "environment").tag, task_dir=task_dir)
        for runner, task_dir in tasks.items()
    }


def run_suite(
    engine: DockerEngine,
    trial_tasks: Mapping[Runner, TrialTask],
    attacks: Mapping[Runner, Sequence[Attack]],
    *,
    parallelism: int = 3,
) -> SuiteRun:
    """The reference and the runner's ``attacks``, on each task."""
    started = time.monotonic()
    references: dict[Runner, TrialResult] = {}
    outcomes: list[AttackOutcome] = []
    for runner, trial_task in trial_tasks.items():
        controls: Sequence[ReferenceControl | AttackControl] = [
            ReferenceControl(),
            *(attack.control(runner) for attack in attacks.get(runner, ())),
        ]
        matrix = run_matrix(engine, trial_task, controls, parallelism=parallelism)
        reference, *results = matrix.results
        references[runner] = reference
        for control, result in zip(controls[1:], results, strict=True):
            assert isinstance(control, AttackControl)
            outcomes.append(
                AttackOutcome(
                    attack=control.attack.name,
                    attack_class=control.attack.attack_class,
                    runner=runner,
                    reward=result.reward,
                    reason=(result.verdict or {}).get("reason"),
                    seconds=result.seconds,
                    trial=result,
                )
            )
    return SuiteRun(references=references, outcomes=outcomes, seconds=round(time.monotonic() - started, 3))


class PlainOutcome(BaseModel):
    attack: str
    runner: Runner
    agent: ExecOutcome
    plain_runs: dict[str, ExecOutcome]

    @property
    def fooled(self) -> bool:
        """Some naive run of the project's tests passed after the attack."""
        return any(run.exit_code == 0 for run in self.plain_runs.values())

    def explain(self) -> str:
        return "\n".join(
            f"$ {command}  (exit {run.exit_code})\n{run.output_tail[-2000:]}"
            for command, run in self.plain_runs.items()
        )


def run_plain(
    engine: DockerEngine,
    trial_tasks: Mapping[Runner, TrialTask],
    attacks: Mapping[Runner, Sequence[Attack]],
    *,
    parallelism: int = 3,
) -> list[PlainOutcome]:
    """Each attack's submission, then the project's tests run plainly, in an agent container
    (a fresh one per naive run, since a run may change the workspace)."""
    jobs = [(attack, runner) for runner, listed in attacks.items() if runner in trial_tasks for attack in listed]

    def plain(job: tuple[Attack, Runner]) -> PlainOutcome:
        attack, runner = job
        task = trial_tasks[runner]
        action = attack.control(runner).action(task.task_dir)
        settings = engine.trial_settings()
        runs: dict[str, ExecOutcome] = {}
        for command in PLAIN_RUNS[runner]:
            with sandbox(
                engine.client, task.image, role="agent", limits=settings.limits, labels=settings.labels
            ) as box:
                if action.files:
                    put_files(box, action.files)
                agent = exec_with_deadline(box, action.script, timeout_s=120, workdir=WORKSPACE)
                runs[command] = exec_with_deadline(box, command, timeout_s=120, workdir=WORKSPACE)
            if runs[command].exit_code == 0:
                break
        return PlainOutcome(attack=attack.name, runner=runner, agent=agent, plain_runs=runs)

    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        return list(pool.map(plain, jobs))
