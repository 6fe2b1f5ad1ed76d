"""``make run`` (the README's main command) cold and warm, this checkout beside a baseline commit.

    .venv/bin/python benchmarks/make_run.py [--baseline 49e700a] [--config examples/trajectory-to-env.yaml]

Each side runs ``traj2env generate --config <config> --workspace W`` from its own
checkout (the baseline in a temporary ``git worktree``, both on this checkout's
virtualenv and its compiled bytecode, with ``PYTHONPATH`` naming the side's checkout), so the same sessions and
config go through each side's code. Cold: before each side's first run, every task image
(role label ``task-image``) and Docker's build cache are removed and W is a new
folder; the base images stay (``make setup`` builds them, not the run). Warm: the same
command again on the same W. The baseline runs first, then this checkout: one pair, as
``make run`` takes minutes. Wall is a monotonic clock around the command; CPU is the
command's and its children's user + system (Docker's daemon and containers are in no
figure). The load (``uptime``) is printed before and after.

``trials ∥ builds`` is read from each side's cold run in its Dagster instance: the seconds
during which a trial step (``trials`` or ``calibration``) of one run and an image build step
of another ran at the same time (``jobs`` 2 runs two batches at once), beside the seconds
any build step ran.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker
from rich.console import Console
from rich.table import Table

from traj2env_assets.cli import INSTANCE_DIR
from traj2env_assets.docker_engine.labels import ROLE_LABEL

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv" / "bin" / "python"
TASK_IMAGE_FILTER = {"label": f"{ROLE_LABEL}=task-image"}


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float
    exit_code: int


@dataclass(frozen=True)
class Side:
    name: str
    checkout: Path
    cold: Timed
    warm: Timed
    tasks: int
    build_s: float
    overlap_s: float


Interval = tuple[float, float]
BUILD_STEPS = ("task_images_candidate",)
TRIAL_STEPS = ("trials_candidate", "calibration_candidate")


def step_intervals(home: Path) -> dict[str, list[tuple[str, Interval]]]:
    """Each run's build and trial steps as (run id, (start, end)) from the instance at ``home``."""
    import dagster as dg

    found: dict[str, list[tuple[str, Interval]]] = {"build": [], "trial": []}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for record in instance.get_run_records():
            run_id = record.dagster_run.run_id
            starts: dict[str, float] = {}
            for entry in instance.all_logs(run_id):
                if entry.dagster_event is None or not entry.step_key:
                    continue
                kind = entry.dagster_event.event_type_value
                if kind == "STEP_START":
                    starts[entry.step_key] = entry.timestamp
                elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and entry.step_key in starts:
                    interval = (starts.pop(entry.step_key), entry.timestamp)
                    for role, names in (("build", BUILD_STEPS), ("trial", TRIAL_STEPS)):
                        if any(name in entry.step_key for name in names):
                            found[role].append((run_id, interval))
    return found


def overlap_seconds(builds: list[tuple[str, Interval]], trials: list[tuple[str, Interval]]) -> float:
    """Seconds during which some trial step ran beside a build step of another run."""
    moments: list[Interval] = []
    for build_run, (build_start, build_end) in builds:
        for trial_run, (trial_start, trial_end) in trials:
            start, end = max(build_start, trial_start), min(build_end, trial_end)
            if trial_run != build_run and end > start:
                moments.append((start, end))
    return _union_length(moments)


def _union_length(intervals: list[Interval]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str], cwd: Path, log: Path) -> Timed:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    env.pop("DAGSTER_HOME", None)
    cpu, start = _children_cpu(), time.monotonic()
    with log.open("a", encoding="utf-8") as out:
        code = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    return Timed(time.monotonic() - start, _children_cpu() - cpu, code)


def _clear_docker_work() -> int:
    client = docker.from_env()
    images = client.images.list(filters=TASK_IMAGE_FILTER)
    for image in images:
        client.images.remove(image.id, force=True)
    client.api.prune_builds(all=True)
    return len(images)


def _published(workspace: Path) -> int:
    manifest = workspace / "trajectory-tasks" / "dataset.json"
    if not manifest.is_file():
        return 0
    return len(json.loads(manifest.read_text(encoding="utf-8")).get("tasks", []))


def run_side(name: str, checkout: Path, config: Path, scratch: Path, console: Console) -> Side:
    workspace = scratch / f"{name}-workspace"
    log = scratch / f"{name}.log"
    removed = _clear_docker_work()
    console.print(f"{name}: removed {removed} task images and the build cache; cold run ...")
    command = [
        str(PYTHON),
        "-m",
        "traj2env_assets.cli",
        "generate",
        "--config",
        str(config),
        "--workspace",
        str(workspace),
    ]
    cold = _timed(command, checkout, log)
    steps = step_intervals(workspace / INSTANCE_DIR)
    console.print(f"{name}: cold {cold.wall_s:.1f} s; warm run ...")
    warm = _timed(command, checkout, log)
    return Side(
        name,
        checkout,
        cold,
        warm,
        _published(workspace),
        build_s=_union_length([interval for _, interval in steps["build"]]),
        overlap_s=overlap_seconds(steps["build"], steps["trial"]),
    )


def print_sides(sides: list[Side], console: Console) -> None:
    table = Table(title="traj2env generate on the bundled samples, cold then warm")
    columns = (
        "side",
        "cold wall s",
        "cold CPU s",
        "warm wall s",
        "warm CPU s",
        "warm/cold",
        "tasks",
        "builds s",
        "trials ∥ builds s",
        "exit",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "side" else "right")
    for side in sides:
        table.add_row(
            side.name,
            f"{side.cold.wall_s:.1f}",
            f"{side.cold.cpu_s:.1f}",
            f"{side.warm.wall_s:.1f}",
            f"{side.warm.cpu_s:.1f}",
            f"{side.warm.wall_s / side.cold.wall_s:.1%}",
            str(side.tasks),
            f"{side.build_s:.1f}",
            f"{side.overlap_s:.1f}",
            f"{side.cold.exit_code}/{side.warm.exit_code}",
        )
    console.print(table)
    baseline, current = sides
    console.print(
        f"cold wall: baseline/current = {baseline.cold.wall_s / current.cold.wall_s:.2f}x; "
        f"cold CPU: {baseline.cold.cpu_s / current.cold.cpu_s:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="commit or branch to compare with (default main)")
    parser.add_argument(
        "--config",
        type=Path,
        default=Path("examples/trajectory-to-env.yaml"),
        help="config, relative to each checkout (default the README's)",
    )
    arguments = parser.parse_args()
    console = Console()
    scratch = Path(tempfile.mkdtemp(prefix="traj2env-make-run-"))
    baseline = scratch / "baseline-checkout"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(baseline), arguments.baseline],
        check=True,
        capture_output=True,
    )
    try:
        console.print(f"load before: {os.getloadavg()}; baseline {arguments.baseline}; logs under {scratch}")
        sides = [
            run_side("baseline", baseline, arguments.config, scratch, console),
            run_side("current", REPO, arguments.config, scratch, console),
        ]
        console.print(f"load after: {os.getloadavg()}")
        print_sides(sides, console)
        for side in sides:
            if side.cold.exit_code or side.warm.exit_code:
                console.print(
                    f"{side.name} failed; its output ends:\n{(scratch / f'{side.name}.log').read_text()[-3000:]}"
                )
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(baseline)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
