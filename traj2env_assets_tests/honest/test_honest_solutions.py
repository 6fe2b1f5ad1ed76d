"""The verifier's false positives on the published sample tasks (real Docker engine): for
each Python sample task of the main command's run (claude-code logs: repair intervals,
slugify and events, build romans, extend numstats), two independently written correct
solutions (``traj2env_assets_tests/honest/``, written from the instruction and the visible
project only, different code from the reference) score 1.0 like the reference, behaviour
gate included."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.controls import (
    AgentAction,
    Control,
    ReferenceControl,
)
from traj2env_assets.verification.trial import TrialResult, TrialTask, run_matrix
from traj2env_assets_tests.docker.conftest import engine  # noqa: F401 - the shared real-engine fixture
from traj2env_assets_tests.example_run import ExampleRun
from traj2env_assets_tests.honest.solutions import SOLUTIONS

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FAMILY = {
    "python-pytest-fix": "repair",
    "python-unittest-fix": "repair",
    "python-deps-pytest-fix": "repair",
    "python-build-package": "build",
    "python-extend-feature": "extend",
}


class HonestSolution(Control):
    expected_reward = 1.0

    def __init__(self, name: str, files: dict[str, str]) -> None:
        self.name = name
        self._files = {f"/workspace/{path}": text.encode() for path, text in files.items()}

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files=self._files)


@pytest.fixture(scope="module")
def results(engine: DockerEngine, example_run: ExampleRun) -> dict[str, list[TrialResult]]:  # noqa: F811
    found = {}
    for session, variants in SOLUTIONS.items():
        task_dir = example_run.published(FAMILY[session], f"claude-code/{session}.jsonl")
        assert task_dir is not None, f"no {FAMILY[session]} task published for {session}"
        controls = [ReferenceControl(), *(HonestSolution(name, files) for name, files in variants.items())]
        trial_task = TrialTask(image=engine.build(task_dir / "environment").tag, task_dir=task_dir)
        found[session] = run_matrix(engine, trial_task, controls, parallelism=3).results
    return found


@pytest.mark.parametrize("session", sorted(SOLUTIONS))
def test_the_reference_and_two_honest_solutions_score_1(results: dict[str, list[TrialResult]], session: str) -> None:
    trials = results[session]
    assert len(trials) == 3
    for trial in trials:
        assert trial.reward == 1.0, f"{session} {trial.control}: {trial.verdict}\n{trial.test_output_tail[-2000:]}"
