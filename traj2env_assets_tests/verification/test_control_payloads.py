"""The files of ``verification/control_payloads/``: each one reaches the agent container
through some control, and each Python one compiles (under the oldest Python a task image
runs, as ruff's target for them says)."""

from __future__ import annotations

import ast
import string
import subprocess
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import pytest

from traj2env_assets.harbor.task_spec import TaskSpec, VerifierSpec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.verification.controls import BUILD_CONTROLS, DEFAULT_CONTROLS
from traj2env_assets_tests.docker.sample_tasks import node_task, python_task

PAYLOADS = sorted(
    (resources.files("traj2env_assets.verification") / "control_payloads").iterdir(), key=lambda entry: entry.name
)


def _lint_task() -> TaskSpec:
    return python_task("calc-lint").model_copy(
        update={
            "tests": VerifierSpec(
                runner="lint",
                tracked_test_ids=["calc.py: F821 Undefined name `b`"],
                check_command=["python3", "-I", "-m", "ruff", "check", "."],
            )
        }
    )


@pytest.fixture(scope="module")
def sent_texts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Every script and file text the standing controls send, on a pytest, a node and a lint task."""
    root = tmp_path_factory.mktemp("tasks")
    texts: list[str] = []
    for spec in (python_task(), node_task(), _lint_task()):
        task_dir = write_task(spec, root).path
        for control in (*DEFAULT_CONTROLS, *BUILD_CONTROLS):
            if control.applies_to(task_dir):
                action = control.action(task_dir)
                texts.append(action.script)
                texts.extend(data.decode("utf-8", "replace") for data in action.files.values())
    return texts


def _literal_parts(payload: Traversable) -> list[str]:
    """What of a payload must reach the container as written: all of it, or for a
    ``str.format`` template (``*.template.*``) the text around its fields."""
    text = payload.read_text(encoding="utf-8")
    if ".template." not in payload.name:
        return [text]
    return [literal for literal, *_ in string.Formatter().parse(text) if literal]


def test_there_are_payloads() -> None:
    assert {Path(entry.name).suffix for entry in PAYLOADS} == {".py", ".js", ".cjs", ".sh"}


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda entry: entry.name)
def test_every_payload_reaches_the_container_through_a_control(payload: Traversable, sent_texts: list[str]) -> None:
    parts = _literal_parts(payload)
    assert parts
    for part in parts:
        assert any(part in text for text in sent_texts), f"{payload.name} is sent by no control"


@pytest.mark.parametrize(
    "payload", [entry for entry in PAYLOADS if entry.name.endswith(".py")], ids=lambda entry: entry.name
)
def test_every_python_payload_compiles(payload: Traversable) -> None:
    source = payload.read_text(encoding="utf-8")
    ast.parse(source, payload.name, feature_version=(3, 11))
    compile(source, payload.name, "exec")


@pytest.mark.parametrize(
    "payload", [entry for entry in PAYLOADS if entry.name.endswith((".js", ".cjs"))], ids=lambda entry: entry.name
)
def test_every_javascript_payload_parses(payload: Traversable, tmp_path: Path) -> None:
    """``node --check`` (the host's Node, as the tamper-check tests use): a payload with a
    syntax error would make its control score 0 for the wrong reason."""
    script = tmp_path / payload.name
    script.write_bytes(payload.read_bytes())
    checked = subprocess.run(["node", "--check", str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
