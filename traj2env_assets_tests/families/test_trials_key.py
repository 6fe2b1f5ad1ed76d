"""The trial matrix key: a task's identity (name, provenance) never changes it, so one
session logged in several formats runs one matrix; anything a trial reads does."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.trials.trials import trials_key
from traj2env_assets.verification.controls import DEFAULT_CONTROLS, AgentAction, Control
from traj2env_assets_tests.docker.sample_tasks import python_task

IMAGE = "traj2env-task:abc"


def _key(tmp_path: Path, name: str, **changes: object) -> str:
    spec = python_task().model_copy(update=changes)
    task_dir = write_task(spec, tmp_path / name).path
    return trials_key(IMAGE, task_dir, list(DEFAULT_CONTROLS))


def test_tasks_that_differ_only_in_identity_share_a_key(tmp_path: Path) -> None:
    first = _key(tmp_path, "a")
    renamed = _key(tmp_path, "b", task_id="calc-fix-codex", source_trace="codex-session", source_model="gpt-5")
    assert renamed == first


def test_what_a_trial_reads_changes_the_key(tmp_path: Path) -> None:
    first = _key(tmp_path, "a")
    spec = python_task()
    assert spec.tests is not None
    assert _key(tmp_path, "tests", tests=spec.tests.model_copy(update={"timeout_sec": 60})) != first
    assert _key(tmp_path, "solution", solution_files={"calc.py": b"def add(a, b):\n    return b + a\n"}) != first
    assert _key(tmp_path, "verifier", verifier_timeout_sec=99) != first
    task_dir = write_task(spec, tmp_path / "image").path
    assert trials_key("traj2env-task:other", task_dir, list(DEFAULT_CONTROLS)) != first
    assert trials_key(IMAGE, task_dir, list(DEFAULT_CONTROLS)[:-1]) != first


class _BytesControl(Control):
    name = "bytes_answer"

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files={"/tmp/answer": self.payload})


def test_a_control_writing_bytes_that_are_not_utf8_has_a_key_of_its_own(tmp_path: Path) -> None:
    task_dir = write_task(python_task(), tmp_path / "a").path
    utf16 = trials_key(IMAGE, task_dir, [_BytesControl("42\n".encode("utf-16"))])
    assert utf16 == trials_key(IMAGE, task_dir, [_BytesControl("42\n".encode("utf-16"))])
    assert utf16 != trials_key(IMAGE, task_dir, [_BytesControl("42\n".encode("utf-16-le"))])
