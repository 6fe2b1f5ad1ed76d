"""Benchmark the Docker work on the local engine.

Prints: image build time for a new context vs an identical (cached) one; the unique
bytes of each of 20 candidate images of one project (``docker system df``: size minus
the bytes shared with other images) against the project's file bytes + 1 MB; and the
full control matrix wall time (every control of the default matrix), sequential vs parallel. Needs the base images
(``python -m traj2env_assets.docker_engine.commands bases``). Removes the images it
built unless ``--keep``.

    .venv/bin/python benchmarks/docker_work.py [--candidates 20] [--parallelism 2 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from docker.errors import ImageNotFound

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.image_build import BuiltImage
from traj2env_assets.harbor.task_spec import TaskSpec
from traj2env_assets.harbor.writer import WrittenTask, write_task
from traj2env_assets.verification.trial import TrialTask, run_matrix
from traj2env_assets_tests.docker.sample_tasks import python_task

TARGET_CACHED_REBUILD_S = 1.0
TARGET_MATRIX_S = 15.0
ONE_MB = 1024 * 1024
# A dependency layer every candidate of the project shares.
DEPENDENCY_LINES = ["RUN python3 -m venv /opt/deps && /opt/deps/bin/python -m pip --version"]


def candidate(index: int, run: str) -> TaskSpec:
    """One candidate of the sample project: ~200 KB of modules, one differing line."""
    spec = python_task(task_id=f"bench-{index:02d}", marker=f"{run}-{index}")
    modules = {f"pkg/module_{n:02d}.py": (f"VALUE_{n} = {n}\n" * 400).encode() for n in range(20)}
    return spec.model_copy(
        update={
            "project_files": {**spec.project_files, **modules},
            "dependency_lines": DEPENDENCY_LINES,
        }
    )


def project_bytes(spec: TaskSpec) -> int:
    return sum(len(content) for content in spec.project_files.values())


def bench_builds(engine: DockerEngine, root: Path, run: str) -> tuple[WrittenTask, BuiltImage]:
    # A dependency line no build has seen: every layer above the base is built.
    fresh_deps = candidate(0, run).model_copy(
        update={
            "task_id": "bench-cold",
            "dependency_lines": [f"RUN echo {run} > /opt/run-id", *DEPENDENCY_LINES],
        }
    )
    cold = engine.build(write_task(fresh_deps, root).environment_dir)
    task = write_task(candidate(0, run), root)
    warm = engine.build(task.environment_dir)
    cached = engine.build(task.environment_dir)
    verdict = "ok" if cached.seconds < TARGET_CACHED_REBUILD_S else "MISSED"
    print(f"build, cold (every layer above the base new):           {cold.seconds:6.2f} s")
    print(f"build, new context (base/dependency layers from cache): {warm.seconds:6.2f} s")
    print(
        f"build, identical context (tag hit, no build):           {cached.seconds:6.3f} s"
        f"  target < {TARGET_CACHED_REBUILD_S:.0f} s: {verdict}"
    )
    engine.client.images.remove(cold.tag, force=True)
    return task, warm


def bench_unique_bytes(engine: DockerEngine, root: Path, run: str, count: int) -> list[str]:
    specs = [candidate(index, run) for index in range(count)]
    started = time.monotonic()
    tags = [engine.build(write_task(spec, root).environment_dir).tag for spec in specs]
    print(f"{count} candidate images built in {time.monotonic() - started:.1f} s")
    sizes = {tag: image for image in engine.client.df()["Images"] for tag in image.get("RepoTags") or [] if tag in tags}
    limit = project_bytes(specs[0]) + ONE_MB
    unique = [sizes[tag]["Size"] - sizes[tag]["SharedSize"] for tag in tags]
    print(
        f"unique bytes per candidate: min {min(unique):,}  max {max(unique):,}  mean {sum(unique) / len(unique):,.0f}"
    )
    print(
        f"project files {project_bytes(specs[0]):,} B + 1 MB = {limit:,} B;  "
        f"all within: {'ok' if max(unique) <= limit else 'MISSED'}"
    )
    return tags


def bench_matrix(engine: DockerEngine, task: WrittenTask, image: BuiltImage, parallel: list[int]) -> None:
    trial_task = TrialTask(image=image.tag, task_dir=task.path)
    for parallelism in [1, *parallel]:
        matrix = run_matrix(engine, trial_task, parallelism=parallelism)
        rewards = " ".join(f"{name}={reward:g}" for name, reward in matrix.rewards().items())
        label = "sequential" if parallelism == 1 else f"parallel x{parallelism}"
        verdict = "ok" if matrix.seconds < TARGET_MATRIX_S else "MISSED"
        print(
            f"{len(matrix.results)}-control matrix, {label:12s}: {matrix.seconds:6.2f} s  target < "
            f"{TARGET_MATRIX_S:.0f} s: {verdict}  [{rewards}]  controls passed: {matrix.passed}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--parallelism", type=int, nargs="*", default=[2, 5])
    parser.add_argument("--keep", action="store_true", help="keep the images built")
    args = parser.parse_args()
    engine = DockerEngine()
    run = str(time.time_ns())
    with tempfile.TemporaryDirectory(prefix="traj2env-bench-") as tmp:
        root = Path(tmp)
        task, image = bench_builds(engine, root / "build", run)
        tags = bench_unique_bytes(engine, root / "candidates", run, args.candidates)
        bench_matrix(engine, task, image, args.parallelism)
    if not args.keep:
        for tag in {image.tag, *tags}:
            try:
                engine.client.images.remove(tag, force=True)
            except ImageNotFound:
                continue
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
