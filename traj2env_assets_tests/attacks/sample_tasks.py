"""The published sample tasks the attacks run against: one repair task per sample project.

The tasks are exactly what the pipeline publishes, trial matrix included: the suite reads
them from its run of the whole example config (``example_run``, :func:`sample_tasks_of`);
the benchmark script runs ``traj2env generate`` (repair) on the three sample sessions
(:func:`publish_sample_tasks`).
"""

from __future__ import annotations

from pathlib import Path

from traj2env_assets_tests.attacks.model import Runner
from traj2env_assets_tests.example_run import published_task, read_report, run_examples

# The Claude Code session of each sample project.
SESSIONS: dict[Runner, str] = {
    Runner.PYTEST: "claude-code/python-pytest-fix.jsonl",
    Runner.UNITTEST: "claude-code/python-unittest-fix.jsonl",
    Runner.NODE: "claude-code/node-npm-test-fix.jsonl",
}


class SampleTaskError(RuntimeError):
    """The pipeline did not publish a repair task for every sample project."""


def sample_tasks_of(report: dict) -> dict[Runner, Path]:
    """The repair task directory a run's ``report`` lists for each runner's session."""
    tasks = {runner: published_task(report, "repair", session) for runner, session in SESSIONS.items()}
    if missing := [str(runner) for runner, path in tasks.items() if path is None]:
        raise SampleTaskError(f"no published repair task for {missing}")
    return {runner: path for runner, path in tasks.items() if path is not None}


def publish_sample_tasks(root: Path) -> dict[Runner, Path]:
    """Run ``traj2env generate`` (repair only) on the three sessions into ``root``."""
    return sample_tasks_of(run_examples(root, sessions=SESSIONS.values(), families=["repair"], rerun=False).first)


def published_sample_tasks(root: Path) -> dict[Runner, Path]:
    """The tasks an earlier ``publish_sample_tasks(root)`` published."""
    return sample_tasks_of(read_report(root))
