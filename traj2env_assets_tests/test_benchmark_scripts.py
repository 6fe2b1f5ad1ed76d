"""Every benchmark script still imports against the package (they run outside the suite,
so a renamed function would otherwise break one unnoticed)."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


def _load_benchmark(name: str):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script loads
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", BENCHMARKS, ids=[path.stem for path in BENCHMARKS])
def test_benchmark_script_imports(script: Path) -> None:
    try:
        module = _load_benchmark(script.stem)
    finally:
        sys.modules.pop(f"benchmark_{script.stem}", None)
    assert callable(getattr(module, "main", None)), f"{script.name} has no main()"


CHEAP_STAGES = ("conversion", "scan", "replay", "mining (repair)")
# Sample sessions the repair family mines nothing from: no Docker stage does any work.
NOTHING_TO_REPAIR = ("python-pytest-all-pass", "python-build-package", "python-hf-dataset-stats")


def test_pipeline_benchmark_prints_every_cheap_stage(tmp_path: Path) -> None:
    """benchmarks/pipeline.py on three small sessions: a row per cheap stage, every figure a number."""
    import os
    import re
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name in NOTHING_TO_REPAIR:
        (sessions / f"{name}.jsonl").write_bytes(
            (repo / "examples" / "trajectories" / "pi" / f"{name}.jsonl").read_bytes()
        )
    environment = {key: value for key, value in os.environ.items() if key != "DAGSTER_HOME"}
    completed = subprocess.run(
        [
            sys.executable,
            str(repo / "benchmarks" / "pipeline.py"),
            str(sessions),
            "--families",
            "repair",
            "--workspace",
            str(tmp_path / "workspace"),
        ],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    rows = {}
    for line in completed.stdout.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if len(cells) == 12:
            rows[cells[0]] = cells[1:]
    number = re.compile(r"^\d+(\.\d+)?x?$")
    for stage in (*CHEAP_STAGES, "steps total"):
        assert stage in rows, f"no row for {stage}:\n{completed.stdout}"
        # steps, graph wall, graph CPU, core CPU, Dagster CPU, events, write s, mats, loop wall, loop CPU, ratio
        assert all(number.match(cell) for cell in rows[stage]), f"{stage}: {rows[stage]}"
        assert int(rows[stage][0]) >= 1 and int(rows[stage][5]) >= 1, f"{stage}: no step or no event: {rows[stage]}"
    assert "sessions: 3 registered" in completed.stdout
    assert re.search(r"import traj2env_assets\.cli: wall \d+\.\d+ s, CPU \d+\.\d+ s", completed.stdout)


def test_make_run_counts_trial_time_beside_another_run_s_builds_once() -> None:
    make_run = _load_benchmark("make_run")
    builds = [("a", (0.0, 10.0)), ("b", (20.0, 30.0))]
    # a's trials 22-25 and 24-28 beside b's build: 6 s, counted once; b's 5-8 beside a's build:
    # 3 s; a's own 5-9 (its own run's build) and b's 40-50 beside nothing.
    trials = [("a", (22.0, 25.0)), ("a", (24.0, 28.0)), ("b", (5.0, 8.0)), ("a", (5.0, 9.0)), ("b", (40.0, 50.0))]
    assert make_run.overlap_seconds(builds, trials) == 9.0
    assert make_run._union_length([(0.0, 10.0), (5.0, 12.0), (20.0, 21.0)]) == 13.0


def test_make_run_breaks_a_cold_run_down_by_stage_and_the_wall_outside_any_step(tmp_path: Path) -> None:
    make_run = _load_benchmark("make_run")
    steps = [
        make_run.Step("a", "scan", (0.0, 1.0)),
        make_run.Step("b", "candidates__repair", (0.5, 2.0)),
        make_run.Step("a", "images.images_candidate[x]", (3.0, 5.0)),
        make_run.Step("a", "calibration.calibration_candidate[x]", (5.0, 6.0)),
        make_run.Step("a", "trials.trials_candidate[x]", (6.0, 10.0)),
        make_run.Step("b", "trials.trials_deferred_candidate[y]", (10.0, 12.0)),
        make_run.Step("c", "report", (13.0, 14.0)),
    ]
    rows = {row.stage: row for row in make_run.stage_breakdown(steps, wall_s=15.0)}
    cheap = rows["cheap stages (convert … proposals)"]
    assert (cheap.steps, cheap.step_s, cheap.wall_s) == (2, 2.5, 2.0)
    assert (rows["trials"].steps, rows["trials"].wall_s) == (2, 6.0)
    assert len(make_run.step_intervals(steps)["trial"]) == 3
    assert rows["publish + report"].wall_s == 1.0 and rows["image plan (task files, wheels)"].steps == 0
    # 2-3, 12-13 and 14-15: no step of any run.
    assert rows[make_run.OUTSIDE_STEPS].wall_s == 3.0

    # Two candidates that shared one matrix: counted once.
    results = [{"seconds": 2.0, "verifier": {"seconds": 1.0}}, {"seconds": 4.0, "verifier": None}]
    for candidate in ("c", "d"):
        (tmp_path / candidate).mkdir()
        (tmp_path / candidate / "trials.json").write_text(json.dumps({"results": results, "seconds": 6.0}))
    assert make_run.trial_figures(tmp_path) == make_run.TrialFigures(2, 1, 3.0, 1.0)


def test_make_run_compares_the_published_tasks_byte_for_byte(tmp_path: Path) -> None:
    """Two sides' published tasks: equal when every task file's path, mode and bytes are;
    the run's report and the dataset manifest (timings, drop stages) are not compared."""
    make_run = _load_benchmark("make_run")
    sides = []
    for side in ("baseline", "current"):
        task = tmp_path / side / "trajectory-tasks" / "task-1"
        (task / "tests").mkdir(parents=True)
        (task / "task.toml").write_text("[task]\n")
        (task / "tests" / "test.sh").write_text("exit 0\n")
        (task.parent / "report.json").write_text(side)
        sides.append(tmp_path / side)
    baseline, current = (make_run.published_files(side) for side in sides)
    assert baseline == current and baseline.files == 2
    script = sides[1] / "trajectory-tasks" / "task-1" / "tests" / "test.sh"
    script.chmod(0o755)
    assert make_run.published_files(sides[1]) != baseline
    script.chmod(0o644)
    script.write_text("exit 1\n")
    assert make_run.published_files(sides[1]) != baseline


