"""A scale run: N generated sessions through every stage; wall, CPU, peak RSS and event-log size per N.

    .venv/bin/python benchmarks/scale.py [--counts 100,500,1000] [--families repair,build,extend,qa]
                                         [--jobs 1] [--mine-share 0.01] [--rss-tolerance 0.25] [--keep DIR]

For each count N (default 100, 500 and 1,000), N distinct sessions are generated from the
bundled samples (examples/trajectories/: ATIF, Claude Code, Codex and pi) into a fresh
folder, and ``traj2env generate`` (the example config with those sessions as
``source.path``, the chosen families, ``jobs`` 1 unless ``--jobs``, no model: the LLM
stages do nothing) runs on them on a fresh workspace with its Dagster instance under it
(``<workspace>/.dagster``). Everything is under one temporary folder, removed afterwards
(``--keep DIR`` keeps it in DIR instead).

The sessions (:func:`sample_shapes`, :func:`generate_sessions`):

- most have nothing to mine ("quiet"). Per sample, the longest of three shapes that no
  selected family takes a candidate past mining from: the whole log; the log cut before
  its first shell command (the agent wrote files but never ran a check); the log cut
  before its first tool call (the prompt, and the agent's first words where a record of
  their own holds them: a session that ends before any work). Which ones qualify is
  found by running the cheap stages' core functions on every shape once (seconds, no
  Docker): a family that mines nothing, or drops its candidate at mining for the
  content's own sake (``not_python``, ``fix_changes_check_config``...), leaves a shape
  quiet; a live candidate, or one that is only a ``duplicate_of`` another copy, does
  not. With every family, build takes any session that creates a Python project, so
  the quiet shapes are the Node samples (cut, or config-cheat whole) and the Python
  samples cut before their first tool call; with ``--families repair`` most are whole
  sessions. The shapes line printed first says which. The quiet sessions take the
  shapes in turn, scenario by scenario, each in all four formats, so every parser does
  its share.
- a share (``--mine-share``, default 1 %: session i is one when ``floor((i+1)*share)``
  steps up there, so N=100 has 1, 500 has 5, 1,000 has 10, and a smaller N's sessions
  are the first of a larger N's) is a whole sample that yields candidates:
  python-pytest-fix, python-unittest-fix and python-ruff-fix in turn, each in its four
  formats (a live repair and a live build candidate each with every family). Their
  candidates go through the image, calibration and trial stages in Docker (build's
  calibration is a mutation run of up to ten minutes), so they weigh on the wall time
  far more than their share.
- every session is its own input: a new session id (a UUID5 of its index, written over
  every occurrence of the sample's id, and the file name of a Claude Code log, which the
  format takes as its id), so its partition key is ``<format>-<new id>``; and new content:
  a quiet session's project folder (its ``cwd`` and every path under it) gets the suffix
  ``-sNNNNN``; a yielding session's project name (the folder, which is also its module
  name) gets ``_sNNNNN`` everywhere (file names, imports, the names of functions and
  tests that contain it), so its candidates are new work, not ``duplicate_of`` an
  earlier copy, and their Docker stages are not skipped.

Each count's ``traj2env generate`` is run by a wrapper subprocess (this script with
``--measure``), so the rusage of the wrapper's children is the generate command's alone:
``peak RSS`` is its ``ru_maxrss`` (the largest resident set of the command's process or
of any one of its workers with ``--jobs`` > 1), ``CPU`` its user + system time and that
of its subprocesses (not the Docker daemon's or the containers'). The wrapper also reads
``/proc`` once a second: ``tree RSS`` is the peak of the summed resident set of the
command and all its descendants (what ``--jobs`` workers add up to); for the largest count
the tree RSS when its replay stage had reached each count's number of sessions (its
folders in the workspace; 100, 500 and 1,000 by default) and at the end (the report step)
shows the growth inside one run.

The event log is the instance's SQLite storage: ``event log`` is the size of every file
under ``<home>/history/runs/`` (``index.db`` and one database per run, with their ``-wal``
and ``-shm`` files), ``runs DB`` that of ``<home>/history/runs.db*``; ``events`` counts the
rows of every run database's ``event_logs`` table, ``runs`` the rows of ``runs``.
``registered`` is the workspace's source registry; ``candidates`` (every one mined),
``past mining`` (not dropped at mining: the ones the Docker stages work on) and
``published`` are from report.json.

Reading it: a run has a fixed cost (the interpreter, the imports, the definitions, the
report), so ``s/sess`` and ``KiB/sess`` fall as N grows; ``+s/sess`` and
``+KiB/sess`` are what each session beyond the previous row's N added, the figures to
extrapolate with, and should be about the same on every row. The peak RSS should not
rise with N. The verdict compares the peak RSS of the smallest and the largest count: flat when it grew by
at most ``--rss-tolerance`` (25 %). The yielding sessions' Docker work is in the wall time
and makes a row with more of them slower per session. Figures come from one run each on a
possibly shared machine: wall time moves with the load (``uptime`` is printed before and
after).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "examples" / "trajectories"
EXAMPLE_CONFIG = REPO / "examples" / "trajectory-to-env.yaml"
CONFIG_NAME = "scale-benchmark.yaml"
FIGURES_NAME = "figures.json"
DESTINATION = "trajectory-tasks"
DEFAULT_COUNTS = "100,500,1000"
# Samples that yield a live repair and a live build candidate in every format once their
# project name is made unique; their project name is a Python identifier (renamed whole).
YIELDING_SCENARIOS = ("python-pytest-fix", "python-unittest-fix", "python-ruff-fix")
# Tool names that run a shell command, in the four formats (Claude Code and ATIF ``Bash``,
# pi ``bash``, Codex ``exec_command``/``shell``), and the Codex records that are one.
SHELL_TOOLS = frozenset({"bash", "exec_command", "shell", "local_shell", "container.exec"})
SHELL_RECORDS = frozenset({"local_shell_call", "exec_command_begin"})
# Records that call a tool: Claude Code ``tool_use``, pi ``toolCall``, Codex calls (ATIF
# calls carry ``function_name``).
TOOL_CALL_RECORDS = frozenset({"tool_use", "toolCall", "custom_tool_call", "function_call", "local_shell_call"})
NAMESPACE = uuid.UUID("5c0be7c8-7a43-4c42-9d4b-1d9a7b1f0a55")
_CWD = re.compile(r'"cwd"\s*:\s*"([^"]+)"')


# --- The sessions --------------------------------------------------------------------------

WHOLE, NO_COMMAND, NO_TOOL = "whole", "cut before its first command", "cut before its first tool call"
# Drop reasons that do not make a session quiet: the candidate would go on were it the
# only copy of its work.
NOT_QUIET = (None, "duplicate_of")


@dataclass(frozen=True)
class Shape:
    """A sample, whole or cut, as the generated sessions copy it."""

    sample: Path
    cut: str
    text: str

    @property
    def name(self) -> str:
        return f"{self.sample.parent.name}/{self.sample.name}"


@dataclass(frozen=True)
class Shapes:
    quiet: list[Shape]
    yielding: list[Shape]


@dataclass(frozen=True)
class GeneratedSession:
    index: int
    path: Path
    shape: Shape
    session_id: str
    yields: bool


def runs_a_command(value: Any) -> bool:
    """Whether a parsed log record (a JSONL line, an ATIF step) runs a shell command."""
    if isinstance(value, dict):
        name = value.get("name", value.get("function_name"))
        if isinstance(name, str) and name.lower() in SHELL_TOOLS:
            return True
        if value.get("type") in SHELL_RECORDS:
            return True
        return any(runs_a_command(item) for item in value.values())
    if isinstance(value, list):
        return any(runs_a_command(item) for item in value)
    return False


def calls_a_tool(value: Any) -> bool:
    """Whether a parsed log record calls any tool (a write, an edit, a read, a command)."""
    if isinstance(value, dict):
        if value.get("type") in TOOL_CALL_RECORDS or "function_name" in value:
            return True
        return any(calls_a_tool(item) for item in value.values())
    if isinstance(value, list):
        return any(calls_a_tool(item) for item in value)
    return False


def cut_before(sample: Path, stop: Callable[[Any], bool]) -> str:
    """The sample up to (not including) its first record after the first one that ``stop``
    matches: a JSONL line, or an ATIF step (``final_metrics.total_steps`` follows)."""
    text = sample.read_text(encoding="utf-8")
    if sample.suffix == ".json":
        document = json.loads(text)
        steps = document["steps"]
        cut = next((i for i, step in enumerate(steps) if i > 0 and stop(step)), len(steps))
        if cut == len(steps):
            return text
        document["steps"] = steps[:cut]
        if isinstance(document.get("final_metrics"), dict) and "total_steps" in document["final_metrics"]:
            document["final_metrics"]["total_steps"] = cut
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    lines = text.splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if i > 0 and line.strip() and stop(json.loads(line))), len(lines))
    return "".join(lines[:cut])


def _mined(families: list[str], shapes: list[Shape]) -> dict[Shape, list[str | None]]:
    """Each shape's candidates' drop reasons at mining (None: live), from the cheap stages'
    core functions on a scratch workspace (seconds: no Docker, no Dagster)."""
    from traj2env_assets.families.registry import registered_families
    from traj2env_assets.layout import Workspace
    from traj2env_assets.lifecycle.status import partition_statuses
    from traj2env_assets.sources import load_registry, register_sources
    from traj2env_assets.stages.candidates.mining import mine_partition
    from traj2env_assets.stages.convert.conversion import convert_partition
    from traj2env_assets.stages.replay.partition import replay_partition
    from traj2env_assets.stages.scan.gate import scan_partition

    with tempfile.TemporaryDirectory(prefix="traj2env-scale-shapes-") as folder:
        root = Path(folder)
        by_path: dict[str, Shape] = {}
        for number, shape in enumerate(shapes):
            target = root / "sessions" / f"{number:03d}" / shape.sample.name
            target.parent.mkdir(parents=True)
            target.write_text(shape.text, encoding="utf-8")
            by_path[str(target.resolve())] = shape
        space = Workspace(root=root / "workspace")
        registration = register_sources(space, root / "sessions")
        sources = load_registry(space).sources
        mined: dict[Shape, list[str | None]] = {}
        for key in registration.new:
            convert_partition(space, key)
            scan_partition(space, key)
            replay_partition(space, key)
            reasons: list[str | None] = []
            for family in registered_families().selected(families):
                mine_partition(space, family, key)
                reasons += [
                    status.drop.reason if status.drop else None
                    for status in partition_statuses(space, family.name, key)
                ]
            mined[by_path[sources[key].path]] = reasons
    missing = [shape.name for shape in shapes if shape not in mined]
    if missing:
        raise ValueError(f"samples not registered: {missing}")
    return mined


def sample_shapes(families: list[str]) -> Shapes:
    """The quiet shapes: per sample, the longest of whole, cut before its first command and
    cut before its first tool call that no family in
    ``families`` takes a candidate past mining from (none mined, or every one dropped for
    a reason of its own content). The yielding shapes: the YIELDING_SCENARIOS samples,
    whole, that give at least one candidate past mining (or one that is only a
    ``duplicate_of`` another copy of the sample: made unique, it goes on)."""
    # Scenario by scenario, each in every format: consecutive sessions take turns of format.
    samples = sorted(
        (path for path in SAMPLES.rglob("*") if path.suffix in (".json", ".jsonl")),
        key=lambda path: (path.stem, path.parent.name),
    )
    variants: dict[Path, list[Shape]] = {}
    for sample in samples:
        texts = {
            WHOLE: sample.read_text(encoding="utf-8"),
            NO_COMMAND: cut_before(sample, runs_a_command),
            NO_TOOL: cut_before(sample, calls_a_tool),
        }
        unique = {text: cut for cut, text in reversed(texts.items())}  # the longest cut's name per text
        variants[sample] = [Shape(sample, cut, text) for text, cut in unique.items()]
        variants[sample].sort(key=lambda shape: [WHOLE, NO_COMMAND, NO_TOOL].index(shape.cut))
    mined = _mined(families, [shape for shapes in variants.values() for shape in shapes])
    quiet = []
    for sample in samples:
        quiet += [shape for shape in variants[sample] if not any(r in NOT_QUIET for r in mined[shape])][:1]
    yielding = [
        variants[sample][0]
        for scenario in YIELDING_SCENARIOS
        for sample in samples
        if sample.stem == scenario and any(r in NOT_QUIET for r in mined[variants[sample][0]])
    ]
    return Shapes(quiet=quiet, yielding=yielding)


def _sample_session_id(sample: Path) -> str:
    from traj2env_assets.formats.detect import detect_head, read_head, session_id_in_head

    head = read_head(sample)
    session = session_id_in_head(head, detect_head(head), sample)
    if not session:
        raise ValueError(f"{sample}: no session id")
    return session


def _cwd(text: str, sample: Path) -> str:
    match = _CWD.search(text)
    if match is None:
        raise ValueError(f"{sample}: no cwd")
    return match.group(1)


def yields_at(index: int, share: Fraction) -> bool:
    """Session ``index`` is a yielding one: ``floor((index + 1) * share)`` steps up there."""
    return (index + 1) * share.numerator // share.denominator > index * share.numerator // share.denominator


def share_fraction(share: float) -> Fraction:
    if not 0 <= share <= 1:
        raise ValueError(f"mine share {share} is not between 0 and 1")
    return Fraction(share).limit_denominator(10_000)


def generate_sessions(folder: Path, count: int, shapes: Shapes, mine_share: float = 0.01) -> list[GeneratedSession]:
    """``count`` distinct sessions in ``folder/<format>/``: see the module docstring."""
    share = share_fraction(mine_share) if shapes.yielding else Fraction(0)
    if not shapes.quiet and count > 0:
        raise ValueError("no sample is quiet for these families")
    session_ids = {shape.sample: _sample_session_id(shape.sample) for shape in (*shapes.quiet, *shapes.yielding)}
    generated: list[GeneratedSession] = []
    made = {True: 0, False: 0}
    for index in range(count):
        tag = f"s{index:05d}"
        new_id = str(uuid.uuid5(NAMESPACE, f"traj2env-scale/{index}"))
        yields = yields_at(index, share)
        pool = shapes.yielding if yields else shapes.quiet
        shape = pool[made[yields] % len(pool)]
        made[yields] += 1
        cwd = _cwd(shape.text, shape.sample)
        if yields:
            # The project's name is also its module's: renamed everywhere, the work is new.
            project = cwd.rsplit("/", 1)[-1]
            if not project.isidentifier():
                raise ValueError(f"{shape.name}: project {project!r} is not a Python identifier")
            text = shape.text.replace(project, f"{project}_{tag}")
        else:
            text = shape.text.replace(cwd, f"{cwd}-{tag}")
        text = text.replace(session_ids[shape.sample], new_id)
        fmt = shape.sample.parent.name
        name = f"{new_id}.jsonl" if fmt == "claude-code" else f"{shape.sample.stem}-{tag}{shape.sample.suffix}"
        target = folder / fmt / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        generated.append(GeneratedSession(index, target, shape, new_id, yields))
    return generated


def describe_shapes(shapes: Shapes) -> str:
    cuts = Counter(shape.cut for shape in shapes.quiet)
    formats = sorted({shape.sample.parent.name for shape in shapes.quiet})
    quiet = ", ".join(f"{number} {cut}" for cut, number in cuts.items())
    yielding = ", ".join(shape.name for shape in shapes.yielding) or "none"
    return (
        f"quiet shapes ({len(shapes.quiet)}, formats {', '.join(formats)}): {quiet}; "
        f"yielding shapes ({len(shapes.yielding)}): {yielding}"
    )


# --- One count, measured by a wrapper subprocess --------------------------------------------


def _tree_rss_kib(root_pid: int) -> int:
    """Summed VmRSS of ``root_pid`` and its descendants (0 once it is gone)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid = int(entry.name)
        children.setdefault(int(fields.get("PPid", "0").strip() or 0), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def _count_entries(folder: Path) -> int:
    try:
        return sum(1 for _ in os.scandir(folder))
    except OSError:
        return 0


def measure(config: Path, workspace: Path, figures_file: Path, interval: float = 1.0) -> int:
    """The wrapper: ``traj2env generate`` as its only child; wall, rusage and sampled RSS to JSON."""
    command = [
        sys.executable,
        "-m",
        "traj2env_assets.cli",
        "generate",
        "--config",
        str(config),
        "--workspace",
        str(workspace),
    ]
    log = workspace.parent / "generate.log"
    started = time.perf_counter()
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT)
        samples: list[tuple[float, int, int]] = []  # (seconds, sessions replayed, tree RSS KiB)
        done = threading.Event()

        def poll() -> None:
            while not done.wait(interval):
                samples.append(
                    (time.perf_counter() - started, _count_entries(workspace / "replay"), _tree_rss_kib(process.pid))
                )

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        code = process.wait()
        done.set()
        poller.join()
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = {
        "code": code,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "maxrss_kib": usage.ru_maxrss,
        "samples": samples,
    }
    figures_file.write_text(json.dumps(figures), encoding="utf-8")
    return code


