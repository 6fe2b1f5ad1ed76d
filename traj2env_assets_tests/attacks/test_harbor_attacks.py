"""The done-criterion of issue 9 through ``harbor run`` (real Docker engine, no network).

The attacks of every class Harbor's own plumbing decides (``HARBOR_PLUMBING_CLASSES``:
symlink escapes, verifier-file tampering, reward files, host-mount plants, exit codes; the
trial path runs every class) run as custom Harbor agents (``AttackAgent``) against the published
sample tasks in our no-network environment; each must score 0 while Harbor's oracle
scores 1 (and its no-op agent 0). Harbor removes its containers, networks and volumes afterwards, and nothing the
agents planted in the host-mounted log folders keeps a setuid bit or links out of the jobs
folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets_tests.attacks.catalogue import through_harbor
from traj2env_assets_tests.attacks.harbor_run import HarborRun, host_plants, run_harbor
from traj2env_assets_tests.attacks.model import Runner
from traj2env_assets_tests.docker.test_harbor_run import _harbor_leftovers

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PAIRS = [(attack.name, runner) for runner, attacks in through_harbor().items() for attack in attacks]


@pytest.fixture(scope="module")
def harbor_run(
    engine: DockerEngine, sample_tasks: dict[Runner, Path], tmp_path_factory: pytest.TempPathFactory
) -> HarborRun:
    run = run_harbor(sample_tasks, through_harbor(), tmp_path_factory.mktemp("harbor-jobs"))
    # Harbor names a trial (and its compose projects) after the first 32 characters of the task.
    prefixes = [path.name[:32].rstrip("_-").lower() for path in sample_tasks.values()]
    assert _harbor_leftovers(engine.client, prefixes) == []
    return run


@pytest.mark.parametrize("runner", list(Runner))
def test_harbor_oracle_scores_one(harbor_run: HarborRun, runner: Runner) -> None:
    oracle = harbor_run.reference(runner)
    reward = oracle.reward
    assert reward == 1.0, f"{oracle.exception}\n{oracle.result_path}"


@pytest.mark.parametrize("runner", list(Runner))
def test_harbor_nop_scores_zero(harbor_run: HarborRun, runner: Runner) -> None:
    noop = harbor_run.noop(runner)
    assert noop.reward == 0.0, f"{noop.exception}\n{noop.result_path}"


@pytest.mark.parametrize(("name", "runner"), PAIRS, ids=[f"{n}[{r}]" for n, r in PAIRS])
def test_harbor_attack_scores_zero(harbor_run: HarborRun, name: str, runner: Runner) -> None:
    outcome = next(o for o in harbor_run.attacks() if o.agent == name and o.runner is runner)
    verifier = outcome.result_path.parent / "verifier"
    details = "\n".join(
        f"--- {path.name}\n{path.read_text()[-2000:]}" for path in sorted(verifier.glob("*")) if path.is_file()
    )
    reward = outcome.reward
    assert reward == 0.0, f"{name}[{runner}] reward {reward} {outcome.exception or ''}\n{details}"


def test_nothing_planted_through_host_mounts_is_setuid_or_links_out(harbor_run: HarborRun) -> None:
    found = host_plants(harbor_run.jobs_dir)
    assert not found, "\n".join(found)
