"""The spec as the platform's ``BenchmarkSpec``/``TaskSpec``s, and the in-process push.

One shared runtime (the harness image, built from ``benchmark/Dockerfile``); per task
its split (from the dataset's source-disjoint splits), the harness command, its limits
as env vars, and a Docker-capable sandbox sized for the task container plus the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from trajectory import BenchmarkSpec, Client, TaskSpec
from trajectory.lib import DockerfileBuild, push
from trajectory.types.benchmarks.task_spec import EnvResources
from trajectory.types.ingest_benchmark_response import IngestBenchmarkResponse

from traj2env_assets.trajectory_export.context import check_context
from traj2env_assets.trajectory_export.layout import APP_DIR, BENCHMARK_DIR, DOCKERFILE, HARNESS_FILE, TASK_INDEX_FILE
from traj2env_assets.trajectory_export.task_index import HarnessTask, TaskIndex

DEFAULT_BENCHMARK_NAME = "traj2env tasks"
DEFAULT_TASK_MEMORY_MB = 4096
# The sandbox also runs dockerd, the harness and image builds beside the task container.
ENGINE_OVERHEAD_MB = 2048
SANDBOX_CPUS = 2.0
MAX_TURNS = 50
Visibility = Literal["private", "public"]
# Set explicitly whatever the SDK's default: a spec is public only when the user says so.
DEFAULT_VISIBILITY: Visibility = "private"


def task_spec(task: HarnessTask) -> TaskSpec:
    return TaskSpec(
        name=task.task_id,
        split=task.split,
        run_command=f"python3 {APP_DIR}/{HARNESS_FILE} --task {task.task_id}",
        env_vars={
            "AGENT_TIMEOUT_SEC": f"{task.agent_timeout_sec:g}",
            "VERIFIER_TIMEOUT_SEC": f"{task.verifier_timeout_sec:g}",
            "MAX_TURNS": str(MAX_TURNS),
        },
        env_resources=EnvResources(
            docker_engine=True,
            cpus=SANDBOX_CPUS,
            memory_mb=(task.memory_mb or DEFAULT_TASK_MEMORY_MB) + ENGINE_OVERHEAD_MB,
            # Base images ship in the image; the harness needs no network but the platform's.
            network_mode="no-network",
        ),
        tags=[task.family],
        spec={
            "family": task.family,
            "source_trace": task.source_trace,
            "reward_min": task.reward_min,
            "reward_max": task.reward_max,
        },
    )


def build_benchmark(
    spec_dir: Path, name: str = DEFAULT_BENCHMARK_NAME, visibility: Visibility = DEFAULT_VISIBILITY
) -> BenchmarkSpec:
    index = TaskIndex.model_validate_json((spec_dir / BENCHMARK_DIR / TASK_INDEX_FILE).read_text(encoding="utf-8"))
    return BenchmarkSpec(
        name=name,
        description="Coding tasks mined from recorded agent sessions by traj2env (Harbor tasks, verified).",
        visibility=visibility,
        runtime=DockerfileBuild(DOCKERFILE),
        tasks=[task_spec(task) for _, task in sorted(index.tasks.items())],
    )


def push_spec(
    client: Client,
    spec_dir: Path,
    *,
    agent_name: str,
    name: str = DEFAULT_BENCHMARK_NAME,
    build_images: bool = True,
    visibility: Visibility = DEFAULT_VISIBILITY,
) -> IngestBenchmarkResponse:
    """Upload the tasks and the build context; waits for registration (and the build)."""
    check_context(spec_dir / BENCHMARK_DIR)
    return push(
        client,
        build_benchmark(spec_dir, name, visibility),
        agent_name=agent_name,
        root=spec_dir / BENCHMARK_DIR,
        build_images=build_images,
        progress=lambda _: None,
    )
