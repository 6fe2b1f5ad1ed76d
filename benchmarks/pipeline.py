"""Where a ``traj2env generate`` run's time goes, per stage: the graph beside a plain loop.

    .venv/bin/python benchmarks/pipeline.py DIR [--families repair] [--limit N] [--workspace W]

Run A (graph): ``traj2env generate`` on DIR (a config like examples/trajectory-to-env.yaml
with ``source.path: DIR``, the chosen families, ``jobs: 1``, ``limit`` N) in a subprocess
on a fresh workspace (W/graph; W is a new temporary folder, removed afterwards, unless
given) and a fresh Dagster instance under it. The subprocess is this script again: it
imports ``traj2env_assets.cli`` (timed: the import cost of every run), patches two kinds
of probes in, then calls ``cli.main``:

- every event the run writes goes through ``DagsterInstance.handle_new_event``; the probe
  times each call (the event write: SQLite insert, asset index, run storage) and reads
  ``time.process_time()`` at each step's STEP_START and STEP_SUCCESS/FAILURE, so a step's
  CPU is the process's CPU between those two events (one thread, in-process executor);
- each stage's core function, called by name from its ``traj2env_assets/stages/<stage>/asset.py``
  (conversion ``convert_partition``, scan ``scan_partition``, replay ``replay_partition``,
  mining ``mine_partition``, proposal ``propose``, image/calibration/trials their
  ``plan_*`` and per-candidate work, publish ``publish``, report ``build_run_report`` +
  ``write_run_report`` + ``write_funnel_files`` + ``write_dataset``) is wrapped to sum its
  own wall and CPU time.

After the run the instance itself is read: per step, its number, the summed step wall
time (STEP_START to STEP_SUCCESS/FAILURE event timestamps), the events written and the
materializations. The CPU of the whole run is the subprocess's (user + system, children
rusage); the Docker daemon's and the containers' CPU is in no figure.

Run B (core loop): the same files, on a second fresh workspace (W/loop), through the same
core functions in one plain Python loop, stage after stage (register, then every file's
conversion, then every file's scan, ...), wall and ``time.process_time()`` per stage. Only
the cheap stages (conversion, scan, replay, mining) are looped; the Docker and LLM stages
are reported with their graph figures only (with ``--families repair`` on sessions with
nothing to mine they run as steps that do no work).

Reading the table: ``graph CPU`` minus ``core CPU`` is what Dagster and the asset's own
bookkeeping (statuses, metadata, materializations) cost around the stage's work;
``write s`` is the part of it spent writing that step's events; ``graph/loop`` compares
the step's CPU with the same work in the plain loop. Rows for families not selected are
steps that still run (and write events) but mine nothing. The totals row adds the steps;
below it, the run's CPU outside any step (interpreter start, the import, registration,
building the definitions, run start/end events, between steps), its subprocesses' CPU,
and the event writes not in a step.
Figures are from one run on a possibly shared machine: wall time moves with the load.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONFIG_NAME = "pipeline-benchmark.yaml"
FIGURES_NAME = "graph-figures.json"
CHEAP = ("conversion", "scan", "replay")
# Step key (its first part: an asset, or a graph-backed asset's op) -> stage shown.
STEP_STAGES = {
    "convert": "conversion",
    "scan": "scan",
    "replay": "replay",
    "proposals": "proposal",
    "images": "image",
    "calibration": "calibration",
    "trials": "trials",
    "publish": "publish",
    "report": "report",
    "harbor_dataset": "report",
}
LATER = ("proposal", "image", "calibration", "trials", "publish", "report")
NO_STEP = "(no step)"
STEP_START = ("STEP_START", "STEP_RESTARTED")
STEP_END = ("STEP_SUCCESS", "STEP_FAILURE", "STEP_UP_FOR_RETRY")


def stage_of_step(step_key: str | None) -> str:
    """The stage a step belongs to: ``images.images_candidate[x]`` -> ``image``."""
    if not step_key:
        return NO_STEP
    head = re.split(r"[.\[]", step_key)[0]
    if head.startswith("candidates__"):  # the op of the asset candidates/<family>
        return f"mining ({head.removeprefix('candidates__')})"
    if head in STEP_STAGES:
        return STEP_STAGES[head]
    if head.startswith("report_"):  # the report's asset checks, e.g. report_no_orphaned_staging
        return "report"
    for suffix in ("_plan", "_candidate", "_summary"):
        if head.endswith(suffix) and head.removesuffix(suffix) in STEP_STAGES:
            return STEP_STAGES[head.removesuffix(suffix)]
    return head


def write_config(root: Path, source: Path, families: list[str], limit: int | None, cheap_only: bool = False) -> Path:
    """The example config with ``source.path`` DIR, the families, ``jobs`` 1 and the limit;
    ``cheap_only``: ``propose_only``, so the Docker stages plan no work."""
    import yaml

    config = yaml.safe_load((REPO / "examples" / "trajectory-to-env.yaml").read_text(encoding="utf-8"))
    config["source"]["path"] = str(source.resolve())
    options = config["pipeline"]["options"]
    options["families"] = families
    options["jobs"] = 1
    if limit is not None:
        options["limit"] = limit
    if cheap_only:
        options["propose_only"] = True
    config["output"].pop("destination", None)
    root.mkdir(parents=True, exist_ok=True)
    path = root / CONFIG_NAME
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# --- Run A, inside the subprocess ---------------------------------------------------------


class _Probe:
    """Sums wall/CPU of the stages' core functions and of event writes; CPU between step events."""

    def __init__(self) -> None:
        # name -> [calls, wall s, cpu s]
        self.core: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        self.writes: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        self.step_cpu: dict[str, float] = defaultdict(float)
        self._open: dict[tuple[str, str], float] = {}

    def wrap(self, module: Any, name: str, label: Callable[[tuple], str]) -> None:
        original = getattr(module, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                figures = self.core[label(args)]
                figures[0] += 1
                figures[1] += time.perf_counter() - wall
                figures[2] += time.process_time() - cpu

        setattr(module, name, timed)

    def install(self) -> None:
        import dagster as dg

        from traj2env_assets.defs import dataset
        from traj2env_assets.stages.calibration import asset as calibration
        from traj2env_assets.stages.candidates import asset as candidates
        from traj2env_assets.stages.convert import asset as convert
        from traj2env_assets.stages.images import asset as images
        from traj2env_assets.stages.proposals import asset as proposals
        from traj2env_assets.stages.publish import asset as publish
        from traj2env_assets.stages.replay import asset as replay
        from traj2env_assets.stages.report import asset as report
        from traj2env_assets.stages.scan import asset as scan
        from traj2env_assets.stages.trials import asset as trials

        def fixed(stage: str) -> Callable[[tuple], str]:
            return lambda args: stage

        for module, name, stage in (
            (convert, "convert_partition", "conversion"),
            (scan, "scan_partition", "scan"),
            (replay, "replay_partition", "replay"),
            (proposals, "propose", "proposal"),
            (images, "plan_images", "image"),
            (images, "build_candidate_image", "image"),
            (calibration, "plan_calibration", "calibration"),
            (calibration, "calibrate_candidate", "calibration"),
            (trials, "plan_trials", "trials"),
            (trials, "run_candidate_trials", "trials"),
            (publish, "publish", "publish"),
            (report, "build_run_report", "report"),
            (report, "write_run_report", "report"),
            (report, "write_funnel_files", "report"),
            (dataset, "write_dataset", "report"),
        ):
            self.wrap(module, name, fixed(stage))
        self.wrap(candidates, "mine_partition", lambda args: f"mining ({args[1].name})")

        original = dg.DagsterInstance.handle_new_event
        probe = self

        def handle_new_event(instance: Any, event: Any, *args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            kind = event.dagster_event.event_type_value if event.is_dagster_event else None
            step = event.step_key or ""
            if kind in STEP_START:
                probe._open[(event.run_id, step)] = cpu
            elif kind in STEP_END and (event.run_id, step) in probe._open:
                probe.step_cpu[step] += cpu - probe._open.pop((event.run_id, step))
            try:
                return original(instance, event, *args, **kwargs)
            finally:
                figures = probe.writes[step]
                figures[0] += 1
                figures[1] += time.perf_counter() - wall
                figures[2] += time.process_time() - cpu

        # A probe wrapped around Dagster's own method (signature widened to pass everything on).
        dg.DagsterInstance.handle_new_event = handle_new_event  # type: ignore[method-assign,assignment]


def _rusage_cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def graph_child(config: Path, workspace: Path, figures_file: Path) -> int:
    """Run A's subprocess: import the CLI (timed), install the probes, run ``generate``."""
    wall, cpu = time.perf_counter(), time.process_time()
    from traj2env_assets import cli

    import_wall, import_cpu = time.perf_counter() - wall, time.process_time() - cpu
    probe = _Probe()
    probe.install()
    code = cli.main(["generate", "--config", str(config), "--workspace", str(workspace)])
    figures = {
        "import_wall": import_wall,
        "import_cpu": import_cpu,
        "core": probe.core,
        "writes": probe.writes,
        "step_cpu": probe.step_cpu,
        "self_cpu": _rusage_cpu(resource.RUSAGE_SELF),
        "children_cpu": _rusage_cpu(resource.RUSAGE_CHILDREN),
    }
    figures_file.write_text(json.dumps(figures), encoding="utf-8")
    return code


# --- Run A, read back in this process -----------------------------------------------------


@dataclass
class StageFigures:
    steps: int = 0
    graph_wall: float = 0.0
    graph_cpu: float = 0.0
    core_calls: int = 0
    core_cpu: float = 0.0
    events: int = 0
    write_wall: float = 0.0
    materializations: int = 0
    loop_wall: float | None = None
    loop_cpu: float | None = None


@dataclass
class GraphRun:
    wall: float
    cpu: float
    import_wall: float
    import_cpu: float
    runs: int
    self_cpu: float = 0.0
    children_cpu: float = 0.0
    stages: dict[str, StageFigures] = field(default_factory=dict)


def run_graph(config: Path, workspace: Path) -> GraphRun:
    """``traj2env generate`` in a subprocess (this script, probes on); the figures of its run."""
    figures_file = workspace.parent / FIGURES_NAME
    command = [sys.executable, __file__, "--graph-child", str(config), str(workspace), str(figures_file)]
    environment = {key: value for key, value in os.environ.items() if key != "DAGSTER_HOME"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, env=environment, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0 or not figures_file.is_file():
        sys.stderr.write(completed.stdout + completed.stderr)
        raise SystemExit(f"traj2env generate exited with {completed.returncode}")
    probe = json.loads(figures_file.read_text(encoding="utf-8"))
    run = GraphRun(
        wall=wall,
        cpu=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        import_wall=probe["import_wall"],
        import_cpu=probe["import_cpu"],
        runs=0,
        self_cpu=probe["self_cpu"],
        children_cpu=probe["children_cpu"],
    )
    stages: dict[str, StageFigures] = defaultdict(StageFigures)
    run.runs = _read_instance(workspace, stages)
    for step, cpu in probe["step_cpu"].items():
        stages[stage_of_step(step)].graph_cpu += cpu
    for step, (_, write_wall, _) in probe["writes"].items():
        stages[stage_of_step(step)].write_wall += write_wall
    for name, (calls, _, cpu) in probe["core"].items():
        stages[name].core_calls += int(calls)
        stages[name].core_cpu += cpu
    run.stages = dict(stages)
    return run


def _read_instance(workspace: Path, stages: dict[str, StageFigures]) -> int:
    """Steps, step wall time, events and materializations per stage from the run's instance."""
    from traj2env_assets.cli import dagster_instance

    starts: dict[tuple[str, str], float] = {}
    with dagster_instance(workspace) as instance:
        runs = instance.get_runs()
        for dagster_run in runs:
            for entry in instance.all_logs(dagster_run.run_id):
                figures = stages[stage_of_step(entry.step_key)]
                figures.events += 1
                if entry.dagster_event is None:
                    continue
                kind = entry.dagster_event.event_type_value
                step = (dagster_run.run_id, entry.step_key or "")
                if kind == "ASSET_MATERIALIZATION":
                    figures.materializations += 1
                elif kind == "STEP_START":
                    figures.steps += 1
                    starts[step] = entry.timestamp
                elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and step in starts:
                    figures.graph_wall += entry.timestamp - starts.pop(step)
    return len(runs)


# --- Run B --------------------------------------------------------------------------------


@dataclass
class LoopRun:
    sessions: int
    rejected: int
    register_wall: float
    register_cpu: float
    stages: dict[str, tuple[float, float]]  # stage -> (wall s, cpu s)


def run_loop(config: Path, workspace: Path) -> LoopRun:
    """The cheap stages' core functions over every registered file, stage after stage."""
    from traj2env_assets.config import RunSettings, load_run_config
    from traj2env_assets.families.registry import registered_families
    from traj2env_assets.layout import Workspace
    from traj2env_assets.sources import register_sources
    from traj2env_assets.stages.candidates.mining import mine_partition
    from traj2env_assets.stages.convert.conversion import convert_partition
    from traj2env_assets.stages.replay.partition import replay_partition
    from traj2env_assets.stages.scan.gate import scan_partition

    settings = RunSettings.resolve(load_run_config(config), workspace)
    options = settings.options
    space = Workspace(root=settings.workspace)
    wall, cpu = time.perf_counter(), time.process_time()
    registration = register_sources(space, settings.source.path, settings.source.format, options.limit)
    register_wall, register_cpu = time.perf_counter() - wall, time.process_time() - cpu
    keys = registration.new + registration.changed + registration.unchanged
    work: list[tuple[str, Callable[[str], object]]] = [
        ("conversion", lambda key: convert_partition(space, key, settings.source.format)),
        (
            "scan",
            lambda key: scan_partition(
                space, key, enabled=options.scan, block=options.scan_block, allow=options.scan_allow
            ),
        ),
        ("replay", lambda key: replay_partition(space, key, repositories=settings.source.repositories)),
    ]
    for family in registered_families().selected(options.families):
        work.append(
            (f"mining ({family.name})", functools.partial(lambda f, key: mine_partition(space, f, key), family))
        )
    stages = {}
    for stage, step in work:
        wall, cpu = time.perf_counter(), time.process_time()
        for key in keys:
            step(key)
        stages[stage] = (time.perf_counter() - wall, time.process_time() - cpu)
    return LoopRun(len(keys), len(registration.rejected), register_wall, register_cpu, stages)


# --- The table ----------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def stage_order(names: list[str], families: list[str]) -> list[str]:
    mining = sorted(
        (n for n in names if n.startswith("mining (")), key=lambda n: (n[len("mining (") : -1] not in families, n)
    )
    known = [*CHEAP, *mining, *LATER]
    return [n for n in known if n in names] + sorted(n for n in names if n not in known and n != NO_STEP)


def print_breakdown(graph: GraphRun, loop: LoopRun, families: list[str], source: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 200)
    for stage, (wall, cpu) in loop.stages.items():
        graph.stages.setdefault(stage, StageFigures()).loop_wall, graph.stages[stage].loop_cpu = wall, cpu
    table = Table(title=f"per stage: traj2env generate (graph) vs the core functions in a loop; {source}")
    for name in (
        "stage",
        "steps",
        "graph wall s",
        "graph CPU s",
        "core CPU s",
        "Dagster CPU s",
        "events",
        "write s",
        "mats",
        "loop wall s",
        "loop CPU s",
        "graph/loop",
    ):
        table.add_column(name, justify="left" if name == "stage" else "right")
    total = StageFigures(loop_wall=0.0, loop_cpu=0.0)
    for name in stage_order(list(graph.stages), families):
        f = graph.stages[name]
        ratio = f"{f.graph_cpu / f.loop_cpu:.1f}x" if f.loop_cpu else "-"
        label = name
        if name.startswith("mining (") and name[len("mining (") : -1] not in families:
            label = f"{name} not selected"
        table.add_row(
            label,
            str(f.steps),
            _seconds(f.graph_wall),
            _seconds(f.graph_cpu),
            _seconds(f.core_cpu),
            _seconds(f.graph_cpu - f.core_cpu),
            str(f.events),
            _seconds(f.write_wall),
            str(f.materializations),
            _seconds(f.loop_wall),
            _seconds(f.loop_cpu),
            ratio,
        )
        total.steps += f.steps
        total.graph_wall += f.graph_wall
        total.graph_cpu += f.graph_cpu
        total.core_cpu += f.core_cpu
        total.events += f.events
        total.write_wall += f.write_wall
        total.materializations += f.materializations
        total.loop_wall = (total.loop_wall or 0.0) + (f.loop_wall or 0.0)
        total.loop_cpu = (total.loop_cpu or 0.0) + (f.loop_cpu or 0.0)
    table.add_section()
    table.add_row(
        "steps total",
        str(total.steps),
        _seconds(total.graph_wall),
        _seconds(total.graph_cpu),
        _seconds(total.core_cpu),
        _seconds(total.graph_cpu - total.core_cpu),
        str(total.events),
        _seconds(total.write_wall),
        str(total.materializations),
        _seconds(total.loop_wall),
        _seconds(total.loop_cpu),
        f"{total.graph_cpu / total.loop_cpu:.1f}x" if total.loop_cpu else "-",
    )
    console.print(table)
    outside = graph.stages.get(NO_STEP, StageFigures())
    all_events = total.events + outside.events
    all_writes = total.write_wall + outside.write_wall
    print(f"sessions: {loop.sessions} registered ({loop.rejected} inputs rejected); families: {', '.join(families)}")
    print(
        f"graph run (traj2env generate, jobs 1, subprocess): wall {graph.wall:.2f} s, CPU {graph.cpu:.2f} s "
        f"(user+sys, children rusage); {graph.runs} Dagster runs"
    )
    print(f"  import traj2env_assets.cli: wall {graph.import_wall:.2f} s, CPU {graph.import_cpu:.2f} s")
    print(
        f"  CPU of the run's process {graph.self_cpu:.2f} s: in steps {total.graph_cpu:.2f} s, outside steps "
        f"{graph.self_cpu - total.graph_cpu:.2f} s (import {graph.import_cpu:.2f} s; the rest: interpreter start, "
        f"registration, definitions, run start/end, between steps); its subprocesses {graph.children_cpu:.2f} s; "
        f"process exit {graph.cpu - graph.self_cpu - graph.children_cpu:.2f} s"
    )
    per_event = 1000 * all_writes / all_events if all_events else 0.0
    print(
        f"  events written: {all_events} ({outside.events} outside steps), handle_new_event wall {all_writes:.2f} s "
        f"({per_event:.1f} ms/event); materializations {total.materializations}"
    )
    print(
        "core loop (same files, core functions, one process): "
        f"wall {(total.loop_wall or 0) + loop.register_wall:.2f} s, "
        f"CPU {(total.loop_cpu or 0) + loop.register_cpu:.2f} s, of which registration {loop.register_cpu:.2f} s CPU"
    )
    print(
        "method: steps, graph wall, events, mats read from the run's Dagster instance (event timestamps); "
        "graph CPU = process_time between each step's STEP_START and STEP_SUCCESS/FAILURE "
        "(probe on DagsterInstance.handle_new_event); core CPU = process_time inside the stage's core "
        "function(s) during the graph run; write s = wall inside handle_new_event for the step's events; "
        "loop = time.process_time around the loop"
    )


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--graph-child":
        sys.exit(graph_child(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder of agent logs")
    parser.add_argument("--families", default="repair", help="comma-separated (default repair)")
    parser.add_argument("--limit", type=int, default=None, help="at most N sessions (the config's limit option)")
    parser.add_argument("--workspace", type=Path, help="kept root for both runs' workspaces (must be new or empty)")
    parser.add_argument(
        "--cheap-only",
        action="store_true",
        help="propose_only: the Docker stages plan no work (the cheap stages' figures, sooner)",
    )
    arguments = parser.parse_args()
    if not arguments.source.is_dir():
        parser.error(f"{arguments.source} is not a folder")
    families = [name.strip() for name in arguments.families.split(",") if name.strip()]
    if arguments.workspace is not None:
        root = arguments.workspace.resolve()
        if root.exists() and any(root.iterdir()):
            parser.error(f"{root} is not empty: both runs need a fresh workspace")
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="traj2env-pipeline-"))
    # Both runs' instances live under their workspace, never in a DAGSTER_HOME set outside.
    os.environ.pop("DAGSTER_HOME", None)
    try:
        config = write_config(root, arguments.source, families, arguments.limit, arguments.cheap_only)
        print(f"graph run on {arguments.source} ...", flush=True)
        graph = run_graph(config, root / "graph")
        print("core loop ...", flush=True)
        loop = run_loop(config, root / "loop")
        print_breakdown(graph, loop, families, arguments.source)
    finally:
        if arguments.workspace is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"workspaces kept under {root}")


if __name__ == "__main__":
    main()
