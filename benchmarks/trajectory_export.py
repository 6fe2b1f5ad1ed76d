"""Figures for the Harbor dataset splits and the Trajectory spec export.

    PYTHONPATH=. .venv/bin/python benchmarks/trajectory_export.py [--tasks 200] [--harness]

Prints: split assignment time and test share for 10,000 sources, and how many tasks move
when 1,000 sources are added (must be 0); `dataset.json` time for N published copies of
the Python sample task; the export's time, build-context files and bytes next to the raw
task files it archives; with --harness, seconds of one harness attempt (scripted model
that fixes the bug, fake platform) on the real engine, split into phases by the log.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.registry import registered_families
from traj2env_assets.harbor.dataset import assign_splits, write_dataset
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.trajectory_export.export import export_spec
from traj2env_assets.trajectory_export.layout import BENCHMARK_DIR, HARNESS_FILE, TASKS_ARCHIVE
from traj2env_assets.trajectory_export.wheelhouse import download_wheelhouse
from traj2env_assets_tests.docker.sample_tasks import python_task
from traj2env_assets_tests.trajectory_export.fake_trajectory_platform import (
    API_KEY,
    final_reply,
    running_platform,
    tool_call_reply,
)


def splits_figures() -> None:
    sources = [f"session-{n:05d}" for n in range(10_000)]
    started = time.perf_counter()
    first = assign_splits(None, sources)
    seconds = time.perf_counter() - started
    test = sum(split == "test" for split in first.sources.values())
    grown = assign_splits(first, [*sources, *(f"new-{n:04d}" for n in range(1_000))])
    moved = sum(grown.sources[s] != split for s, split in first.sources.items())
    grown_test = sum(split == "test" for split in grown.sources.values())
    print(
        f"splits: 10,000 sources in {seconds * 1000:.1f} ms, test share {test / len(sources):.2%}; "
        f"+1,000 sources: {moved} moved, test share {grown_test / len(grown.sources):.2%}"
    )


def export_figures(workdir: Path, count: int, engine: DockerEngine) -> Path:
    dataset = workdir / "tasks"
    for n in range(count):
        spec = python_task(f"calc-{n:04d}", marker=str(n)).model_copy(update={"source_trace": f"session-{n // 2}"})
        write_task(spec, dataset)
    raw_files = sum(1 for p in dataset.rglob("*") if p.is_file())
    started = time.perf_counter()
    manifest = write_dataset(dataset)
    print(
        f"dataset.json: {len(manifest.tasks)} tasks from {count // 2} sources in "
        f"{time.perf_counter() - started:.2f} s; test {len(manifest.split_of('test'))}, "
        f"train {len(manifest.split_of('train'))}"
    )
    wheels = download_wheelhouse(workdir / "wheelhouse")
    started = time.perf_counter()
    summary = export_spec(
        dataset, workdir / "spec", registered_families(), wheelhouse=wheels, docker_client=engine.client
    )
    archive = (summary.spec_dir / BENCHMARK_DIR / TASKS_ARCHIVE).stat().st_size
    print(
        f"export: {time.perf_counter() - started:.1f} s; build context {summary.context_files} files, "
        f"{summary.context_bytes / 2**20:.1f} MiB (tasks archive {archive / 2**10:.0f} KiB for {raw_files} "
        f"task files; base images {', '.join(summary.base_images)})"
    )
    return summary.spec_dir


def harness_figures(spec_dir: Path, workdir: Path) -> None:
    tasks = workdir / "unpacked"
    with tarfile.open(spec_dir / BENCHMARK_DIR / TASKS_ARCHIVE) as archive:
        archive.extractall(tasks, filter="data")
    for attempt in ("first (builds the task image)", "second (image present)"):
        replies = [tool_call_reply("sed -i 's/return a - b/return a + b/' calc.py"), final_reply()]
        with running_platform(replies) as platform:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env.update(TRAJECTORY_API_KEY=API_KEY, TRAJECTORY_BASE_URL=platform.base_url)
            started = time.perf_counter()
            completed = subprocess.run(
                [
                    sys.executable,
                    str(spec_dir / BENCHMARK_DIR / HARNESS_FILE),
                    "--task",
                    "calc-0000",
                    "--tasks-dir",
                    str(tasks),
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=900,
                check=False,
            )
            seconds = time.perf_counter() - started
        result = json.loads(completed.stdout.strip().splitlines()[-1]) if completed.returncode == 0 else None
        print(
            f"harness attempt, {attempt}: {seconds:.1f} s, result {result}, {len(platform.requests)} platform requests"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--harness", action="store_true")
    args = parser.parse_args()
    splits_figures()
    engine = DockerEngine()
    workdir = Path(tempfile.mkdtemp(prefix="traj2env-export-bench-"))
    try:
        spec_dir = export_figures(workdir, args.tasks, engine)
        if args.harness:
            harness_figures(spec_dir, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        for image in engine.client.images.list(name="traj2env-harness/calc-0000"):
            engine.client.images.remove(image.id, force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
