"""A repair task's verifier runs the whole recorded check: fixing the tracked tests while
breaking another test of the check scores 0 (real Docker engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.docker_engine.controls import AgentAction, Control
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.docker_engine.trial import TrialTask
from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.families.repair.task import repair_task_spec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets_tests.families.conftest import EXAMPLES, record_for

pytestmark = pytest.mark.docker


class SubmitFiles(Control):
    """A submission that writes the given files (absolute paths) and nothing else."""

    name = "submit_files"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def action(self, task_dir: Path) -> AgentAction:
        return AgentAction(files=self.files)


def test_fix_that_breaks_another_test_of_the_check_scores_zero(tmp_path: Path) -> None:
    record = record_for(EXAMPLES / "claude-code" / "python-pytest-fix.jsonl", tmp_path / "record")
    candidate = mine_repair_candidates(record, "verifier-test")[0].candidate
    spec = repair_task_spec(candidate, source_trace="verifier-test", source_model=None, org="local")
    assert (spec.tests.reward, spec.tests.run_targets) == ("check", ["."])
    task = write_task(spec, tmp_path / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=180)
    image = engine.build(task.environment_dir)
    trial_task = TrialTask(image=image.tag, task_dir=task.path)
    fixed = candidate.fixed_files["intervals.py"]
    regression = fixed.replace("return sum(end - start", "return 1 + sum(end - start")
    assert regression != fixed

    broken = engine.run_trial(trial_task, SubmitFiles({"/workspace/intervals.py": regression.encode()}))
    assert broken.reward == 0.0
    assert broken.verdict["reason"] == "check_failed"
    assert broken.verdict["failed"] == ["tests/test_intervals.py::test_covered_length_counts_overlap_once"]
    assert set(broken.verdict["tracked"].values()) == {"passed"}

    honest = engine.run_trial(trial_task, SubmitFiles({"/workspace/intervals.py": fixed.encode()}))
    assert honest.reward == 1.0
