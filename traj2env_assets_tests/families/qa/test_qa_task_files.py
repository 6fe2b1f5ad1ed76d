"""A qa task as written: Harbor accepts it; only the answer file crosses; build files carry their sha256."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from traj2env_assets.families.qa.controls import wrong_answer
from traj2env_assets.families.qa.pinning import PinnedInput
from traj2env_assets.families.qa.proposal import QaQuestion
from traj2env_assets.families.qa.task import qa_task_spec
from traj2env_assets.families.qa.wheels import Wheel, WheelSet
from traj2env_assets.harbor.task_spec import AnswerSpec, TaskSpec, VerifierSpec
from traj2env_assets.harbor.validation import harbor_problems
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.verification.verifier_files.grade_answer import grade


def _file(path: Path, content: bytes) -> tuple[Path, str]:
    path.write_bytes(content)
    return path, hashlib.sha256(content).hexdigest()


@pytest.fixture
def qa_spec(tmp_path: Path) -> TaskSpec:
    wheel, wheel_sum = _file(tmp_path / "pandas-3.1.1-cp313-cp313-manylinux_2_28_x86_64.whl", b"wheel")
    data, data_sum = _file(tmp_path / "blob", b"PAR1...PAR1")
    pinned = PinnedInput(
        repo_id="acme/weather",
        path="data/train.parquet",
        commit="a" * 40,
        commit_date="2026-02-20T15:30:00+00:00",
        sha256=data_sum,
        local_path=data,
    )
    question = QaQuestion(question="What is the mean of t?", answer="4.325", answer_kind="number")
    return qa_task_spec(
        "0123456789ab",
        question,
        "print('4.325')\n",
        [pinned],
        WheelSet(packages=["pandas==3.1.1"], wheels=[Wheel(path=wheel, sha256=wheel_sum)]),
        source_trace="key",
        source_model="m",
        org="local",
    )


def test_qa_task_passes_harbor_validation_and_lint(qa_spec: TaskSpec, tmp_path: Path) -> None:
    task = write_task(qa_spec, tmp_path / "dataset")
    assert harbor_problems(task.path) == []


def test_qa_task_layout(qa_spec: TaskSpec, tmp_path: Path) -> None:
    task = write_task(qa_spec, tmp_path / "dataset")
    environment = sorted(
        p.relative_to(task.environment_dir).as_posix() for p in task.environment_dir.rglob("*") if p.is_file()
    )
    assert environment == [
        "Dockerfile",
        "data/train.parquet",
        "wheels/pandas-3.1.1-cp313-cp313-manylinux_2_28_x86_64.whl",
    ]
    dockerfile = (task.environment_dir / "Dockerfile").read_text()
    for build_file in qa_spec.build_files:
        assert build_file.sha256 in dockerfile
    assert dockerfile.rstrip().endswith("WORKDIR /workdir")
    assert json.loads((task.tests_dir / "traj2env" / "answer.json").read_text()) == {
        "kind": "number",
        "answer": "4.325",
    }
    assert not (task.environment_dir / "workspace").exists()
    assert "answer.json" not in dockerfile and "4.325" not in dockerfile  # the gold never enters the image
    toml = (task.path / "task.toml").read_text()
    assert 'artifacts = ["/workdir/answer.txt"]' in toml
    solve = (task.solution_dir / "solve.sh").read_text()
    assert "files/reference.py" in solve and "/workdir/answer.txt" in solve


def test_a_task_has_tests_or_an_answer_never_both(qa_spec: TaskSpec) -> None:
    tests = VerifierSpec(runner="pytest", tracked_test_ids=["tests/test_a.py::test_a"])
    with pytest.raises(ValueError, match="exactly one"):
        TaskSpec.model_validate({**qa_spec.model_dump(), "tests": tests.model_dump()})
    with pytest.raises(ValueError, match="exactly one"):
        TaskSpec.model_validate({**qa_spec.model_dump(), "answer": None})
    assert qa_spec.answer == AnswerSpec(kind="number", gold="4.325")


@pytest.mark.parametrize(
    ("kind", "gold"),
    [
        ("number", "4.325"),
        ("number", "42"),
        ("number", "-0.5"),
        ("yes_no", "yes"),
        ("yes_no", "No"),
        ("label", "Cairo"),
        ("list", "Cairo, Lisbon"),
        ("list", "1.5, 2"),
    ],
)
def test_the_wrong_answer_control_is_of_the_gold_kind_and_wrong(kind: str, gold: str) -> None:
    wrong = wrong_answer(kind, gold)
    assert grade(kind, gold, wrong)[0] is False
    if kind == "number":
        assert grade("number", wrong, wrong)[0]  # still a finite decimal
