"""`harbor run` on the written dataset (tasks plus dataset.json and splits.json): oracle
scores 1.0, nop 0.0, with no network.

The tasks: the hand-made Python and Node repair tasks, and the extend task of the
bundled Codex multi-request sample (recorded mode: the session's own new tests, reward
mode ``split``).

Harbor's stock ``-e docker`` cannot run ``no-network`` tasks on an engine without a
registry (see traj2env_assets/harbor/no_network_environment.py), so these runs use
Harbor's environment import path with :class:`NoNetworkDockerEnvironment`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docker
import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import TaskSource
from traj2env_assets.families.extend.candidates import mine_extend_candidates
from traj2env_assets.families.extend.task import extend_task_spec
from traj2env_assets.harbor.dataset import read_manifest, write_dataset
from traj2env_assets.harbor.writer import WrittenTask, write_task
from traj2env_assets_tests.families.conftest import EXAMPLES, record_for
from traj2env_assets_tests.harbor_jobs import rewards_of, run_harbor_agents

pytestmark = pytest.mark.docker


def _harbor_leftovers(client: docker.DockerClient, prefixes: list[str]) -> list[str]:
    """Compose containers, networks and volumes that still exist of the trials whose names
    start with one of ``prefixes`` (a task's name, or one trial's own name)."""
    compose = {"label": "com.docker.compose.project"}
    objects = [
        *(c.attrs["Labels"] for c in client.containers.list(all=True, sparse=True, filters=compose)),
        *(n.attrs["Labels"] for n in client.networks.list(filters=compose)),
        *(v.attrs["Labels"] for v in client.volumes.list(filters=compose)),
    ]
    projects = [labels["com.docker.compose.project"] for labels in objects]
    return [p for p in projects if any(p.startswith(f"{prefix}__") for prefix in prefixes)]


_PROBE = """ls /sys/class/net
cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max
grep NoNewPrivs /proc/self/status | tr -d ' \\t'
cp /bin/true /logs/agent/suid-true && chmod 4755 /logs/agent/suid-true
ln -s /etc /logs/agent/host-etc
"""


@pytest.fixture(scope="module")
def extend_written(tmp_path_factory: pytest.TempPathFactory) -> WrittenTask:
    record = record_for(EXAMPLES / "codex/python-extend-feature.jsonl", tmp_path_factory.mktemp("extend-replay"))
    candidate = mine_extend_candidates(record, "numstats")[0].candidate
    spec = extend_task_spec(candidate, None, TaskSource(partition_key="numstats", source_model=None, org="traj2env"))
    return write_task(spec, tmp_path_factory.mktemp("extend-task"))


@pytest.fixture(scope="module")
def harbor_dataset(
    tmp_path_factory: pytest.TempPathFactory,
    python_written: WrittenTask,
    node_written: WrittenTask,
    extend_written: WrittenTask,
    build_written: WrittenTask,
) -> Path:
    dataset = tmp_path_factory.mktemp("harbor-dataset")
    for task in (python_written, node_written, extend_written, build_written):
        copy = dataset / task.task_id
        shutil.copytree(task.path, copy)
        # The oracle's log then shows the agent container's network interfaces, its pids
        # cap and no-new-privileges; it also plants a setuid file and a link to the host's
        # /etc in the host-mounted log folder.
        solve = copy / "solution" / "solve.sh"
        solve.write_text(solve.read_text() + _PROBE)
    # As publishing leaves it: the manifest and splits sit beside the task directories.
    write_dataset(dataset)
    return dataset


def test_oracle_scores_one_and_nop_zero_without_network(
    engine: DockerEngine, harbor_dataset: Path, tmp_path: Path
) -> None:
    results = run_harbor_agents(harbor_dataset, ["oracle", "nop"], tmp_path / "jobs")
    oracle, nop = results["oracle"], results["nop"]
    assert rewards_of(oracle) == {
        "traj2env/calc-fix": 1.0,
        "traj2env/slug-fix": 1.0,
        "traj2env/numstats-extend-2": 1.0,
        "traj2env/calc-build": 1.0,
    }
    assert rewards_of(nop) == {
        "traj2env/calc-fix": 0.0,
        "traj2env/slug-fix": 0.0,
        "traj2env/numstats-extend-2": 0.0,
        "traj2env/calc-build": 0.0,
    }
    assert all(r["verifier_environment_mode"] == "separate" for r in oracle.values())
    manifest = read_manifest(harbor_dataset)
    assert {f"traj2env/{task.task_id}" for task in manifest.tasks} == set(oracle) == set(nop)
    oracle_logs = sorted((tmp_path / "jobs" / "oracle").glob("*/agent/oracle.txt"))
    assert [log.read_text().split() for log in oracle_logs] == [["lo", "512", "NoNewPrivs:1"]] * 4
    planted = sorted((tmp_path / "jobs" / "oracle").glob("*/agent/suid-true"))
    assert len(planted) == 4 and not any(path.stat().st_mode & 0o6000 for path in planted)
    assert not list((tmp_path / "jobs" / "oracle").glob("*/agent/host-etc"))
    # This run's trials only: another test's Harbor trial of the same task may be running.
    trial_names = [result["trial_name"].lower() for agent in results.values() for result in agent.values()]
    assert len(trial_names) == 8 and _harbor_leftovers(engine.client, trial_names) == []
