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

The breakdown of each side's cold run, from the same instance: per stage, its steps, their
summed seconds and the wall seconds during which at least one of them ran; "outside any
step" is the wall during which no step of any run ran (the CLI and Dagster starting runs,
launching steps, and the report run's start). The trial line reads the matrices the run
wrote (``trials.json``): trials, mean seconds per trial and per verifier script. The cheap
stages and "outside any step" are Dagster's own share of a cold run; the rest is container
work (see ``docs/benchmarks.md`` for the floor). Last, whether both sides published the
same tasks, every file's path, mode and bytes (read after the cold runs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

import docker
from rich.console import Console
from rich.table import Table

from traj2env_assets.conventions import file_sha256
from traj2env_assets.docker_engine.labels import ROLE_LABEL
from traj2env_assets.layout import TaskLayout, Workspace

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
    stages: list[StageRow]
    trials: TrialFigures
    published: PublishedFiles


Interval = tuple[float, float]
BUILD_STEPS = ("images_candidate",)
TRIAL_STEPS = ("trials_candidate", "trials_deferred_candidate", "calibration_candidate")
# The breakdown's stages, in order, each by the step-key fragments that mark its steps (both
# sides' asset names, before and after the stages were named for their folders: ``images``
# also matches ``task_images``); a step matching none is "publish + report".
STAGE_STEPS = (
    (
        "cheap stages (convert … proposals)",
        ("trajectory_atif", "convert", "scan", "replay", "_candidates", "candidates__", "proposals"),
    ),
    ("image plan (task files, wheels)", ("images_plan",)),
    ("image builds", ("images_candidate", "images_summary")),
    ("calibration", ("calibration",)),
    ("trials", ("trials",)),
)
OTHER_STAGE = "publish + report"
OUTSIDE_STEPS = "outside any step (CLI, run and step launches)"


@dataclass(frozen=True)
class Step:
    run_id: str
    key: str
    interval: Interval


@dataclass(frozen=True)
class StageRow:
    stage: str
    steps: int
    step_s: float
    wall_s: float


@dataclass(frozen=True)
class TrialFigures:
    trials: int
    matrices: int
    mean_trial_s: float
    mean_verifier_s: float


def run_steps(home: Path) -> list[Step]:
    """Every step of every run in the instance at ``home``, with its start and end."""
    import dagster as dg

    found: list[Step] = []
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
                    found.append(Step(run_id, entry.step_key, (starts.pop(entry.step_key), entry.timestamp)))
    return found


def step_intervals(steps: list[Step]) -> dict[str, list[tuple[str, Interval]]]:
    """The build and trial steps as (run id, (start, end))."""
    found: dict[str, list[tuple[str, Interval]]] = {"build": [], "trial": []}
    for step in steps:
        for role, names in (("build", BUILD_STEPS), ("trial", TRIAL_STEPS)):
            if any(name in step.key for name in names):
                found[role].append((step.run_id, step.interval))
    return found


def stage_of(step_key: str) -> str:
    for stage, fragments in STAGE_STEPS:
        if any(fragment in step_key for fragment in fragments):
            return stage
    return OTHER_STAGE


def stage_breakdown(steps: list[Step], wall_s: float) -> list[StageRow]:
    """Per stage: steps, summed step seconds, wall seconds with one of them running; then the
    wall with no step running."""
    by_stage: dict[str, list[Interval]] = {stage: [] for stage in [*(stage for stage, _ in STAGE_STEPS), OTHER_STAGE]}
    for step in steps:
        by_stage[stage_of(step.key)].append(step.interval)
    rows = [
        StageRow(stage, len(intervals), sum(end - start for start, end in intervals), _union_length(intervals))
        for stage, intervals in by_stage.items()
    ]
    covered = _union_length([step.interval for step in steps])
    rows.append(StageRow(OUTSIDE_STEPS, 0, 0.0, max(0.0, wall_s - covered)))
    return rows


def trial_figures(workspace: Path) -> TrialFigures:
    """The matrices a run wrote (a matrix that candidates shared counted once): trials, and mean
    seconds per trial and per verifier script."""
    matrices = {path.read_text(encoding="utf-8") for path in workspace.rglob("trials.json")}
    trials, verifier_s = [], []
    for text in matrices:
        for result in json.loads(text)["results"]:
            trials.append(result["seconds"])
            if result.get("verifier"):
                verifier_s.append(result["verifier"]["seconds"])
    return TrialFigures(len(trials), len(matrices), fmean(trials or [0.0]), fmean(verifier_s or [0.0]))


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


@dataclass(frozen=True)
class PublishedFiles:
    files: int
    sha256: str
    """Over every published task's files (path, mode, content), in path order."""


def published_files(workspace: Path) -> PublishedFiles:
    """The published tasks' files, so two sides' outputs compare byte for byte (a change that
    only saves work must publish the same tasks)."""
    root = workspace / "trajectory-tasks"
    tasks = [path for path in sorted(root.iterdir()) if TaskLayout(path).config_path.is_file()] if root.is_dir() else []
    files = sorted(path for task in tasks for path in task.rglob("*") if path.is_file())
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(root).as_posix()}\0{path.stat().st_mode:o}\0{file_sha256(path)}\n".encode())
    return PublishedFiles(files=len(files), sha256=digest.hexdigest())


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
    every_step = run_steps(Workspace(root=workspace).dagster_home)
    steps = step_intervals(every_step)
    stages = stage_breakdown(every_step, cold.wall_s)
    trials = trial_figures(workspace)
    published = published_files(workspace)
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
        stages=stages,
        trials=trials,
        published=published,
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
    same = "the same" if baseline.published == current.published else "NOT the same"
    console.print(
        f"published tasks' files after the cold runs: {same} (baseline {baseline.published.files} files, "
        f"{baseline.published.sha256[:12]}; current {current.published.files} files, {current.published.sha256[:12]})"
    )
    print_breakdown(sides, console)


def print_breakdown(sides: list[Side], console: Console) -> None:
    table = Table(title="cold run by stage: steps, summed step seconds, wall seconds with one running")
    table.add_column("stage")
    for side in sides:
        for column in ("steps", "step s", "wall s", "of wall"):
            table.add_column(f"{side.name} {column}", justify="right")
    for index, first in enumerate(sides[0].stages):
        cells = []
        for side in sides:
            row = side.stages[index]
            cells += [str(row.steps), f"{row.step_s:.1f}", f"{row.wall_s:.1f}", f"{row.wall_s / side.cold.wall_s:.0%}"]
        table.add_row(first.stage, *cells)
    console.print(table)
    for side in sides:
        figures = side.trials
        console.print(
            f"{side.name}: {figures.trials} trials in {figures.matrices} matrices, "
            f"{figures.mean_trial_s:.2f} s per trial (its verifier script {figures.mean_verifier_s:.2f} s)"
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
    console = Console(width=200)
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
