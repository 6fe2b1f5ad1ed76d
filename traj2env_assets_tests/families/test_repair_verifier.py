"""A repair task's verifier runs the whole recorded check: fixing the tracked tests while
breaking another test of the check scores 0 (real Docker engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.families.repair.task import repair_task_spec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.verification.trial import TrialTask, run_trial
from traj2env_assets_tests.families.conftest import EXAMPLES, record_for
from traj2env_assets_tests.families.controls import SubmitFiles

pytestmark = pytest.mark.docker


def test_fix_that_breaks_another_test_of_the_check_scores_zero(tmp_path: Path) -> None:
    record = record_for(EXAMPLES / "claude-code" / "python-pytest-fix.jsonl", tmp_path / "record")
    candidate = mine_repair_candidates(record, "verifier-test")[0].candidate
    spec = repair_task_spec(candidate, source_trace="verifier-test", source_model=None, org="local")
    assert spec.tests is not None
    assert (spec.tests.reward, spec.tests.run_targets) == ("check", ["."])
    task = write_task(spec, tmp_path / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=180)
    image = engine.build(task.environment_dir)
    trial_task = TrialTask(image=image.tag, task_dir=task.path)
    fixed = candidate.fixed_files["intervals.py"]
    regression = fixed.replace("return sum(end - start", "return 1 + sum(end - start")
    assert regression != fixed

    broken = run_trial(
        engine,
        trial_task,
        SubmitFiles({"/workspace/intervals.py": regression.encode()}),
    )
    assert broken.reward == 0.0
    assert broken.verdict is not None
    assert broken.verdict["reason"] == "check_failed"
    assert broken.verdict["failed"] == ["tests/test_intervals.py::test_covered_length_counts_overlap_once"]
    assert set(broken.verdict["tracked"].values()) == {"passed"}

    honest = run_trial(engine, trial_task, SubmitFiles({"/workspace/intervals.py": fixed.encode()}))
    assert honest.reward == 1.0


def test_packages_the_submission_installs_in_the_project_never_reach_the_verifier(tmp_path: Path) -> None:
    # The project declares attrs and python-dateutil: the image installs them from the
    # wheelhouse. A submission whose fix lives in a virtualenv or site-packages folder of
    # its own scores 0: the verifier deletes those and uses the image's packages.
    record = record_for(EXAMPLES / "codex" / "python-deps-pytest-fix.jsonl", tmp_path / "record")
    candidate = mine_repair_candidates(record, "verifier-deps")[0].candidate
    spec = repair_task_spec(
        candidate, source_trace="verifier-deps", source_model=None, org="local", wheelhouse_dir=tmp_path / "wheelhouse"
    )
    assert any(path.startswith("wheels/attrs-") for path in spec.context_files)
    task = write_task(spec, tmp_path / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=180)
    image = engine.build(task.environment_dir)
    trial_task = TrialTask(image=image.tag, task_dir=task.path)
    buggy = candidate.project_files["events.py"]
    relying = buggy.replace("key=lambda event: event.starts)", "key=sortkeys.by_start_time)").replace(
        "import attrs\n",
        "import os\nimport sys\n\nimport attrs\n\n"
        "for _env in ('.venv/lib/python3.13/site-packages', 'site-packages'):\n"
        "    sys.path.insert(0, os.path.join(os.path.dirname(__file__), _env))\nimport sortkeys\n",
    )
    helper = b"def by_start_time(event):\n    return event.start_time\n"
    for where in ("/workspace/.venv/lib/python3.13/site-packages/sortkeys.py", "/workspace/site-packages/sortkeys.py"):
        files = {"/workspace/events.py": relying.encode(), where: helper}
        if where.startswith("/workspace/.venv/"):
            files["/workspace/.venv/pyvenv.cfg"] = b"home = /usr/bin\n"
        result = run_trial(engine, trial_task, SubmitFiles(files))
        assert result.reward == 0.0, where
        assert "ModuleNotFoundError: No module named 'sortkeys'" in result.test_output_tail, where
