"""Session fixtures for the attack suite: the sample tasks the pipeline publishes (the
repair tasks of the three sample sessions the attacks target, as the suite's run of the main
command, ``example_run``, published them), and one attack of every class run once through the
trial path (the tests then read its outcomes; benchmarks/attack_suite.py runs the whole
catalogue)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.verification.trial import TrialTask
from traj2env_assets_tests import timings
from traj2env_assets_tests.attacks.catalogue import one_per_class
from traj2env_assets_tests.attacks.model import Runner
from traj2env_assets_tests.attacks.sample_tasks import sample_tasks_of
from traj2env_assets_tests.attacks.suite import PlainOutcome, SuiteRun, build_tasks, run_plain, run_suite
from traj2env_assets_tests.docker.conftest import engine  # noqa: F401 - the shared real-engine fixture
from traj2env_assets_tests.example_run import ExampleRun

PARALLELISM = 3


@pytest.fixture(scope="session")
def sample_tasks(example_run: ExampleRun) -> dict[Runner, Path]:
    return sample_tasks_of(example_run.first)


@pytest.fixture(scope="session")
def trial_tasks(engine: DockerEngine, sample_tasks: dict[Runner, Path]) -> dict[Runner, TrialTask]:  # noqa: F811 - fixture
    return build_tasks(engine, sample_tasks)


@pytest.fixture(scope="session")
def suite_run(engine: DockerEngine, trial_tasks: dict[Runner, TrialTask], request: pytest.FixtureRequest) -> SuiteRun:  # noqa: F811 - fixture
    attacks = one_per_class()
    run = run_suite(engine, trial_tasks, attacks, parallelism=PARALLELISM)
    scored = [o for o in run.outcomes if o.scored]
    _record(
        request,
        f"trial path: {len({a.name for listed in attacks.values() for a in listed})} attacks (one per class), "
        f"{len(run.outcomes)} trials + {len(run.references)} references "
        f"in {run.seconds:.1f} s (parallelism {PARALLELISM}); {len(scored)} scored above 0",
    )
    return run


@pytest.fixture(scope="session")
def plain_runs(
    engine: DockerEngine,  # noqa: F811 - the imported fixture
    trial_tasks: dict[Runner, TrialTask],
    request: pytest.FixtureRequest,
) -> list[PlainOutcome]:
    started = time.monotonic()
    live = {runner: [a for a in listed if a.fools_plain_run] for runner, listed in one_per_class().items()}
    runs = run_plain(engine, trial_tasks, live, parallelism=PARALLELISM)
    _record(request, f"plain runs: {len(runs)} in {time.monotonic() - started:.1f} s")
    return runs


def _record(request: pytest.FixtureRequest, line: str) -> None:
    timings.record(request.config, "attack suite timing", line)
