"""Every benchmark script still imports against the package (they run outside the suite,
so a renamed function would otherwise break one unnoticed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=[path.stem for path in BENCHMARKS])
def test_benchmark_script_imports(script: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script loads
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
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
        (sessions / f"{name}.jsonl").write_bytes((repo / "examples" / "trajectories" / "pi" / f"{name}.jsonl").read_bytes())
    environment = {key: value for key, value in os.environ.items() if key != "DAGSTER_HOME"}
    completed = subprocess.run(
        [sys.executable, str(repo / "benchmarks" / "pipeline.py"), str(sessions), "--families", "repair",
         "--workspace", str(tmp_path / "workspace")],
        cwd=repo, env=environment, capture_output=True, text=True, timeout=300, check=False,
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
    spec = importlib.util.spec_from_file_location("benchmark_make_run", BENCHMARKS[0].parent / "make_run.py")
    assert spec is not None and spec.loader is not None
    make_run = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = make_run
    try:
        spec.loader.exec_module(make_run)
    finally:
        del sys.modules[spec.name]
    builds = [("a", (0.0, 10.0)), ("b", (20.0, 30.0))]
    # a's trials 22-25 and 24-28 beside b's build: 6 s, counted once; b's 5-8 beside a's build:
    # 3 s; a's own 5-9 (its own run's build) and b's 40-50 beside nothing.
    trials = [("a", (22.0, 25.0)), ("a", (24.0, 28.0)), ("b", (5.0, 8.0)), ("a", (5.0, 9.0)), ("b", (40.0, 50.0))]
    assert make_run.overlap_seconds(builds, trials) == 9.0
    assert make_run._union_length([(0.0, 10.0), (5.0, 12.0), (20.0, 21.0)]) == 13.0
