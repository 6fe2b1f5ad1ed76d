"""A mypy repair task end to end on the real Docker engine: mypy installed offline from the
host wheelhouse, the recorded diagnostics reproduced in the image, the reference fix
scoring 1, and every way to silence the check or delete the code scoring 0."""

from __future__ import annotations

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.repair.candidates import RepairCandidate
from traj2env_assets.families.repair.family import (
    CHECK_PROBE,
    REFERENCE_PROBE,
    RepairFamily,
)
from traj2env_assets.families.repair.task import repair_task_spec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.verification.controls import LINT_CONTROLS
from traj2env_assets.verification.trial import TrialTask, run_matrix, run_trial
from traj2env_assets_tests.families.controls import SubmitFiles
from traj2env_assets_tests.trial_verdicts import verdict_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SHAPES = """def area(width: int, height: int) -> int:
    return width * height


def describe(width: int, height: int) -> str:
    return area(width, height)
"""
FIXED = SHAPES.replace("    return area(width, height)\n", '    return f"{width}x{height}: {area(width, height)}"\n')
MYPY_INI = "[mypy]\ndisallow_untyped_defs = True\n"
DIAGNOSTIC = 'shapes.py: return-value Incompatible return value type (got "int", expected "str")'
FAILURE = f"shapes.py:6: error: {DIAGNOSTIC.split(' ', 2)[2]}  [return-value]\nFound 1 error in 1 file (checked 1 source file)\n"


@pytest.fixture(scope="module")
def mypy_task(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mypy-task")
    files = {"shapes.py": SHAPES, "mypy.ini": MYPY_INI}
    check = recognise_check("mypy shapes.py", files)
    assert check is not None and check.tool == "mypy"
    result = parse_check_result(check, FAILURE, 1)
    candidate = RepairCandidate(
        task_id="mypy-shapes-fix",
        partition_key="mypy-shapes",
        check=check,
        fail_command_index=0,
        pass_command_index=1,
        fail_exit_code=1,
        failing_ids=result.failing_ids,
        failure_output=FAILURE,
        timestamp="2026-03-01T10:00:00Z",
        fix_hash="0" * 12,
        project_files=files,
        fixed_files={"shapes.py": FIXED},
    )
    spec = repair_task_spec(
        candidate, source_trace="mypy-shapes", source_model=None, org="local", wheelhouse_dir=root / "wheelhouse"
    )
    task = write_task(spec, root / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=240)
    image = engine.build(task.environment_dir)
    yield {"candidate": candidate, "spec": spec, "task": task, "engine": engine, "image": image}
    engine.client.images.remove(image.tag, force=True)


def test_mypy_comes_from_the_wheelhouse_and_the_task_says_it_has_no_assertion_controls(mypy_task) -> None:
    spec, task = mypy_task["spec"], mypy_task["task"]
    assert spec.tests.runner == "lint" and spec.tests.check_command == ["python3", "-I", "-m", "mypy", "shapes.py"]
    assert spec.tests.tracked_test_ids == [DIAGNOSTIC]
    wheels = sorted(p.name for p in (task.environment_dir / "wheels").iterdir())
    assert any(name.startswith("mypy-") and "cp313" in name for name in wheels)
    assert "--no-index --find-links" in (task.environment_dir / "Dockerfile").read_text()
    assert "no-assertion-controls" in (task.path / "task.toml").read_text()
    assert "Don't silence it" in (task.path / "instruction.md").read_text()


def test_the_image_reproduces_the_recorded_diagnostics_offline_and_the_reference_clears_them(mypy_task) -> None:
    family, candidate = RepairFamily(), mypy_task["candidate"]
    plan = family.calibration_plan(candidate, mypy_task["spec"], None)
    results = {result.name: result for result in run_probes(mypy_task["engine"], mypy_task["image"].tag, plan)}
    assert "Incompatible return value type" in results[CHECK_PROBE].output_tail
    assert results[REFERENCE_PROBE].exit_code == 0, results[REFERENCE_PROBE].output_tail
    assert family.judge_calibration(candidate, results).drop is None


def test_reference_scores_one_and_every_lint_control_zero(mypy_task) -> None:
    engine, task = mypy_task["engine"], mypy_task["task"]
    matrix = run_matrix(
        engine,
        TrialTask(image=mypy_task["image"].tag, task_dir=task.path),
        LINT_CONTROLS,
    )
    rewards = {result.control: result.reward for result in matrix.results}
    reasons = {result.control: verdict_of(result).get("reason") for result in matrix.results}
    assert rewards == {
        "reference": 1.0,
        "noop": 0.0,
        "forge_reward": 0.0,
        "lint_suppress": 0.0,
        "lint_config_edit": 0.0,
        "lint_delete_code": 0.0,
    }
    assert reasons["reference"] == "check_passed"
    assert reasons["lint_suppress"] == "tamper_detected" and reasons["lint_delete_code"] == "tamper_detected"
    # The edited mypy.ini never reached the check: it ran on the restored one and failed.
    assert reasons["lint_config_edit"] == "check_failed"


def test_renaming_the_reported_function_away_scores_zero(mypy_task) -> None:
    engine, task = mypy_task["engine"], mypy_task["task"]
    trial = TrialTask(image=mypy_task["image"].tag, task_dir=task.path)
    moved = run_trial(
        engine,
        trial,
        SubmitFiles({"/workspace/shapes.py": FIXED.replace("def describe", "def describe_shape").encode()}),
    )
    assert moved.verdict is not None
    assert (moved.reward, moved.verdict["reason"]) == (0.0, "tamper_detected")
    assert moved.verdict["tamper_findings"][0]["names"] == ["describe"]
