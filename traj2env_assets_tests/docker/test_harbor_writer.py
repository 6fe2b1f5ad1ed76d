"""The Harbor task writer: layout, task.toml contents, Harbor's own validation and lint."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from harbor.models.task.config import TaskConfig
from pydantic import ValidationError

from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.harbor.task_toml import dumps_toml
from traj2env_assets.harbor.validation import harbor_problems
from traj2env_assets.harbor.writer import task_toml, write_task
from traj2env_assets_tests.docker.sample_tasks import node_task, python_task


@pytest.mark.parametrize("spec", [python_task(), node_task()], ids=["python", "node"])
def test_written_task_passes_harbor_validation_and_lint(spec: TaskSpec, tmp_path: Path) -> None:
    task = write_task(spec, tmp_path)
    assert harbor_problems(task.path) == []


def test_task_toml_records_provenance_separate_verifier_and_timeouts(tmp_path: Path) -> None:
    task = write_task(python_task(), tmp_path)
    text = (task.path / "task.toml").read_text()
    config = TaskConfig.model_validate_toml(text)
    raw = tomllib.loads(text)
    assert raw["schema_version"] == "1.4"
    assert raw["metadata"]["family"] == "repair"
    assert raw["metadata"]["source_trace"] == "sample-python-session"
    assert raw["metadata"]["source_model"] == "hand-made"
    assert raw["metadata"]["repo2env"] == {
        "pipeline": "traj2env",
        "recipe": "trajectory_replay",
        "reward_kinds": ["test_execution"],
        "reproducibility": {"mode": "inline_dockerfile"},
        "evaluation": {"label": "unverified"},
    }
    assert config.verifier.environment_mode == "separate"
    assert config.environment.network_mode.value == "no-network"
    assert config.verifier.network_mode.value == "no-network"
    assert (config.agent.timeout_sec, config.verifier.timeout_sec) == (120.0, 180.0)
    assert config.environment.build_timeout_sec == 300.0
    assert [str(a) for a in config.artifacts] == ["/workspace"]
    assert raw == tomllib.loads(task_toml(python_task()).to_toml())


def test_environment_holds_neither_tests_nor_solution(tmp_path: Path) -> None:
    task = write_task(python_task(), tmp_path)
    environment = sorted(
        p.relative_to(task.environment_dir).as_posix() for p in task.environment_dir.rglob("*") if p.is_file()
    )
    assert environment == [
        "Dockerfile",
        "workspace/calc.py",
        "workspace/pyproject.toml",
        "workspace/tests/test_calc.py",
    ]
    assert "return a - b" in (task.environment_dir / "workspace" / "calc.py").read_text()
    assert "return a + b" in (task.solution_dir / "files" / "calc.py").read_text()


def test_scripts_are_executable_with_shebang_and_lf(tmp_path: Path) -> None:
    task = write_task(node_task(), tmp_path)
    for script in (task.tests_dir / "test.sh", task.solution_dir / "solve.sh"):
        data = script.read_bytes()
        assert data.startswith(b"#!/bin/bash\n")
        assert b"\r" not in data
        assert script.stat().st_mode & 0o111


def test_dockerfile_puts_shared_layers_before_project_files(tmp_path: Path) -> None:
    spec = python_task().model_copy(update={"dependency_lines": ["RUN pip install --no-index nothing || true"]})
    lines = (write_task(spec, tmp_path).environment_dir / "Dockerfile").read_text().splitlines()
    assert lines[0] == "FROM python:3.13-slim"
    assert lines.index("RUN pip install --no-index nothing || true") < lines.index("COPY workspace/ /workspace/")


def test_harness_files_and_test_paths_are_restored_from_the_pristine_image() -> None:
    files = {
        **python_task().project_files,
        "tests/conftest.py": b"x = 1\n",
        "tests/data/cases.json": b"[]\n",
        "pkg/tests/__init__.py": b"",
        "test_top.py": b"",
        "pkg/core.py": b"",
        "setup.cfg": b"[metadata]\n",
    }
    spec = python_task().model_copy(update={"project_files": files})
    # Whole test folders (fixtures, data and package files with them), test files by name,
    # harness files wherever they are; solution code never.
    assert spec.pristine_paths() == ["pkg/tests", "pyproject.toml", "setup.cfg", "test_top.py", "tests"]


def test_a_solution_that_changes_restored_files_is_rejected() -> None:
    data = python_task().model_dump()
    data["solution_files"] = {**data["solution_files"], "tests/helpers.py": b"x = 2\n"}
    with pytest.raises(ValidationError, match="restores from the pristine image"):
        TaskSpec.model_validate(data)


@pytest.mark.parametrize("path", ["../escape.py", "/abs.py", "a/../b.py", "./a.py", ""])
def test_paths_outside_the_project_are_rejected(path: str) -> None:
    with pytest.raises(ValidationError):
        TaskSpec.model_validate({**python_task().model_dump(), "project_files": {path: b"x"}})


def test_pytest_config_must_be_a_restored_project_file() -> None:
    data = python_task().model_dump()
    data["tests"] = VerifierSpec(
        runner="pytest", tracked_test_ids=["tests/test_calc.py::test_add"], pytest_config="missing.ini"
    ).model_dump()
    with pytest.raises(ValidationError, match="pytest_config"):
        TaskSpec.model_validate(data)


def test_toml_emitter_round_trips_awkward_strings() -> None:
    document = {
        "plain": "a",
        "quotes": 'say "hi" \\ back',
        "lines": "one\ntwo\ttab",
        "unicode": "naïve ✓",
        "numbers": [1, 2.5],
        "flag": True,
        "table": {"key with space": "v", "nested": {"deep": ["x", "y"]}},
    }
    assert tomllib.loads(dumps_toml(document)) == document


def test_rewriting_a_task_replaces_it_whole(tmp_path: Path) -> None:
    first = write_task(python_task(), tmp_path)
    (first.path / "stray.txt").write_text("left over")
    second = write_task(python_task(), tmp_path)
    assert second.path == first.path
    assert not (second.path / "stray.txt").exists()
