"""A fix that edits the code and the tests: the task takes the session's final tests
(SWE-bench style), its reference is the code change alone, calibration tracks the tests
that fail on the old code with the final tests. Mining decisions, the task's files and
calibration's judgement, with the check run by the real pytest on the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from harbor.models.task.config import TaskConfig

from traj2env_assets.families.contract import CalibrationVerdict, Probe, ProbeResult
from traj2env_assets.families.repair.candidates import (
    MinedRepair,
    RepairCandidate,
    mine_repair_candidates,
)
from traj2env_assets.families.repair.family import (
    CHECK_PROBE,
    REFERENCE_PROBE,
    RepairFamily,
)
from traj2env_assets.families.repair.task import repair_task_spec, verifier_test_ids
from traj2env_assets.harbor.task_spec import WORKSPACE
from traj2env_assets.harbor.writer import write_task
from traj2env_assets_tests.families import final_tests_session as session
from traj2env_assets_tests.families.conftest import record_for
from traj2env_assets_tests.formats.logs import claude_line, tool_result, tool_use

FAMILY = RepairFamily()


def _mined(tmp_path: Path, drop_step: str | None = None, extra: tuple[tuple[str, str], ...] = ()) -> MinedRepair:
    """The session's one candidate; ``drop_step`` removes the agent's edit of that file,
    ``extra`` adds ``(path, content)`` writes between the runs."""
    log = session.write_final_tests_session(tmp_path / "s.jsonl")
    lines = log.read_text().splitlines()
    if drop_step is not None:
        lines = [
            line for line in lines if f'"uuid": "a{drop_step}"' not in line and f'"uuid": "r{drop_step}"' not in line
        ]
    if extra:
        added = []
        for number, (path, content) in enumerate(extra):
            call = f"extra{number}"
            added.append(
                json.dumps(
                    claude_line(
                        "assistant",
                        f"x{number}",
                        [tool_use(call, "Write", file_path=f"{session.ROOT}/{path}", content=content)],
                        ts="2026-03-02T09:00:13Z",
                        cwd=session.ROOT,
                    )
                )
            )
            added.append(
                json.dumps(
                    claude_line(
                        "user",
                        f"y{number}",
                        [tool_result(call, "File created successfully")],
                        ts="2026-03-02T09:00:13Z",
                        cwd=session.ROOT,
                    )
                )
            )
        position = next(i for i, line in enumerate(lines) if '"uuid": "a7"' in line)
        lines[position:position] = added
    log.write_text("\n".join(lines) + "\n")
    [mined] = mine_repair_candidates(record_for(log, tmp_path / "record"), "claude-code-final")
    return mined


def test_a_fix_of_code_and_tests_is_kept_with_the_final_tests_and_the_code_as_reference(tmp_path: Path) -> None:
    mined = _mined(tmp_path)
    assert mined.drop is None
    candidate = mined.candidate
    assert candidate.test_paths == [session.TESTS]
    assert candidate.solution_files == {session.MODULE: session.NEW_MODULE}
    # The agent starts from the old code with the final tests.
    assert candidate.start_files[session.MODULE] == session.OLD_MODULE
    assert candidate.start_files[session.TESTS] == session.NEW_TESTS
    assert mined.facts["tests_from"] == "session_final"
    assert mined.facts["tests_changed_by_fix"] == [session.TESTS]


def test_a_fix_of_the_tests_alone_is_dropped(tmp_path: Path) -> None:
    mined = _mined(tmp_path, drop_step="5")  # the Edit of pkg/mod.py
    assert mined.drop is not None and mined.drop.reason == "fix_changes_only_tests"
    assert session.TESTS in mined.drop.detail


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("tests/conftest.py", "collect_ignore = ['test_mod.py']\n"),
        ("pytest.ini", "[pytest]\naddopts = -k 'not discount'\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-x'\n"),
    ],
)
def test_a_configuration_edit_beside_the_test_edits_still_drops_the_candidate(
    tmp_path: Path, path: str, content: str
) -> None:
    mined = _mined(tmp_path, extra=((path, content),))
    assert mined.drop is not None and mined.drop.reason == "fix_changes_check_config"
    assert mined.drop.detail == f"the fix edits {path}"


def test_a_fix_without_test_edits_keeps_the_recorded_tests_and_runs_the_check_before_and_after(sample_record) -> None:
    [mined] = mine_repair_candidates(sample_record("claude-code/python-pytest-fix.jsonl"), "k")
    candidate = mined.candidate
    assert candidate.test_paths == [] and "tests_from" not in mined.facts
    assert candidate.start_files == candidate.project_files and candidate.solution_files == candidate.fixed_files
    plan = FAMILY.calibration_plan(candidate, None, None)  # type: ignore[arg-type]
    assert [probe.name for probe in plan.probes] == [CHECK_PROBE, REFERENCE_PROBE]
    assert plan.probes[1].files == {
        f"{WORKSPACE}/{path}": text.encode() for path, text in candidate.fixed_files.items()
    }
    spec = repair_task_spec(candidate, source_trace="k", source_model=None, org="local")
    assert spec.tests_changed_by_fix == [] and FAMILY.calibrated_spec(candidate, spec, CalibrationVerdict()) is spec


def test_the_task_holds_the_final_tests_its_reference_the_code_and_says_where_the_tests_come_from(
    tmp_path: Path,
) -> None:
    candidate = _mined(tmp_path).candidate
    spec = repair_task_spec(candidate, source_trace="claude-code-final", source_model=None, org="local")
    assert spec.project_files[session.TESTS] == session.NEW_TESTS.encode()
    assert spec.project_files[session.MODULE] == session.OLD_MODULE.encode()
    assert spec.solution_files == {session.MODULE: session.NEW_MODULE.encode()}
    # The final tests return from the pristine image over whatever the submission holds.
    assert "tests" in spec.pristine_paths()
    task = write_task(spec, tmp_path / "tasks")
    text = (task.path / "task.toml").read_text()
    TaskConfig.model_validate_toml(text)
    metadata = tomllib.loads(text)["metadata"]
    assert (metadata["tests_from"], metadata["tests_changed_by_fix"]) == ("session_final", [session.TESTS])
    assert (task.path / "solution" / "files" / session.MODULE).read_text() == session.NEW_MODULE
    assert not (task.path / "solution" / "files" / "tests").exists()


def _run(probe: Probe, candidate: RepairCandidate, project: Path) -> ProbeResult:
    """The probe's check, run by the real pytest on the host over the task's start files
    (the probe's own files written in, as the container would have them)."""
    for path, text in candidate.start_files.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    for path, data in probe.files.items():
        (project / Path(path).relative_to(WORKSPACE)).write_bytes(data)
    argv = [sys.executable if word == "python" else word for word in candidate.check.argv]
    done = subprocess.run(
        [*argv, "-p", "no:cacheprovider"],
        check=False,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return ProbeResult(name=probe.name, exit_code=done.returncode, timed_out=False, output_tail=done.stdout, seconds=0)


def _calibrate(candidate: RepairCandidate, tmp_path: Path) -> dict[str, ProbeResult]:
    plan = FAMILY.calibration_plan(candidate, None, None)  # type: ignore[arg-type]
    return {probe.name: _run(probe, candidate, tmp_path / probe.name) for probe in plan.probes}


def test_calibration_tracks_the_tests_that_fail_on_the_old_code_with_the_final_tests(tmp_path: Path) -> None:
    candidate = _mined(tmp_path).candidate
    plan = FAMILY.calibration_plan(candidate, None, None)  # type: ignore[arg-type]
    assert [probe.name for probe in plan.probes] == [CHECK_PROBE, REFERENCE_PROBE]
    assert plan.probes[1].files == {f"{WORKSPACE}/{session.MODULE}": session.NEW_MODULE.encode()}
    verdict = FAMILY.judge_calibration(candidate, _calibrate(candidate, tmp_path))
    assert verdict.drop is None
    # test_discount_halves is new and fails on the old code: evidence. test_total was
    # recorded failing but its corrected version passes on the old code, and the new
    # test_total_of_nothing passes there too: neither is tracked.
    assert verdict.facts["tracked_failing_ids"] == session.TRACKED
    assert verdict.facts["untracked_recorded_failures"] == session.UNTRACKED
    spec = repair_task_spec(candidate, source_trace="k", source_model=None, org="local")
    calibrated = FAMILY.calibrated_spec(candidate, spec, verdict)
    assert calibrated.tests is not None
    assert calibrated.tests.tracked_test_ids == session.TRACKED
    assert calibrated.project_files == spec.project_files
    # The instruction shows the check as it fails in the image the agent gets.
    assert "FAILED tests/test_mod.py::test_discount_halves" in calibrated.instruction
    assert "test_total" not in calibrated.instruction
    assert "test_total" in spec.instruction


def test_a_reference_that_does_not_pass_with_the_final_tests_is_dropped(tmp_path: Path) -> None:
    candidate = _mined(tmp_path).candidate
    # A reference that leaves the code as it was: the final tests still fail.
    broken = candidate.model_copy(update={"fixed_files": {**candidate.fixed_files, session.MODULE: session.OLD_MODULE}})
    verdict = FAMILY.judge_calibration(broken, _calibrate(broken, tmp_path))
    assert verdict.drop is not None and verdict.drop.reason == "check_fails_differently"
    assert "does not pass" in verdict.drop.detail and "test_discount_halves" in verdict.drop.detail


def test_a_failure_neither_recorded_nor_in_a_changed_test_file_is_dropped(tmp_path: Path) -> None:
    candidate = _mined(tmp_path).candidate
    # An untouched test file that fails on the old code, though the session never saw it fail.
    extra = "from pkg.mod import discount\n\n\ndef test_quarter_off():\n    assert discount(8, 25) == 6\n"
    stranger = candidate.model_copy(update={"project_files": {**candidate.project_files, "tests/test_extra.py": extra}})
    verdict = FAMILY.judge_calibration(stranger, _calibrate(stranger, tmp_path))
    assert verdict.drop is not None and verdict.drop.reason == "check_fails_differently"
    assert verdict.drop.detail.endswith("tests/test_extra.py::test_quarter_off")


def test_final_tests_that_pass_on_the_old_code_are_no_evidence(tmp_path: Path) -> None:
    candidate = _mined(tmp_path).candidate
    # Final tests that only corrected test_total: nothing fails on the old code.
    lenient = session.NEW_TESTS.replace(
        "    assert discount(200, 10) == 180\n", "    assert discount(200, 10) == 190\n"
    )
    lenient = lenient.replace("    assert discount(99, 50) == 49.5\n", "    assert discount(99, 50) == 49\n")
    weak = candidate.model_copy(update={"fixed_files": {**candidate.fixed_files, session.TESTS: lenient}})
    results = _calibrate(weak, tmp_path)
    verdict = FAMILY.judge_calibration(weak, results)
    assert verdict.drop is not None and verdict.drop.reason == "check_passes_before_fix"


def test_node_tests_are_located_in_the_final_test_files(sample_record) -> None:
    [mined] = mine_repair_candidates(sample_record("codex/node-npm-test-fix.jsonl"), "k")
    candidate = mined.candidate
    test_file = "test/wordfreq.test.js"
    # The fix renamed one recorded failing test and added one.
    final = (
        candidate.project_files[test_file].replace("test('countWords ignores case'", "test('countWords folds case'")
        + "\ntest('topWords keeps ties stable', () => {});\n"
    )
    with_tests = candidate.model_copy(
        update={"fixed_files": {**candidate.fixed_files, test_file: final}, "test_paths": [test_file]}
    )
    assert verifier_test_ids(with_tests, ["countWords folds case", "countWords ignores case"]) == [
        f"{test_file}::countWords folds case",
        None,
    ]
    # Before calibration the recorded failures the final tests still declare stand in.
    spec = repair_task_spec(with_tests, source_trace="k", source_model=None, org="local")
    assert spec.tests is not None
    assert (spec.tests.runner, spec.tests.tracked_test_ids) == (
        "node",
        [f"{test_file}::topWords orders by count, then alphabetically"],
    )
    assert spec.project_files[test_file] == final.encode()
    assert spec.solution_files.keys() == {"src/wordfreq.js"}
