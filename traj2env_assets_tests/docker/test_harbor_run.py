"""`harbor run` on the written tasks: oracle scores 1.0, nop 0.0, with no network.

Harbor's stock ``-e docker`` cannot run ``no-network`` tasks on an engine without a
registry (see traj2env_assets/harbor/no_network_environment.py), so these runs use
Harbor's environment import path with :class:`NoNetworkDockerEnvironment`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.harbor.no_network_environment import IMPORT_PATH
from traj2env_assets.harbor.writer import WrittenTask

pytestmark = pytest.mark.docker

HARBOR = Path(sys.executable).parent / "harbor"


def _harbor_leftovers(client: docker.DockerClient, task_ids: list[str]) -> list[str]:
    """Compose containers, networks and volumes of these tasks' trials that still exist."""
    compose = {"label": "com.docker.compose.project"}
    objects = [
        *(c.attrs["Labels"] for c in client.containers.list(all=True, sparse=True, filters=compose)),
        *(n.attrs["Labels"] for n in client.networks.list(filters=compose)),
        *(v.attrs["Labels"] for v in client.volumes.list(filters=compose)),
    ]
    projects = [labels["com.docker.compose.project"] for labels in objects]
    return [p for p in projects if any(p.startswith(f"{task_id}__") for task_id in task_ids)]


def _harbor_run(dataset: Path, agent: str, jobs: Path) -> dict[str, dict]:
    argv = [str(HARBOR), "run", "-p", str(dataset), "-a", agent, "-e", IMPORT_PATH,
            "--jobs-dir", str(jobs), "--job-name", agent, "-n", "2"]
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return {
        json.loads(path.read_text())["task_name"]: json.loads(path.read_text())
        for path in (jobs / agent).glob("*/result.json")
    }


_PROBE = """ls /sys/class/net
cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max
grep NoNewPrivs /proc/self/status | tr -d ' \\t'
cp /bin/true /logs/agent/suid-true && chmod 4755 /logs/agent/suid-true
ln -s /etc /logs/agent/host-etc
"""


@pytest.fixture(scope="module")
def harbor_dataset(
    tmp_path_factory: pytest.TempPathFactory, python_written: WrittenTask, node_written: WrittenTask
) -> Path:
    dataset = tmp_path_factory.mktemp("harbor-dataset")
    for task in (python_written, node_written):
        copy = dataset / task.task_id
        shutil.copytree(task.path, copy)
        # The oracle's log then shows the agent container's network interfaces, its pids
        # cap and no-new-privileges; it also plants a setuid file and a link to the host's
        # /etc in the host-mounted log folder.
        solve = copy / "solution" / "solve.sh"
        solve.write_text(solve.read_text() + _PROBE)
    return dataset


def test_oracle_scores_one_and_nop_zero_without_network(
    engine: DockerEngine, harbor_dataset: Path, tmp_path: Path
) -> None:
    oracle = _harbor_run(harbor_dataset, "oracle", tmp_path / "jobs")
    nop = _harbor_run(harbor_dataset, "nop", tmp_path / "jobs")
    assert {name: r["verifier_result"]["rewards"]["reward"] for name, r in oracle.items()} == {
        "traj2env/calc-fix": 1.0,
        "traj2env/slug-fix": 1.0,
    }
    assert {name: r["verifier_result"]["rewards"]["reward"] for name, r in nop.items()} == {
        "traj2env/calc-fix": 0.0,
        "traj2env/slug-fix": 0.0,
    }
    assert all(r["verifier_environment_mode"] == "separate" for r in oracle.values())
    oracle_logs = sorted((tmp_path / "jobs" / "oracle").glob("*/agent/oracle.txt"))
    assert [log.read_text().split() for log in oracle_logs] == [["lo", "512", "NoNewPrivs:1"]] * 2
    planted = sorted((tmp_path / "jobs" / "oracle").glob("*/agent/suid-true"))
    assert len(planted) == 2 and not any(path.stat().st_mode & 0o6000 for path in planted)
    assert not list((tmp_path / "jobs" / "oracle").glob("*/agent/host-etc"))
    assert _harbor_leftovers(engine.client, ["calc-fix", "slug-fix"]) == []
