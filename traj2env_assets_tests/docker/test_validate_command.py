"""``traj2env validate --oracle PATH`` runs Harbor's oracle and nop agents through
``harbor run`` and exits 0 only when every task scores oracle 1.0 / nop 0.0."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.cli import main
from traj2env_assets.harbor.writer import write_task
from traj2env_assets_tests.docker.sample_tasks import python_task

pytestmark = pytest.mark.docker


def test_validate_prints_each_tasks_rewards_and_fails_on_a_task_whose_oracle_does_not_solve_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "dataset"
    write_task(python_task("calc-sound", marker="sound"), dataset)
    unsolved = python_task("calc-unsolved", marker="unsolved")
    # The reference leaves add() broken: the oracle scores what nop scores.
    write_task(unsolved.model_copy(update={"solution_files": {"calc.py": unsolved.project_files["calc.py"]}}), dataset)

    code = main(["validate", "--oracle", str(dataset), "--jobs-dir", str(tmp_path / "jobs"), "-n", "2"])

    out = " ".join(capsys.readouterr().out.split())
    assert code == 1
    assert "calc-sound │ 1.00 │ 0.00 │ pass" in out, out
    assert "calc-unsolved │ 0.00 │ 0.00 │ FAIL" in out, out
    assert "1 of 2 tasks passed" in out
    assert list((tmp_path / "jobs").glob("validate-*/oracle")), "Harbor's jobs are kept where the user said"


def test_validate_without_tasks_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["validate", "--oracle", str(tmp_path / "empty"), "--jobs-dir", str(tmp_path / "jobs")]) == 2
    assert "holds no task directory" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "jobs").exists()
