"""The in-image runner, run here as a subprocess on a temporary project (the same script the
probes ship; the Docker run is covered by the build family's calibration test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from traj2env_assets.families.contract import Probe, ProbeResult
from traj2env_assets.mutation import (
    calibration_probe,
    generate_mutants,
    kill_rate,
    mutation_probe,
    parse_calibration,
    parse_mutation_results,
)

CALC = """def add(a, b):
    return a + b


def clamp(x, lo=0, hi=10):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
"""
TESTS = """from calc import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp_low():
    assert clamp(-1) == 0
"""
IDS = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_clamp_low"]


def _run_here(probe: Probe, root: Path) -> ProbeResult:
    """Runs a probe's script on this machine with its absolute paths rebased under ``root``."""
    for path, content in probe.files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    plan_path = root / next(path for path in probe.files if path.endswith("plan.json")).lstrip("/")
    runner = (plan_path.parent / "runner.py").read_text()
    (plan_path.parent / "runner.py").write_text(runner.replace('"/tmp/', f'"{root}/tmp/'))
    plan = json.loads(plan_path.read_text())
    plan["workdir"] = str(root / plan["workdir"].lstrip("/"))
    plan["pytest_args"] = [str(root) + arg if arg.startswith("/") else arg for arg in plan["pytest_args"]]
    Path(plan["workdir"]).mkdir(parents=True, exist_ok=True)
    plan_path.write_text(json.dumps(plan))
    done = subprocess.run(
        [sys.executable, str(plan_path.parent / "runner.py"), str(plan_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return ProbeResult(
        name=probe.name, exit_code=done.returncode, timed_out=False, output_tail=done.stdout[-4000:], seconds=0
    )


def test_calibration_keeps_discriminating_tests_and_mutates_against_them(tmp_path: Path) -> None:
    stub = "def add(a, b):\n    raise NotImplementedError\n\n\ndef clamp(x, lo=0, hi=10):\n    return 0\n"
    mutants = generate_mutants({"calc.py": CALC})
    probe = calibration_probe(
        "calibration",
        states={"reference": {"calc.py": CALC}, "stub": {"calc.py": stub}, "start": {}},
        must_pass="reference",
        must_fail=["stub", "start"],
        tests={"tests/test_calc.py": TESTS},
        targets=["tests/test_calc.py"],
        mutants=mutants,
    )
    image_project = tmp_path / "workspace"
    image_project.mkdir()
    (image_project / "CONTRACT.md").write_text("the contract\n")
    calibration = parse_calibration(_run_here(probe, tmp_path), "reference", mutants)
    assert calibration is not None
    assert calibration.test_ids == IDS
    assert [run.state for run in calibration.runs] == ["reference", "reference", "stub", "start"]
    assert calibration.kept == [IDS[0]]  # clamp(-1) == 0 passes on the stub too
    assert calibration.mutation is not None
    by_description = {(m.line, m.description): calibration.mutation.statuses[m.id] for m in mutants}
    assert by_description[(2, "Add -> Sub")] == "killed"
    assert by_description[(6, "Lt -> LtE")] == "survived"  # only add() is tested by the kept test
    # The runner leaves the reference state in place, every mutant undone.
    assert (image_project / "calc.py").read_text() == CALC
    assert (image_project / "CONTRACT.md").read_text() == "the contract\n"


def test_mutants_killed_and_survived(tmp_path: Path) -> None:
    mutants = generate_mutants({"calc.py": CALC})
    probe = mutation_probe("mutation", mutants, IDS, {"calc.py": CALC, "tests/test_calc.py": TESTS})
    results = parse_mutation_results(_run_here(probe, tmp_path), mutants)
    assert results is not None and results.baseline_passed
    by_description = {(m.line, m.description): results.statuses[m.id] for m in mutants}
    assert by_description[(2, "Add -> Sub")] == "killed"
    assert by_description[(9, "return value -> None")] == "survived"  # clamp(11) is never tested
    assert (tmp_path / "workspace" / "calc.py").read_text() == CALC  # every mutant was undone
    rate = kill_rate(results)
    assert rate is not None and 0 < rate < 1


def test_failing_baseline_gives_no_kill_rate(tmp_path: Path) -> None:
    broken = CALC.replace("return a + b", "return a * b")
    mutants = generate_mutants({"calc.py": broken})
    probe = mutation_probe("mutation", mutants, IDS, {"calc.py": broken, "tests/test_calc.py": TESTS})
    results = parse_mutation_results(_run_here(probe, tmp_path), mutants)
    assert results is not None and not results.baseline_passed
    assert kill_rate(results) is None


def test_a_droppable_test_failing_the_baseline_is_left_out_of_the_mutant_runs(tmp_path: Path) -> None:
    # test_example reads a file the project lacks: it fails with or without any mutant.
    tests = TESTS + "\n\ndef test_example():\n    open('examples/box.json').read()\n"
    example = "tests/test_calc.py::test_example"
    mutants = generate_mutants({"calc.py": CALC})
    files = {"calc.py": CALC, "tests/test_calc.py": tests}
    probe = mutation_probe("mutation", mutants, [*IDS, example], files, droppable=[example])
    results = parse_mutation_results(_run_here(probe, tmp_path), mutants)
    assert results is not None and results.baseline_passed and results.dropped == [example]
    rate = kill_rate(results)
    assert rate is not None and 0 < rate < 1  # a mutant is killed only by the tests that pass
    # A test that is not droppable still fails the baseline.
    strict = mutation_probe("mutation", mutants, [*IDS, example], files, droppable=[IDS[0]])
    failed = parse_mutation_results(_run_here(strict, tmp_path / "strict"), mutants)
    assert failed is not None and not failed.baseline_passed


def test_budget_leaves_mutants_not_run(tmp_path: Path) -> None:
    mutants = generate_mutants({"calc.py": CALC})
    probe = mutation_probe("mutation", mutants, IDS, {"calc.py": CALC, "tests/test_calc.py": TESTS}, budget_s=0)
    results = parse_mutation_results(_run_here(probe, tmp_path), mutants)
    assert results is not None and set(results.statuses.values()) == {"not_run"}
    assert kill_rate(results) is None


def test_output_without_results_is_not_parsed() -> None:
    silent = ProbeResult(name="mutation", exit_code=137, timed_out=True, output_tail="Killed", seconds=1)
    assert parse_mutation_results(silent, []) is None
    assert parse_calibration(silent, "reference", []) is None
    garbled = silent.model_copy(update={"output_tail": "TRAJ2ENV-PYTEST-PROBE not-base64!"})
    assert parse_calibration(garbled, "reference", []) is None
