"""Extend's strength floor and environment in the real Docker engine, on a project of our
own making: a request adding one method, checked by one test, to a project that imports a
declared dependency (``attrs``, installed offline from the host wheelhouse; resolving it
reaches PyPI from the host, the build does not). One strong test is a task whose whole trial
matrix passes; a conftest that does not load on the base is ``existing_tests_fail``; an
existing test reading a file the project lacks fails before and after the request, so it
leaves the regression set and the task still stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.contract import TaskSource
from traj2env_assets.families.extend.candidates import ExtendCandidate
from traj2env_assets.families.extend.family import ExtendFamily
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.verification.trial import TrialTask, run_matrix

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SHAPES = (
    "import attrs\n\n\n@attrs.define\nclass Box:\n    w: float\n    h: float\n\n"
    "    def area(self) -> float:\n        return self.w * self.h\n"
)
PERIMETER = (
    "\n    def perimeter(self) -> float:\n        if self.w < 0 or self.h < 0:\n"
    '            raise ValueError("negative side")\n        return 2 * (self.w + self.h)\n'
)
EXISTING = "from shapes import Box\n\n\ndef test_area():\n    assert Box(2, 3).area() == 6\n"
# One test, but it pins every way the new method could go wrong.
NEW = (
    "import pytest\n\nfrom shapes import Box\n\n\ndef test_perimeter():\n"
    "    assert Box(2, 3).perimeter() == 10\n    assert Box(0, 0).perimeter() == 0\n"
    "    with pytest.raises(ValueError, match='^negative side$'):\n        Box(-1, 2).perimeter()\n"
    "    with pytest.raises(ValueError):\n        Box(2, -1).perimeter()\n"
)


def _candidate(**changes: object) -> ExtendCandidate:
    fields: dict[str, object] = {
        "task_id": "boxes-extend-2",
        "partition_key": "boxes",
        "request_number": 2,
        "request": "Add a perimeter() method to Box that rejects negative sides with ValueError('negative side').",
        "timestamp": "2025-06-01T12:00:00Z",
        "base_files": {"requirements.txt": "attrs\n", "shapes.py": SHAPES, "tests/test_shapes.py": EXISTING},
        "changed_files": {"shapes.py": SHAPES + PERIMETER, "tests/test_perimeter.py": NEW},
        "recorded_new_tests": ["tests/test_perimeter.py::test_perimeter"],
        "recorded_existing_tests": ["tests/test_shapes.py::test_area"],
    }
    return ExtendCandidate.model_validate(fields | changes)


def _calibrate(engine: DockerEngine, candidate: ExtendCandidate, tmp_path: Path):
    family = ExtendFamily()
    source = TaskSource(
        partition_key="boxes", source_model=None, org="traj2env", wheelhouse_dir=str(tmp_path / "wheels")
    )
    spec = family.task_spec(candidate, None, source)
    written = write_task(spec, tmp_path / "tasks")
    image = engine.build(written.environment_dir)
    results = {
        result.name: result for result in run_probes(engine, image.tag, family.calibration_plan(candidate, spec, None))
    }
    return family.judge_calibration(candidate, results), spec, written.path, image.tag


def test_one_strong_test_with_a_declared_dependency_makes_a_task_no_shortcut_passes(
    engine: DockerEngine, tmp_path: Path
) -> None:
    family = ExtendFamily()
    candidate = _candidate()
    verdict, spec, task_dir, tag = _calibrate(engine, candidate, tmp_path)

    assert any(name.startswith("wheels/attrs-") for name in spec.context_files)
    assert verdict.drop is None, verdict.drop
    assert (verdict.facts["new_tests"], verdict.facts["discriminating_tests"]) == (1, 1)
    assert verdict.facts["mutants"] >= 5 and verdict.facts["kill_rate"] >= 0.8

    matrix = run_matrix(
        engine,
        TrialTask(image=tag, task_dir=task_dir),
        family.controls(candidate),
        parallelism=2,
    )
    rewards = matrix.rewards()
    assert rewards.pop("reference") == 1.0
    assert set(rewards) >= {"noop", "base_only", "reference_with_forgery", "report_forgery", "tests_edit"}
    assert set(rewards.values()) == {0.0}, rewards


def test_a_conftest_that_does_not_load_on_the_base_is_existing_tests_fail(engine: DockerEngine, tmp_path: Path) -> None:
    # The request adds boxes_fixtures.py and a conftest importing it: on the base the
    # conftest cannot load, so no test (existing ones included) runs there.
    base = _candidate()
    candidate = _candidate(
        changed_files=base.changed_files
        | {
            "boxes_fixtures.py": "UNIT = 1\n",
            "conftest.py": "import boxes_fixtures  # noqa: F401\n",
        }
    )
    verdict, *_ = _calibrate(engine, candidate, tmp_path)

    assert verdict.drop is not None and verdict.drop.reason == "existing_tests_fail", verdict.drop
    assert "boxes_fixtures" in verdict.drop.detail


def test_an_existing_test_failing_before_and_after_the_request_is_left_out_and_the_task_stands(
    engine: DockerEngine, tmp_path: Path
) -> None:
    # The base's test reads an example file the session only ever touched through a shell
    # pipeline, so the replay never saw it: it fails in the image with or without the request.
    example = "import json\nfrom pathlib import Path\n\n\ndef test_example_box():\n    json.loads(Path('examples/box.json').read_text())\n"
    base = _candidate()
    candidate = _candidate(
        base_files=base.base_files | {"tests/test_examples.py": example},
        recorded_existing_tests=["tests/test_examples.py::test_example_box", "tests/test_shapes.py::test_area"],
    )
    verdict, spec, _, tag = _calibrate(engine, candidate, tmp_path)

    assert verdict.drop is None, verdict.drop
    assert verdict.facts["existing_tests_left_out"] == ["tests/test_examples.py::test_example_box"]
    family = ExtendFamily()
    calibrated = family.calibrated_spec(candidate, spec, verdict)
    assert calibrated.tests is not None and calibrated.tests.gate_test_ids == ["tests/test_shapes.py::test_area"]
    written = write_task(calibrated, tmp_path / "calibrated")
    matrix = run_matrix(
        engine,
        TrialTask(image=tag, task_dir=written.path),
        family.controls(candidate),
        parallelism=2,
    )
    rewards = matrix.rewards()
    assert rewards.pop("reference") == 1.0
    assert set(rewards.values()) == {0.0}, rewards
