"""Run the gate's probe on the host, as it runs in a task image: a project folder, its
pristine copy, and the plan the lifecycle would write."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from traj2env_assets.gate.runtime import PROBE, WORKER, runtime_file
from traj2env_assets_tests.gate.projects import AFTER, BEFORE, TESTS


def write_project(root: Path, module: str = BEFORE, tests: str = TESTS, name: str = "shop") -> None:
    (root / "tests").mkdir(parents=True)
    (root / f"{name}.py").write_text(module)
    (root / "tests" / f"test_{name}.py").write_text(tests)


def run_probe(
    tmp_path: Path,
    *,
    after: str = AFTER,
    tests: str = TESTS,
    seed: int = 7,
    before: str = BEFORE,
    name: str = "shop",
) -> dict:
    """The probe's report for the ``name`` project (the shop by default) fixed by ``after``."""
    work, pristine, runtime = tmp_path / "work", tmp_path / "pristine", tmp_path / "runtime"
    write_project(work, module=before, tests=tests, name=name)
    shutil.copytree(work, pristine)
    runtime.mkdir()
    for file in (PROBE, WORKER):
        (runtime / file).write_bytes(runtime_file(file))
    (runtime / "pytest.ini").write_text("[pytest]\n")
    plan = {
        "workdir": str(work),
        "pristine": str(pristine),
        "solution_files": {f"{name}.py": after},
        "solution_deleted": [],
        "solution_modules": [f"{name}.py"],
        "test_files": {},
        "pytest_args": ["-p", "no:cacheprovider", "-q", "-c", str(runtime / "pytest.ini"), "--rootdir", str(work)],
        "selection": ["tests"],
        "seed": seed,
        "report": str(tmp_path / "report" / "report.json"),
    }
    (runtime / "plan.json").write_text(json.dumps(plan))
    subprocess.run(
        [sys.executable, "-I", str(runtime / PROBE), str(runtime / "plan.json"), str(tmp_path / "out")],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return json.loads((tmp_path / "report" / "report.json").read_text())
