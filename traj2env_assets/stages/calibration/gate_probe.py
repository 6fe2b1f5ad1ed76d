"""The behaviour gate's calibration probe, as the lifecycle runs it in a candidate's image.

One probe per Python task (``runtime/gate_probe.py`` with ``runtime/gate_worker.py``):
record the tests' calls on the reference, perturb them, answer every case on the
reference twice and on the code before the change. Its report is a file read back from
the container (it can be far larger than a probe's output tail).
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, ValidationError

from traj2env_assets.conventions import is_test_path, sorted_json_sha256
from traj2env_assets.docker_engine.probe import Probe, ProbeResult
from traj2env_assets.gate.runtime import PROBE, WORKER, runtime_file
from traj2env_assets.harbor.scripts import PRISTINE_DIR
from traj2env_assets.harbor.task_spec import (
    WORKSPACE,
    TaskSpec,
    harness_files,
)

GATE_PROBE = "behaviour_gate"
PROBE_DIR = "/tmp/traj2env-gate-probe"
# Alone in its folder: the host copies the folder out (the probe's working files stay out of it).
REPORT_FILE = "/tmp/traj2env-gate-report/report.json"
PROBE_TIMEOUT_S = 900


def solution_modules(spec: TaskSpec) -> list[str]:
    """The Python files the change writes that are solution code (not tests, not harness)."""
    if spec.tests is None:
        return []
    harness = harness_files(spec.tests.runner)
    return sorted(
        path
        for path in spec.solution_files
        if path.endswith(".py") and not is_test_path(path) and PurePosixPath(path).name not in harness
    )


def _texts(files: dict[str, bytes]) -> dict[str, str] | None:
    try:
        return {path: content.decode("utf-8") for path, content in files.items()}
    except UnicodeDecodeError:
        return None


def gate_applies(spec: TaskSpec) -> bool:
    """A pytest task whose change writes Python solution code, all of it text."""
    return (
        spec.tests is not None
        and spec.tests.runner == "pytest"
        and bool(solution_modules(spec))
        and _texts(spec.solution_files) is not None
    )


def judged_selection(spec: TaskSpec) -> list[str]:
    """What the verifier runs: the recorded check's selection, or the tracked and existing tests."""
    tests = spec.tests
    assert tests is not None
    return list(tests.run_targets) if tests.reward == "check" else [*tests.tracked_test_ids, *tests.gate_test_ids]


def gate_probe(spec: TaskSpec) -> Probe:
    tests = spec.tests
    assert tests is not None and gate_applies(spec)
    config = f"{WORKSPACE}/{tests.pytest_config}" if tests.pytest_config else f"{PROBE_DIR}/pytest.ini"
    plan = {
        "workdir": WORKSPACE,
        "pristine": PRISTINE_DIR,
        "solution_files": _texts(spec.solution_files),
        "solution_deleted": list(spec.solution_deleted),
        "solution_modules": solution_modules(spec),
        "test_files": dict(tests.test_files),
        "pytest_args": ["-p", "no:cacheprovider", "-q", "-c", config, "--rootdir", WORKSPACE],
        "selection": judged_selection(spec),
        # Seeded by what the task is, not its id: copies of one fix logged in several formats
        # share one probe (and its calibration cache entry).
        "seed": int(
            sorted_json_sha256([_texts(spec.solution_files), tests.test_files, judged_selection(spec)])[:8], 16
        ),
        "report": REPORT_FILE,
    }
    files = {f"{PROBE_DIR}/{name}": runtime_file(name) for name in (WORKER, PROBE)}
    files[f"{PROBE_DIR}/pytest.ini"] = b"[pytest]\n"
    files[f"{PROBE_DIR}/plan.json"] = json.dumps(plan, sort_keys=True).encode()
    return Probe(
        name=GATE_PROBE,
        script=f"python3 -I {PROBE_DIR}/{PROBE} {PROBE_DIR}/plan.json {PROBE_DIR}/out 2>&1",
        workdir=WORKSPACE,
        timeout_s=PROBE_TIMEOUT_S,
        files=files,
        result_file=REPORT_FILE,
    )


class ProbeReport(BaseModel):
    """``report.json`` as the probe writes it."""

    model_config = ConfigDict(extra="ignore")

    tests: dict[str, dict]
    roots: list[str]
    cases: list[dict]
    answers: dict[str, dict[str, list | None]]
    logs: dict[str, str] = {}


def parse_gate_report(result: ProbeResult) -> ProbeReport | str:
    """The probe's report, or why there is none."""
    if not result.result:
        return f"the probe left no report (exit {result.exit_code}): {result.output_tail[-1500:]}"
    try:
        raw = json.loads(result.result)
    except ValueError:
        return "the probe's report is not JSON"
    if isinstance(raw, dict) and "error" in raw:
        return str(raw["error"])
    try:
        return ProbeReport.model_validate(raw)
    except ValidationError as exc:
        return f"the probe's report is malformed: {exc.errors()[:2]}"
