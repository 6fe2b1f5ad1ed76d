"""Write one Harbor task directory from a :class:`TaskSpec`, atomically.

Layout (Harbor 0.25 and 0.26, separate verifier)::

    <dataset>/<task_id>/
      task.toml                 TaskToml: metadata + [metadata.repo2env], no-network, timeouts
      instruction.md
      environment/Dockerfile    FROM the base, deps, project files, pristine config copy
      environment/workspace/    the project as the agent starts (copied to /workspace)
      environment/<build files> qa: analysis wheels and pinned data (sha256 checked)
      environment/wheels/       the Python wheels the Dockerfile installs offline (if any)
      solution/solve.sh         restores solution/files/ over /workspace
      tests/test.sh             the verifier (see scripts.py)
      tests/traj2env/           harness: outcome recorder, verdict, tracked ids, restores,
                                the behaviour gate's worker, cases and expected answers;
                                qa: grade_answer.py and the gold answer.json

``environment/`` never holds tests or the solution. Usage::

    task = write_task(spec, dataset_dir)
    image = build_image(client, task.environment_dir)
"""

from __future__ import annotations

import json
import os
import shutil
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from traj2env_assets.atomic_files import atomic_directory
from traj2env_assets.gate.model import gate_files
from traj2env_assets.gate.runtime import WORKER, runtime_file
from traj2env_assets.harbor import scripts
from traj2env_assets.harbor.task_spec import (
    TESTS_FROM_SESSION_FINAL,
    BuildFile,
    TaskSpec,
    TestRunner,
)
from traj2env_assets.harbor.task_toml import (
    AgentSection,
    BehaviourGateMetadata,
    EnvironmentSection,
    PackageSection,
    TaskMetadata,
    TaskToml,
    VerifierSection,
)
from traj2env_assets.layout import TaskLayout
from traj2env_assets.quality.effort import difficulty

# The verifier's own scripts of each runner (from verification/verifier_files/), copied into
# the task's tests/traj2env/; not the project's harness files (conventions.*_HARNESS_FILES),
# which it restores. The first name also tells a written task's runner.
_VERIFIER_SCRIPTS: dict[TestRunner, tuple[str, ...]] = {
    "pytest": ("run_pytest.py", "verdict.py", "tamper_check.py"),
    "node": ("node_reporter.mjs", "node_guard.mjs", "verdict.mjs", "tamper_check.mjs"),
    "jest": ("jest_reporter.cjs", "verdict.mjs", "tamper_check.mjs"),
    "mocha": ("mocha_reporter.cjs", "verdict.mjs", "tamper_check.mjs"),
    "vitest": ("vitest_reporter.mjs", "vitest.config.cjs", "verdict.mjs", "tamper_check.mjs"),
    "lint": ("lint_verdict.py", "lint_tamper_check.py"),
}
ANSWER_GRADER = "grade_answer.py"


class WrittenTask(BaseModel):
    task_id: str
    path: Path

    @property
    def layout(self) -> TaskLayout:
        return TaskLayout(self.path)

    @property
    def environment_dir(self) -> Path:
        return self.layout.environment_dir

    @property
    def tests_dir(self) -> Path:
        return self.layout.tests_dir

    @property
    def solution_dir(self) -> Path:
        return self.layout.solution_dir


def _gate_metadata(spec: TaskSpec) -> BehaviourGateMetadata | None:
    tests = spec.tests
    gate = tests.behaviour_gate if tests else None
    if tests is None or gate is None:
        return None
    tracked = tests.tracked_test_ids
    return BehaviourGateMetadata(
        coverage=round(gate.coverage(tracked), 3),
        tracked_tests=len(tracked),
        covered_tests=sum(test in gate.covered_tests for test in tracked),
        cases=len(gate.cases),
        generalisation_cases=sum(case.kind == "generalisation" for case in gate.cases),
    )


