"""The red-team attack suite (``traj2env_assets_tests/redteam``) through ``harbor run``.

One Harbor job per task directory of the tasks folder: Harbor's oracle (the reference), its
no-op agent and one ``RedTeamAgent`` per applicable attack, in our no-network environment.
Prints a row per trial (agent, task, reward) and the totals; exit 1 when any attack scores
above 0 or the oracle below 1.

    .venv/bin/python benchmarks/redteam_harbor.py [TASKS_DIR] [--jobs-dir DIR] [--concurrency 2]
        [--one-per-class] [--task SUBSTR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

import yaml

from traj2env_assets.harbor.no_network_environment import (
    IMPORT_PATH as ENVIRONMENT_IMPORT_PATH,
)
from traj2env_assets.harbor.validate import HARBOR
from traj2env_assets_tests.redteam.catalogue import applicable
from traj2env_assets_tests.redteam.harbor_agent import IMPORT_PATH as AGENT_IMPORT_PATH
from traj2env_assets_tests.redteam.view import TaskView

DEFAULT_TASKS = Path("/tmp/gate-ws/tasks")


def job_config(task_dir: Path, jobs_dir: Path, concurrency: int, one_per_class: bool) -> dict:
    attacks = applicable(TaskView(task_dir))
    if one_per_class:
        attacks = list({attack.cls: attack for attack in reversed(attacks)}.values())
    agents = [{"name": "oracle"}, {"name": "nop"}] + [
        {"import_path": AGENT_IMPORT_PATH, "kwargs": {"attack": attack.name, "task_dir": str(task_dir)}}
        for attack in attacks
    ]
    return {
        "job_name": task_dir.name,
        "jobs_dir": str(jobs_dir),
        "n_concurrent_trials": concurrency,
        "environment": {"import_path": ENVIRONMENT_IMPORT_PATH},
        "tasks": [{"path": str(task_dir)}],
        "agents": agents,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="?", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--jobs-dir", type=Path)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--one-per-class", action="store_true", help="the first applicable attack of each class")
    parser.add_argument("--task", action="append", help="only task ids containing this text (repeatable)")
    args = parser.parse_args()
    jobs_dir = args.jobs_dir or Path(tempfile.mkdtemp(prefix="traj2env-redteam-harbor-"))
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    rows, failed = [], False
    for task_dir in sorted(p for p in args.tasks.iterdir() if (p / "task.toml").is_file()):
        if args.task and not any(part in task_dir.name for part in args.task):
            continue
        config = jobs_dir / f"{task_dir.name}.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(yaml.safe_dump(job_config(task_dir, jobs_dir, args.concurrency, args.one_per_class)))
        run = subprocess.run(
            [str(HARBOR), "run", "-c", str(config), "--quiet"], capture_output=True, text=True, env=env, check=False
        )
        if run.returncode != 0:
            print(f"{task_dir.name}: harbor run exit {run.returncode}\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
            failed = True
            continue
        for path in sorted((jobs_dir / task_dir.name).glob("*/result.json")):
            result = json.loads(path.read_text())
            agent = result["config"]["agent"]
            name = agent.get("kwargs", {}).get("attack") or agent.get("name") or "?"
            reward = ((result.get("verifier_result") or {}).get("rewards") or {}).get("reward")
            rows.append((name, task_dir.name, reward))
    for name, task, reward in rows:
        print(f"{name:40s} {task[-40:]:40s} {reward}")
    attacks = [row for row in rows if row[0] not in ("oracle", "nop")]
    scored = [row for row in attacks if row[2] != 0.0]
    oracle_ok = all(row[2] == 1.0 for row in rows if row[0] == "oracle")
    print(
        f"\n{len(attacks)} attack trials through harbor run; scored above 0 (or no reward): {len(scored)}; "
        f"oracle 1.0 on every task: {oracle_ok}; jobs in {jobs_dir}"
    )
    return 1 if failed or scored or not oracle_ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
