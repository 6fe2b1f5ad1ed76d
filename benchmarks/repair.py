"""Seconds per emitted repair task on the bundled samples: cold, warm, and what the per-candidate ops cost.

Cold: an empty workspace, Dagster home and destination, and none of the samples' task
images (base images present). Warm: the same command again on unchanged inputs. For
each run it prints the image builds, trial matrices and model calls it performed (from
the candidates' status files and report.json) and the Dagster events it wrote.

Before the cold run it removes only the task images of the samples' own candidates
(found by staging them without Docker), never other images or containers: other
pipelines may share the engine. It removes them again at the end.

Op overhead: the Docker work runs as one Dagster op per candidate and stage (dynamic
outputs in graph-backed assets). The figure is the cost of one such step in a run on
the same kind of instance (SQLite), measured with steps that do nothing: (time with N
mapped steps - time with none) / N, times the three Docker steps a task takes.

Run: .venv/bin/python benchmarks/repair.py
"""

import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import yaml
from docker.errors import ImageNotFound

from traj2env_assets.cli import main
from traj2env_assets.config import RunSettings, load_run_config
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import context_hash
from traj2env_assets.families.registry import registered_families
from traj2env_assets.layout import Workspace
from traj2env_assets.lifecycle.status import partition_statuses
from traj2env_assets.sources import register_sources
from traj2env_assets.stages.candidates.mining import mine_partition
from traj2env_assets.stages.convert.conversion import convert_partition
from traj2env_assets.stages.images.images import stage_task
from traj2env_assets.stages.replay.partition import replay_partition
from traj2env_assets.stages.scan.gate import scan_partition

ROOT = Path(__file__).resolve().parent.parent
SEED = 2  # the seed's smoke run: 38 s for 2 tasks
DOCKER_STEPS_PER_TASK = 3  # task image, calibration, trial matrix


def _config(root: Path) -> Path:
    config = yaml.safe_load((ROOT / "examples" / "trajectory-to-env.yaml").read_text())
    config["source"]["path"] = str(ROOT / "examples" / "trajectories")
    config["output"]["destination"] = str(root / "tasks")
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _sample_image_tags(config: Path, scratch: Path, engine: DockerEngine) -> set[str]:
    """The tags the samples' task images get, by staging every candidate without Docker."""
    settings = RunSettings.resolve(load_run_config(config), scratch)
    workspace = Workspace(root=settings.workspace)
    tags = set()
    for key in register_sources(workspace, settings.source.path).new:
        convert_partition(workspace, key)
        scan_partition(workspace, key, enabled=settings.options.scan)
        replay_partition(workspace, key)
        for family in registered_families().selected(settings.options.families):
            mine_partition(workspace, family, key)
            for status in partition_statuses(workspace, family.name, key):
                if status.drop is not None:
                    continue
                staged = stage_task(workspace, family, status, settings.output.org)
                if staged.drop is None and staged.image is not None:
                    environment = Path(staged.image.staged_path) / "environment"
                    tags.add(f"traj2env/env:{context_hash(engine.client, environment, engine.platform)[:32]}")
    return tags


def _remove_images(engine: DockerEngine, tags: set[str]) -> None:
    for tag in tags:
        try:
            engine.client.images.remove(tag, force=True)
        except ImageNotFound:
            continue


def _work_done(workspace: Path, since: float, report: dict) -> tuple[int, int, int]:
    statuses = [json.loads(p.read_text()) for p in workspace.rglob("status.json") if p.stat().st_mtime >= since]
    builds = sum(1 for s in statuses if (s.get("image") or {}).get("built"))
    trials = sum(1 for p in workspace.rglob("trials.json") if p.stat().st_mtime >= since)
    return builds, trials, report["llm_usage"]["calls"]


def _events_of_last_runs(instance: dg.DagsterInstance, count: int) -> int:
    return sum(len(instance.all_logs(run.run_id)) for run in instance.get_runs(limit=count))