def task_toml(spec: TaskSpec) -> TaskToml:
    return TaskToml(
        artifacts=[spec.submission_path],
        task=PackageSection(name=f"{spec.org}/{spec.task_id}"),
        metadata=TaskMetadata(
            family=spec.family,
            source_trace=spec.source_trace,
            source_model=spec.source_model,
            tags=[spec.family, spec.base_image, *spec.tags],
            behaviour_gate=_gate_metadata(spec),
            tests_from=TESTS_FROM_SESSION_FINAL if spec.tests_changed_by_fix else None,
            tests_changed_by_fix=spec.tests_changed_by_fix or None,
            existing_tests_left_out=spec.existing_tests_left_out or None,
            repository=spec.repository,
            project=spec.project,
            difficulty=difficulty(spec.session_effort) if spec.session_effort else "unknown",
            session_effort=spec.session_effort,
        ),
        agent=AgentSection(timeout_sec=float(spec.agent_timeout_sec)),
        verifier=VerifierSection(timeout_sec=float(spec.verifier_timeout_sec)),
        environment=EnvironmentSection(
            build_timeout_sec=float(spec.build_timeout_sec), memory_mb=spec.memory_mb, workdir=spec.workdir
        ),
    )


def write_task(spec: TaskSpec, dataset_dir: Path) -> WrittenTask:
    target = dataset_dir / spec.task_id
    with atomic_directory(target) as staging:
        layout = TaskLayout(staging)
        _write(layout.config_path, task_toml(spec).to_toml())
        _write(layout.instruction_path, spec.instruction.rstrip() + "\n")
        _write_environment(layout, spec)
        _write_solution(layout, spec)
        _write_tests(layout, spec)
    return WrittenTask(task_id=spec.task_id, path=target)


def _write_environment(layout: TaskLayout, spec: TaskSpec) -> None:
    environment = layout.environment_dir
    _write(layout.dockerfile_path, scripts.dockerfile(spec))
    for build_file in spec.build_files:
        _place(build_file, environment)
    if spec.answer is not None:
        return
    workspace = layout.shown_workspace_dir
    workspace.mkdir(parents=True)
    for relative, content in spec.project_files.items():
        _write(workspace / relative, content)
    for relative, source in spec.context_files.items():
        target = environment / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)  # wheels are immutable: share them with the wheelhouse
        except OSError:
            shutil.copyfile(source, target)
        target.chmod(0o644)


def _write_solution(layout: TaskLayout, spec: TaskSpec) -> None:
    _write(layout.solve_path, scripts.solve_sh(spec), executable=True)
    layout.solution_files_dir.mkdir(parents=True, exist_ok=True)
    for relative, content in spec.solution_files.items():
        _write(layout.solution_files_dir / relative, content)


def _write_tests(layout: TaskLayout, spec: TaskSpec) -> None:
    _write(layout.test_path, scripts.test_sh(spec), executable=True)
    harness = layout.harness_dir
    source = resources.files("traj2env_assets.verification") / "verifier_files"
    if spec.answer is not None:
        _write(harness / ANSWER_GRADER, (source / ANSWER_GRADER).read_bytes())
        gold = {"kind": spec.answer.kind, "answer": spec.answer.gold}
        _write(harness / scripts.GOLD_FILE, json.dumps(gold, ensure_ascii=False) + "\n")
        return
    assert spec.tests is not None  # a spec has tests or an answer
    _write(layout.tracked_ids_path, scripts.tracked_ids_file(spec))
    _write(layout.pristine_paths_path, scripts.pristine_paths_file(spec))
    if spec.tests.runner == "pytest":
        _write(layout.harness_file("pytest.ini"), "[pytest]\n")
        _write(layout.gate_ids_path, scripts.gate_ids_file(spec))
    for name in _VERIFIER_SCRIPTS[spec.tests.runner]:
        _write(harness / name, (source / name).read_bytes())
    for relative, content in spec.tests.test_files.items():
        _write(layout.restore_dir / relative, content)
    if spec.tests.behaviour_gate is not None:
        cases, expected = gate_files(spec.tests.behaviour_gate)
        _write(harness / scripts.GATE_CASES, cases.model_dump_json() + "\n")
        _write(harness / scripts.GATE_EXPECTED, expected.model_dump_json() + "\n")
        _write(harness / WORKER, runtime_file(WORKER))


def _place(build_file: BuildFile, environment: Path) -> None:
    """A hard link where the filesystem allows it (wheels and data files can be large and
    every qa task carries the same wheels), else a copy."""
    target = environment / build_file.context_path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(build_file.source, target)
    except OSError:
        shutil.copyfile(build_file.source, target)
    target.chmod(0o644)


def task_runner(task_dir: Path) -> TestRunner | None:
    """The test runner a written task's verifier uses, read off its harness files."""
    for runner, names in _VERIFIER_SCRIPTS.items():
        if TaskLayout(task_dir).harness_file(names[0]).is_file():
            return runner
    return None


def _write(path: Path, content: str | bytes, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(data)
    path.chmod(0o755 if executable else 0o644)
