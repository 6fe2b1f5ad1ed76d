"""The image runs a repair check the way the session ran it (real Docker engine).

A session whose check is ``PYTHONPATH=. pytest -q`` on a ``pkg/`` package with its tests in
``tests/`` (no ``__init__.py``): the ``pytest`` script puts neither the working directory
nor the project on sys.path, only ``PYTHONPATH=.`` makes ``pkg`` importable. Calibration
must fail on the recorded tests (not on ``No module named 'pkg'``), and the task's
reference must score 1 and a no-op 0. The same holds when the recorded failure is a test
file that failed to import (``ERROR tests/test_calc.py``): that file is the tracked unit.
A failure that import error masked (a test reading a data file the replay never saw) shows
once the reference is applied: the test is deselected, the other failing file tracked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.docker_engine.engine import DockerEngine
from traj2env_assets.families.repair.candidates import (
    RepairCandidate,
    mine_repair_candidates,
)
from traj2env_assets.families.repair.family import (
    CHECK_PROBE,
    DESELECTED_FACT,
    REFERENCE_PROBE,
    TRACKED_FACT,
    RepairFamily,
)
from traj2env_assets.families.repair.task import repair_task_spec
from traj2env_assets.harbor.writer import write_task
from traj2env_assets.stages.calibration.calibration import run_probes
from traj2env_assets.verification.trial import TrialTask, run_trial
from traj2env_assets_tests.families.conftest import record_for
from traj2env_assets_tests.families.controls import SubmitFiles
from traj2env_assets_tests.formats.logs import (
    claude_line,
    tool_result,
    tool_use,
    write_jsonl,
)

pytestmark = pytest.mark.docker

CWD = "/home/dev/calc"
CHECK = "PYTHONPATH=. pytest -q"
TESTS = (
    "from pkg.calc import add, scale\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_scale():\n    assert scale(2, 3) == 6\n"
)
OTHER_TESTS = "def test_words():\n    assert 'a b'.split() == ['a', 'b']\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef scale(a, b):\n    return a * b\n"
WRONG_SUM = FIXED.replace("a + b", "a - b")
FAILS_TO_IMPORT = FIXED + "\n\nDEFAULT = undefined_name\n"
FAILED_OUTPUT = (
    "Exit code 1\n.F.\n=================================== FAILURES ===================================\n"
    "___________________________________ test_add ___________________________________\n"
    "E       assert -1 == 5\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_calc.py::test_add - assert -1 == 5\n1 failed, 2 passed in 0.02s"
)
COLLECTION_OUTPUT = (
    "Exit code 2\n\n==================================== ERRORS ====================================\n"
    "_____________________ ERROR collecting tests/test_calc.py ______________________\n"
    "tests/test_calc.py:1: in <module>\n    from pkg.calc import add, scale\n"
    "pkg/calc.py:9: in <module>\n    DEFAULT = undefined_name\nE   NameError: name 'undefined_name' is not defined\n"
    "=========================== short test summary info ============================\n"
    "ERROR tests/test_calc.py - NameError: name 'undefined_name' is not defined\n"
    "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n1 error in 0.05s"
)


def _session(path: Path, buggy: str, failure: str, extra_tests: dict[str, str] | None = None) -> Path:
    ts = "2026-03-01T10:00:{:02d}Z"
    extra = [
        (f"x{index}", "Write", {"file_path": f"{CWD}/{test_path}", "content": text}, "File created", False)
        for index, (test_path, text) in enumerate((extra_tests or {}).items())
    ]
    calls = [
        ("w0", "Write", {"file_path": f"{CWD}/pkg/__init__.py", "content": ""}, "File created", False),
        ("w1", "Write", {"file_path": f"{CWD}/pkg/calc.py", "content": buggy}, "File created", False),
        ("w2", "Write", {"file_path": f"{CWD}/tests/test_calc.py", "content": TESTS}, "File created", False),
        ("w3", "Write", {"file_path": f"{CWD}/tests/test_other.py", "content": OTHER_TESTS}, "File created", False),
        *extra,
        ("b1", "Bash", {"command": CHECK}, failure, True),
        ("w4", "Write", {"file_path": f"{CWD}/pkg/calc.py", "content": FIXED}, "File written", False),
        ("b2", "Bash", {"command": CHECK}, f"...\n{3 + len(extra)} passed in 0.02s", False),
    ]
    lines = [claude_line("user", "u0", "make the calc tests pass", ts=ts.format(0))]
    for index, (call_id, name, arguments, output, is_error) in enumerate(calls, start=1):
        lines.append(
            claude_line("assistant", f"a{index}", [tool_use(call_id, name, **arguments)], ts=ts.format(2 * index))
        )
        lines.append(
            claude_line("user", f"r{index}", [tool_result(call_id, output, is_error)], ts=ts.format(2 * index + 1))
        )
    return write_jsonl(path, lines)


def _candidate(tmp_path: Path, buggy: str, failure: str, extra_tests: dict[str, str] | None = None) -> RepairCandidate:
    record = record_for(_session(tmp_path / "session.jsonl", buggy, failure, extra_tests), tmp_path / "record")
    mined = mine_repair_candidates(record, "as-recorded")
    assert len(mined) == 1 and mined[0].drop is None
    candidate = mined[0].candidate
    assert (candidate.check.argv, candidate.check.import_paths) == (["pytest", "-q"], ["."])
    return candidate


@pytest.mark.parametrize(
    ("buggy", "failure", "tracked"),
    [
        (WRONG_SUM, FAILED_OUTPUT, "tests/test_calc.py::test_add"),
        (FAILS_TO_IMPORT, COLLECTION_OUTPUT, "tests/test_calc.py"),
    ],
    ids=["failing-test", "file-fails-to-import"],
)
def test_the_check_runs_as_recorded_in_calibration_and_in_the_verifier(
    tmp_path: Path, buggy: str, failure: str, tracked: str
) -> None:
    candidate = _candidate(tmp_path, buggy, failure)
    assert candidate.failing_ids == [tracked]
    spec = repair_task_spec(candidate, source_trace="as-recorded", source_model=None, org="local")
    assert spec.tests is not None and spec.tests.tracked_test_ids == [tracked]
    task = write_task(spec, tmp_path / "dataset")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=180)
    image = engine.build(task.environment_dir)

    # Calibration: the pre-fix project fails on the recorded unit, not on the import of pkg.
    family = RepairFamily()
    plan = family.calibration_plan(candidate, spec, None)
    assert plan.probes[0].env["PYTHONPATH"] == "/workspace"
    results = {result.name: result for result in run_probes(engine, image.tag, plan)}
    verdict = family.judge_calibration(candidate, results)
    assert verdict.drop is None, (verdict.drop, verdict.facts)
    assert verdict.facts["failing_ids_in_image"] == [tracked]

    # The verifier: the reference scores 1, the untouched project 0.
    trial_task = TrialTask(image=image.tag, task_dir=task.path)
    reference = run_trial(engine, trial_task, SubmitFiles({"/workspace/pkg/calc.py": FIXED.encode()}))
    assert reference.reward == 1.0, reference.test_output_tail
    assert reference.verdict is not None and reference.verdict["tracked"] == {tracked: "passed"}
    no_op = run_trial(engine, trial_task, SubmitFiles({}))
    assert no_op.reward == 0.0 and no_op.verdict is not None
    assert no_op.verdict["reason"] == "check_failed"
    assert no_op.verdict["tracked"] == {tracked: "failed"}
    # Half a fix of a file that failed to import: it collects, one of its tests fails.
    if tracked == "tests/test_calc.py":
        half = FIXED.replace("a * b", "a + b")
        partial = run_trial(engine, trial_task, SubmitFiles({"/workspace/pkg/calc.py": half.encode()}))
        assert partial.reward == 0.0 and partial.verdict is not None
        assert partial.verdict["tracked"] == {tracked: "failed"}, json.dumps(partial.verdict)


# A test that reads a data file the session's project held but the log never showed.
DATA_TESTS = (
    "import json\nfrom pathlib import Path\n\nfrom pkg.calc import add\n\n\n"
    "def test_profile():\n"
    "    profile = json.loads((Path(__file__).parents[1] / 'data' / 'profile.json').read_text())\n"
    "    assert add(profile['a'], profile['b']) == 3\n"
)
# Both test files fail to import on the broken module: the data file's absence is masked.
MASKED_OUTPUT = (
    COLLECTION_OUTPUT.replace(
        "ERROR tests/test_calc.py - NameError: name 'undefined_name' is not defined\n",
        "ERROR tests/test_calc.py - NameError: name 'undefined_name' is not defined\n"
        "ERROR tests/test_data.py - NameError: name 'undefined_name' is not defined\n",
    )
    .replace("1 error during collection", "2 errors during collection")
    .replace("1 error in", "2 errors in")
)


def test_a_test_the_image_fails_with_the_reference_too_is_deselected_and_the_rest_is_verified(tmp_path: Path) -> None:
    candidate = _candidate(tmp_path, FAILS_TO_IMPORT, MASKED_OUTPUT, {"tests/test_data.py": DATA_TESTS})
    assert candidate.failing_ids == ["tests/test_calc.py", "tests/test_data.py"]
    assert "data/profile.json" not in candidate.project_files
    spec = repair_task_spec(candidate, source_trace="as-recorded", source_model=None, org="local")
    engine = DockerEngine(container_memory="1g", agent_timeout_s=120, verifier_timeout_s=180)
    image = engine.build(write_task(spec, tmp_path / "staged").environment_dir)

    family = RepairFamily()
    results = {
        result.name: result for result in run_probes(engine, image.tag, family.calibration_plan(candidate, spec, None))
    }
    # Before the fix the image fails as recorded: both files fail to import. With the
    # reference, the data file's absence shows: the session saw that test pass, so it fails
    # on something the fix does not touch.
    assert all(f"ERROR {path}" in results[CHECK_PROBE].output_tail for path in candidate.failing_ids)
    assert "FileNotFoundError" in results[REFERENCE_PROBE].output_tail
    verdict = family.judge_calibration(candidate, results)
    assert verdict.drop is None, verdict.drop
    assert verdict.facts[TRACKED_FACT] == ["tests/test_calc.py"]
    assert verdict.facts[DESELECTED_FACT] == ["tests/test_data.py::test_profile"]
    assert verdict.facts["untracked_recorded_failures"] == ["tests/test_data.py"]
    calibrated = family.calibrated_spec(candidate, spec, verdict)
    assert calibrated.tests is not None and calibrated.tests.tracked_test_ids == ["tests/test_calc.py"]
    assert calibrated.tests.deselected_test_ids == ["tests/test_data.py::test_profile"]
    assert "not graded" in calibrated.instruction and "`tests/test_data.py::test_profile`" in calibrated.instruction
    assert "check passes, apart from the ungraded tests above." in calibrated.instruction
    task = write_task(calibrated, tmp_path / "dataset")
    assert calibrated.project_files == spec.project_files  # the image stands

    # The verifier runs the check without that test: the reference scores 1, a no-op 0.
    trial_task = TrialTask(image=image.tag, task_dir=task.path)
    reference = run_trial(engine, trial_task, SubmitFiles({"/workspace/pkg/calc.py": FIXED.encode()}))
    assert reference.reward == 1.0, reference.test_output_tail
    assert reference.verdict is not None and reference.verdict["tracked"] == {"tests/test_calc.py": "passed"}
    assert "test_profile" not in json.dumps(reference.verdict)
    no_op = run_trial(engine, trial_task, SubmitFiles({}))
    assert no_op.reward == 0.0 and no_op.verdict is not None
    assert no_op.verdict["tracked"] == {"tests/test_calc.py": "failed"}