# --- Reading a run back ---------------------------------------------------------------------


@dataclass
class CountRun:
    count: int
    yielding: int
    families: list[str]
    wall: float = 0.0
    cpu: float = 0.0
    maxrss_kib: int = 0
    tree_rss_kib: int = 0
    event_log_bytes: int = 0
    runs_db_bytes: int = 0
    event_log_files: int = 0
    events: int | None = None
    runs: int | None = None
    registered: int = 0
    inputs: int = 0
    candidates: int = 0
    live: int = 0
    published: int = 0
    checkpoints: dict[int, int] = field(default_factory=dict)  # sessions replayed -> tree RSS KiB
    end_rss_kib: int = 0  # the last sample's tree RSS


def _sqlite_count(database: Path, table: str) -> int | None:
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            return int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        finally:
            connection.close()
    except sqlite3.Error:
        return None


def read_instance(home: Path, run: CountRun) -> None:
    """Sizes and row counts of the instance's SQLite storage."""
    from traj2env_assets.defs.pool_storage import EVENT_LOG_DIR

    events_dir = home.joinpath(*EVENT_LOG_DIR)
    files = [path for path in events_dir.rglob("*") if path.is_file()] if events_dir.is_dir() else []
    run.event_log_bytes = sum(path.stat().st_size for path in files)
    run.event_log_files = sum(1 for path in files if path.suffix == ".db")
    history = home / "history"
    run.runs_db_bytes = sum(path.stat().st_size for path in history.glob("runs.db*") if path.is_file())
    counts = [_sqlite_count(path, "event_logs") for path in files if path.suffix == ".db" and path.name != "index.db"]
    run.events = None if not counts or None in counts else sum(c for c in counts if c is not None)
    run.runs = _sqlite_count(history / "runs.db", "runs")


