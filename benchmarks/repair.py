"""Seconds per emitted repair task on the bundled samples: cold, warm, and what a rerun costs.

Cold: an empty workspace, Dagster home and destination, and no task images (base images
present). Warm: the same command again on unchanged inputs. Prints the builds and trial
matrices each run performed, read from the candidates' progress files.

Run: .venv/bin/python benchmarks/repair.py
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import yaml

from traj2env_assets.cli import main
from traj2env_assets.docker_engine.engine import DockerEngine

ROOT = Path(__file__).resolve().parent.parent
SEED = 2  # the seed's smoke run: 38 s for 2 tasks


def _run(config: Path, workspace: Path) -> float:
    started = time.perf_counter()
    assert main(["generate", "--config", str(config), "--workspace", str(workspace)]) == 0
    return time.perf_counter() - started


def _work_done(workspace: Path, since: float) -> tuple[int, int]:
    builds = sum(
        1 for p in workspace.rglob("progress.json") if json.loads(p.read_text()).get("image_built") and p.stat().st_mtime >= since
    )
    trials = sum(1 for p in workspace.rglob("trials.json") if p.stat().st_mtime >= since)
    return builds, trials


def main_benchmark() -> None:
    engine = DockerEngine()
    engine.ensure_bases()
    engine.prune()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = yaml.safe_load((ROOT / "examples" / "trajectory-to-env.yaml").read_text())
        config["source"]["path"] = str(ROOT / "examples" / "trajectories")
        config["output"]["destination"] = str(root / "tasks")
        config_path = root / "config.yaml"
        config_path.write_text(yaml.safe_dump(config))
        os.environ["DAGSTER_HOME"] = str(root / "home")
        rows = []
        for label in ("cold", "warm"):
            since = time.time()
            seconds = _run(config_path, root / "workspace")
            report = json.loads((root / "tasks" / "report.json").read_text())
            builds, trials = _work_done(root / "workspace", since)
            rows.append((label, seconds, report["funnel"]["published"], builds, trials))
        engine.prune()
    print(f"{'run':<6} {'seconds':>8} {'tasks':>6} {'s/task':>7} {'builds':>7} {'trial matrices':>15}")
    for label, seconds, tasks, builds, trials in rows:
        print(f"{label:<6} {seconds:8.1f} {tasks:6d} {seconds / max(tasks, 1):7.1f} {builds:7d} {trials:15d}")
    cold, warm = rows[0][1], rows[1][1]
    print(f"warm / cold = {warm / cold:.1%} (target < 10%); cold s/task target < 15 s; seed smoke run: {38 / SEED:.1f} s/task")


if __name__ == "__main__":
    main_benchmark()