def test_scale_sessions_are_distinct_inputs_and_only_the_yielding_ones_are_mined(tmp_path: Path) -> None:
    """benchmarks/scale.py's generator: N sessions are N inputs (own content, own session id,
    own partition key); the quiet ones give no family a candidate past mining; each yielding
    one gives live candidates that are new work (no duplicate_of an earlier copy)."""
    import hashlib
    from fractions import Fraction

    from traj2env_assets.families.registry import registered_families
    from traj2env_assets.layout import Workspace
    from traj2env_assets.lifecycle.status import partition_statuses
    from traj2env_assets.sources import load_registry, register_sources
    from traj2env_assets.stages.candidates.mining import mine_partition
    from traj2env_assets.stages.convert.conversion import convert_partition
    from traj2env_assets.stages.replay.partition import replay_partition
    from traj2env_assets.stages.scan.gate import scan_partition

    scale = _load_benchmark("scale")
    try:
        one_in_100 = Fraction(1, 100)
        assert [sum(scale.yields_at(i, one_in_100) for i in range(n)) for n in (3, 100, 500, 1000)] == [0, 1, 5, 10]
        families = registered_families().names()
        shapes = scale.sample_shapes(families)
        assert {shape.sample.parent.name for shape in shapes.quiet} == {"atif", "claude-code", "codex", "pi"}
        assert len(shapes.yielding) == 12
        count = 40
        sessions = scale.generate_sessions(tmp_path / "sessions", count, shapes, mine_share=0.3)
    finally:
        del sys.modules["benchmark_scale"]
    assert len(sessions) == count and sum(s.yields for s in sessions) == 12  # floor(40 * 0.3)
    assert len({hashlib.sha256(s.path.read_bytes()).hexdigest() for s in sessions}) == count
    assert len({s.session_id for s in sessions}) == count
    assert not any(str(s.path).startswith(str(scale.REPO)) for s in sessions)

    space = Workspace(root=tmp_path / "workspace")
    registration = register_sources(space, tmp_path / "sessions")
    assert registration.rejected == [] and len(registration.new) == count
    sources = load_registry(space).sources
    by_path = {str(s.path.resolve()): s for s in sessions}
    # Each file is keyed by its own new session id: no key needed a content hash to stay apart.
    assert sorted(registration.new) == sorted(
        f"{sources[k].format}-{by_path[sources[k].path].session_id}" for k in registration.new
    )
    work_keys: list[str] = []
    for key in registration.new:
        session = by_path[sources[key].path]
        assert convert_partition(space, key).status == "converted", session.shape.name
        scan_partition(space, key)
        assert replay_partition(space, key).outcome.status == "replayed", session.shape.name
        statuses = []
        for family in registered_families().selected(families):
            mine_partition(space, family, key)
            statuses += partition_statuses(space, family.name, key)
        live = [status for status in statuses if status.drop is None]
        if session.yields:
            assert live, f"{session.shape.name}: no live candidate"
            assert all(status.drop.reason != "duplicate_of" for status in statuses if status.drop), session.shape.name
            work_keys += [status.work_key or "" for status in live]
        else:
            assert live == [], f"{session.shape.name} ({session.shape.cut}): {[s.task_id for s in live]}"
    assert len(work_keys) == len(set(work_keys)) >= 12