def read_outputs(workspace: Path, run: CountRun) -> None:
    """Registered sources, and inputs, live and published candidates from report.json."""
    registry = workspace / "sources" / "registry.json"
    if registry.is_file():
        run.registered = len(json.loads(registry.read_text(encoding="utf-8"))["sources"])
    report = workspace / DESTINATION / "report.json"
    if report.is_file():
        data = json.loads(report.read_text(encoding="utf-8"))
        run.inputs = len(data["inputs"])
        run.candidates = len(data["candidates"])
        run.live = sum(1 for candidate in data["candidates"] if candidate.get("dropped_at") != "candidates")
        run.published = sum(1 for candidate in data["candidates"] if candidate.get("kept"))


def write_config(root: Path, sessions: Path, families: list[str], jobs: int) -> Path:
    """The example config on ``sessions`` with the families and jobs; no model, default destination."""
    import yaml

    config = yaml.safe_load(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    config["source"]["path"] = str(sessions.resolve())
    config["pipeline"]["options"]["families"] = families
    config["pipeline"]["options"]["jobs"] = jobs
    config["output"].pop("destination", None)
    config["output"]["dataset_name"] = DESTINATION
    path = root / CONFIG_NAME
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run_count(
    root: Path,
    count: int,
    families: list[str],
    jobs: int,
    shapes: Shapes,
    mine_share: float,
    checkpoints: list[int] | None = None,
) -> CountRun:
    """Generate ``count`` sessions into ``root`` and run ``traj2env generate`` on them, measured;
    the tree RSS when the replay stage had reached each of ``checkpoints`` sessions."""
    from traj2env_assets.layout import Workspace

    root.mkdir(parents=True)
    sessions = generate_sessions(root / "sessions", count, shapes, mine_share)
    config = write_config(root, root / "sessions", families, jobs)
    workspace = root / "workspace"
    figures_file = root / FIGURES_NAME
    environment = {key: value for key, value in os.environ.items() if key != "DAGSTER_HOME"}
    command = [sys.executable, __file__, "--measure", str(config), str(workspace), str(figures_file)]
    completed = subprocess.run(command, cwd=REPO, env=environment, check=False)
    log = root / "generate.log"
    if completed.returncode != 0 or not figures_file.is_file():
        sys.stderr.write(log.read_text(errors="replace")[-5000:] if log.is_file() else "")
        raise SystemExit(f"traj2env generate on {count} sessions exited with {completed.returncode}")
    figures = json.loads(figures_file.read_text(encoding="utf-8"))
    run = CountRun(
        count=count,
        yielding=sum(1 for s in sessions if s.yields),
        families=families,
        wall=figures["wall"],
        cpu=figures["cpu"],
        maxrss_kib=figures["maxrss_kib"],
    )
    samples = figures["samples"]
    run.tree_rss_kib = max((rss for _, _, rss in samples), default=0)
    run.end_rss_kib = samples[-1][2] if samples else 0
    for checkpoint in (c for c in checkpoints or [] if c <= count):
        run.checkpoints[checkpoint] = next((rss for _, done, rss in samples if done >= checkpoint), 0)
    read_instance(Workspace(root=workspace).dagster_home, run)
    read_outputs(workspace, run)
    return run


# --- The table ------------------------------------------------------------------------------


def _mib(kib_or_bytes: float, unit: int) -> str:
    return f"{kib_or_bytes * unit / 2**20:.1f}"


def verdict(runs: list[CountRun], tolerance: float) -> str:
    first, last = min(runs, key=lambda r: r.count), max(runs, key=lambda r: r.count)
    if first.count == last.count or not first.maxrss_kib:
        return "verdict: one count only, nothing to compare"
    growth = last.maxrss_kib / first.maxrss_kib - 1
    per_100 = (last.maxrss_kib - first.maxrss_kib) / 1024 / (last.count - first.count) * 100
    flat = "FLAT" if growth <= tolerance else "NOT FLAT"
    return (
        f"verdict: peak RSS {flat}: {first.maxrss_kib / 1024:.1f} MiB at {first.count} sessions, "
        f"{last.maxrss_kib / 1024:.1f} MiB at {last.count} ({growth:+.1%}, {per_100:+.2f} MiB per 100 sessions; "
        f"tolerance {tolerance:.0%})"
    )


def print_table(runs: list[CountRun], jobs: int, tolerance: float) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 240)
    table = Table(title=f"traj2env generate at scale: families {', '.join(runs[0].families)}, jobs {jobs}, no model")
    columns = (
        "sessions",
        "yielding",
        "registered",
        "candidates",
        "past mining",
        "published",
        "wall s",
        "s/sess",
        "+s/sess",
        "CPU s",
        "peak RSS MiB",
        "tree RSS MiB",
        "event log MiB",
        "runs DB MiB",
        "KiB/sess",
        "+KiB/sess",
        "events",
        "events/sess",
        "runs",
    )
    for name in columns:
        table.add_column(name, justify="right")
    previous: CountRun | None = None
    for run in runs:
        log_bytes = run.event_log_bytes + run.runs_db_bytes
        added_wall = added_kib = "-"
        if previous is not None:
            added = run.count - previous.count
            added_wall = f"{(run.wall - previous.wall) / added:.3f}"
            previous_bytes = previous.event_log_bytes + previous.runs_db_bytes
            added_kib = f"{(log_bytes - previous_bytes) / 1024 / added:.1f}"
        table.add_row(
            str(run.count),
            str(run.yielding),
            str(run.registered),
            str(run.candidates),
            str(run.live),
            str(run.published),
            f"{run.wall:.1f}",
            f"{run.wall / run.count:.3f}",
            added_wall,
            f"{run.cpu:.1f}",
            _mib(run.maxrss_kib, 1024),
            _mib(run.tree_rss_kib, 1024),
            _mib(run.event_log_bytes, 1),
            _mib(run.runs_db_bytes, 1),
            f"{log_bytes / 1024 / run.count:.1f}",
            added_kib,
            "-" if run.events is None else str(run.events),
            "-" if run.events is None else f"{run.events / run.count:.1f}",
            "-" if run.runs is None else str(run.runs),
        )
        previous = run
    console.print(table)
    largest = max(runs, key=lambda r: r.count)
    if largest.checkpoints:
        marks = ", ".join(
            f"{rss / 1024:.1f} MiB at {checkpoint}" if rss else f"- at {checkpoint}"
            for checkpoint, rss in largest.checkpoints.items()
        )
        print(
            f"tree RSS within the {largest.count}-session run when its replay stage had reached N sessions: {marks} "
            f"(end of run: {largest.end_rss_kib / 1024:.1f} MiB)"
        )
    print(verdict(runs, tolerance))
    print(
        "method: peak RSS = ru_maxrss of the generate command (its wrapper's children rusage, one wrapper per "
        "count); tree RSS = peak summed VmRSS of the command and its descendants (/proc, 1 s samples); "
        "CPU = user+sys of the command and its subprocesses; event log = every file under "
        "<workspace>/.dagster/history/runs/ (incl. -wal/-shm), KiB/sess adds the runs DB; "
        "events = rows of the run databases' event_logs; candidates, past mining (not dropped at mining) and "
        "published from report.json; +s/sess and +KiB/sess: what each session beyond the previous row's "
        "count added (the fixed cost of a run left out)"
    )


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def parse_counts(text: str) -> list[int]:
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"counts must be positive integers: {text!r}")
    return counts


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--measure":
        sys.exit(measure(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])))
    from traj2env_assets.families.registry import registered_families

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--counts",
        type=parse_counts,
        default=parse_counts(DEFAULT_COUNTS),
        help=f"comma-separated session counts, each on a fresh workspace (default {DEFAULT_COUNTS})",
    )
    parser.add_argument(
        "--families", default=",".join(registered_families().names()), help="comma-separated (default: every family)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="the config's jobs option (default 1)")
    parser.add_argument(
        "--mine-share",
        type=float,
        default=0.01,
        help="share of sessions from samples that yield candidates (default 0.01)",
    )
    parser.add_argument(
        "--rss-tolerance",
        type=float,
        default=0.25,
        help="peak RSS growth from the smallest to the largest count still called flat (default 0.25)",
    )
    parser.add_argument("--keep", type=Path, help="keep the sessions and workspaces in this new or empty folder")
    args = parser.parse_args()
    families = [name.strip() for name in args.families.split(",") if name.strip()]
    try:
        share_fraction(args.mine_share)
        registered_families().selected(families)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"load before: {_load()}  ({os.cpu_count()} cores)", flush=True)
    shapes = sample_shapes(families)
    print(describe_shapes(shapes), flush=True)
    if args.mine_share and not shapes.yielding:
        print(f"no yielding sample gives a candidate for {', '.join(families)}: every session is quiet")
    if args.keep is not None:
        root = args.keep.resolve()
        if root.exists() and any(root.iterdir()):
            parser.error(f"{root} is not empty: every count needs a fresh workspace")
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="traj2env-scale-"))
    runs: list[CountRun] = []
    try:
        for count in args.counts:
            run = run_count(
                root / f"count-{count}",
                count,
                families,
                args.jobs,
                shapes,
                args.mine_share,
                checkpoints=args.counts if count == args.counts[-1] else None,
            )
            runs.append(run)
            print(
                f"{count} sessions: wall {run.wall:.1f} s, CPU {run.cpu:.1f} s, peak RSS "
                f"{run.maxrss_kib / 1024:.1f} MiB; load: {_load()}",
                flush=True,
            )
            (root / f"count-{count}" / "run.json").write_text(json.dumps(asdict(run)), encoding="utf-8")
        print_table(runs, args.jobs, args.rss_tolerance)
        print(f"load after: {_load()}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"sessions and workspaces kept under {root}")


if __name__ == "__main__":
    main()