def _op_overhead(home: Path, steps: int) -> float:
    """Seconds one mapped Dagster step costs in a run, on a fresh SQLite instance."""
    partitions = dg.DynamicPartitionsDefinition(name="bench")

    @dg.op(out=dg.DynamicOut(int, io_manager_key="refs"), config_schema={"n": int})
    def fan_out(context: dg.OpExecutionContext):
        for index in range(context.op_config["n"]):
            yield dg.DynamicOutput(index, mapping_key=f"c{index}")

    @dg.op(pool="bench", out=dg.Out(int, io_manager_key="refs"))
    def noop(item: int) -> int:
        return item

    @dg.op(ins={"done": dg.In(list[int], input_manager_key="refs")}, out=dg.Out(dg.Nothing))
    def collect(done: list[int]) -> None:
        return None

    @dg.graph_asset(partitions_def=partitions)
    def bench_stage() -> None:
        return collect(fan_out().map(noop).collect())

    defs = dg.Definitions(assets=[bench_stage], resources={"refs": dg.mem_io_manager}, executor=dg.in_process_executor)
    job = defs.resolve_implicit_global_asset_job_def()
    seconds: dict[int, list[float]] = {}
    home.mkdir(parents=True, exist_ok=True)
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        instance.add_dynamic_partitions("bench", ["k"])
        for n in (0, steps, 0, steps):
            config = {
                "ops": {"bench_stage": {"ops": {"fan_out": {"config": {"n": n}}}}},
                "loggers": {"console": {"config": {"log_level": "WARNING"}}},
            }
            started = time.perf_counter()
            job.execute_in_process(instance=instance, partition_key="k", run_config=config)
            seconds.setdefault(n, []).append(time.perf_counter() - started)
    return (min(seconds[steps]) - min(seconds[0])) / steps


def main_benchmark() -> None:
    engine = DockerEngine()
    engine.ensure_bases()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = _config(root)
        overhead = _op_overhead(root / "overhead-home", steps=24)
        tags = _sample_image_tags(config, root / "scratch", engine)
        _remove_images(engine, tags)
        os.environ["DAGSTER_HOME"] = str(root / "home")
        rows = []
        for label in ("cold", "warm"):
            since = time.time()
            started = time.perf_counter()
            assert main(["generate", "--config", str(config), "--workspace", str(root / "workspace")]) == 0
            seconds = time.perf_counter() - started
            report = json.loads((root / "tasks" / "report.json").read_text())
            with dg.DagsterInstance.get() as instance:
                events = _events_of_last_runs(instance, 2)
            rows.append(
                (label, seconds, report["funnel"]["published"], *_work_done(root / "workspace", since, report), events)
            )
        reasons = Counter(c["reason"] for c in report["candidates"] if c.get("reason"))
        _remove_images(engine, tags)
    print(
        f"{'run':<6} {'seconds':>8} {'tasks':>6} {'s/task':>7} {'builds':>7} {'trial matrices':>15} "
        f"{'model calls':>12} {'events':>7}"
    )
    for label, seconds, tasks, builds, trials, calls, events in rows:
        print(
            f"{label:<6} {seconds:8.1f} {tasks:6d} {seconds / max(tasks, 1):7.1f} {builds:7d} {trials:15d} "
            f"{calls:12d} {events:7d}"
        )
    cold, warm = rows[0][1], rows[1][1]
    print(f"dropped: {dict(reasons)}")
    print(
        f"warm / cold = {warm / cold:.1%} (target < 10%); cold s/task target < 15 s; "
        f"seed smoke run: {38 / SEED:.1f} s/task"
    )
    print(
        f"op overhead: {overhead * 1000:.0f} ms per per-candidate Docker step, "
        f"{overhead * DOCKER_STEPS_PER_TASK:.2f} s per task ({DOCKER_STEPS_PER_TASK} steps)"
    )


if __name__ == "__main__":
    main_benchmark()