@pytest.mark.slow
def test_scale_benchmark_prints_a_row_per_count(tmp_path: Path) -> None:
    """benchmarks/scale.py --counts 3,6 --families repair: a row per count, every figure a
    number, every generated session registered, nothing mined past mining (no Docker work)."""
    import json
    import os
    import re
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    keep = tmp_path / "scale"
    environment = {key: value for key, value in os.environ.items() if key != "DAGSTER_HOME"}
    completed = subprocess.run(
        [
            sys.executable,
            str(repo / "benchmarks" / "scale.py"),
            "--counts",
            "6,3",
            "--families",
            "repair",
            "--keep",
            str(keep),
        ],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    rows = {}
    for line in completed.stdout.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if len(cells) == 19 and cells[0].isdigit():
            rows[int(cells[0])] = cells
    assert list(rows) == [3, 6], completed.stdout  # each count once, smallest first
    number = re.compile(r"^-?\d+(\.\d+)?$")
    for count, cells in rows.items():
        # sessions, yielding, registered, candidates, past mining, published, wall, s/session, +s/session, CPU,
        # peak RSS, tree RSS, event log MiB, runs DB MiB, KiB/session, +KiB/session, events, events/session, runs
        assert all(number.match(cell) for i, cell in enumerate(cells) if not (count == 3 and i in (8, 15))), cells
        assert cells[1] == "0" and int(cells[2]) == count, cells  # every generated session registered
        assert cells[4] == "0" and cells[5] == "0", cells  # nothing past mining: no Docker stage did work
        assert float(cells[6]) > 0 and float(cells[9]) > 0 and float(cells[10]) > 50, cells
        assert float(cells[12]) > 0 and int(cells[16]) > 0 and int(cells[18]) >= 2, cells  # a batch run + the report
        run = json.loads((keep / f"count-{count}" / "run.json").read_text())
        assert run["registered"] == run["inputs"] == count and run["maxrss_kib"] > 50 * 1024
        files = sorted((keep / f"count-{count}" / "sessions").rglob("*.json*"))
        assert len(files) == count and len({path.read_bytes() for path in files}) == count
    assert int(rows[6][16]) > int(rows[3][16]), "three more sessions wrote no more events"
    assert re.search(
        r"verdict: peak RSS (FLAT|NOT FLAT): \d+\.\d MiB at 3 sessions, \d+\.\d MiB at 6 \([+-]\d+\.\d%",
        completed.stdout,
    ), completed.stdout
    assert re.search(
        r"tree RSS within the 6-session run when its replay stage had reached N sessions: "
        r"\d+\.\d MiB at 3, \d+\.\d MiB at 6 \(end of run: \d+\.\d MiB\)",
        completed.stdout,
    ), completed.stdout


def test_trial_cost_splits_the_machines_cpu_into_daemons_this_process_and_the_rest() -> None:
    trial_cost = _load_benchmark("trial_cost")
    split = trial_cost.CpuSplit(wall_s=2.0, busy_s=2.5, daemons_s={"dockerd": 0.5, "containerd": 0.1}, client_s=0.2)
    assert round(split.containers_s, 6) == 1.7
    # This process is found by its name, and the CPU it burns shows there and machine-wide.
    own_name = Path("/proc/self/stat").read_text().split("(", 1)[1].rsplit(")", 1)[0]
    before, busy = trial_cost.process_cpu_s((own_name,))[own_name], trial_cost.machine_busy_s()
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    assert trial_cost.process_cpu_s((own_name,))[own_name] - before >= 0.2
    assert trial_cost.machine_busy_s() - busy >= 0.2
