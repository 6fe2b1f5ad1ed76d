"""A check run counts as passed or failed only on positive evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traj2env_assets.checks import parse_check_result, recognise_check
from traj2env_assets.families.contract import ProbeResult
from traj2env_assets.families.repair.candidates import (
    RepairCandidate,
    mine_repair_candidates,
)
from traj2env_assets.families.repair.family import (
    CHECK_PROBE,
    REFERENCE_PROBE,
    RepairFamily,
)
from traj2env_assets_tests.families.conftest import record_for
from traj2env_assets_tests.formats.logs import claude_line, tool_result, tool_use

CWD = "/home/dev/calc"
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FAILURE = (
    "Exit code 1\n============ FAILURES ============\nFAILED test_calc.py::test_add - assert -1 == 5\n1 failed in 0.01s"
)


def _session_lines() -> list[dict]:
    ts = "2026-03-01T10:00:{:02d}Z"
    lines = [claude_line("user", "u0", "fix add", ts=ts.format(0))]
    calls = [
        ("w1", "Write", {"file_path": f"{CWD}/calc.py", "content": BUGGY}, "File created", False),
        ("w2", "Write", {"file_path": f"{CWD}/test_calc.py", "content": TEST}, "File created", False),
        ("b1", "Bash", {"command": "python -m pytest -q"}, FAILURE, True),
        ("e1", "Edit", {"file_path": f"{CWD}/calc.py", "old_string": "a - b", "new_string": "a + b"}, "ok", False),
        ("b2", "Bash", {"command": "python -m pytest -q"}, "1 passed in 0.01s", False),
    ]
    for index, (call_id, name, arguments, output, is_error) in enumerate(calls, start=1):
        lines.append(
            claude_line("assistant", f"a{index}", [tool_use(call_id, name, **arguments)], ts=ts.format(2 * index))
        )
        lines.append(
            claude_line("user", f"r{index}", [tool_result(call_id, output, is_error)], ts=ts.format(2 * index + 1))
        )
    return lines


def _write(path: Path, lines: list[dict], cut_last: bool) -> Path:
    text = "".join(json.dumps(line) + "\n" for line in lines)
    if cut_last:
        last = json.dumps(lines[-1])
        text = text[: -len(last) - 1] + last[: len(last) // 2]
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("cut_last", "expected"), [(False, 1), (True, 0)])
def test_a_rerun_whose_result_was_cut_off_is_not_a_pass(tmp_path: Path, cut_last: bool, expected: int) -> None:
    log = _write(tmp_path / "session.jsonl", _session_lines(), cut_last)
    record = record_for(log, tmp_path / "record")
    rerun = list(record.shell_commands())[-1]
    assert rerun.command == "python -m pytest -q"
    assert len(mine_repair_candidates(record, "cc-cut")) == expected


def test_an_unknown_run_breaks_the_pair(tmp_path: Path) -> None:
    lines = _session_lines()
    # A re-run between the failure and the pass whose result was never recorded.
    lines[7:7] = [
        claude_line(
            "assistant", "ax", [tool_use("bx", "Bash", command="python -m pytest -q")], ts="2026-03-01T10:00:07Z"
        )
    ]
    record = record_for(_write(tmp_path / "session.jsonl", lines, cut_last=False), tmp_path / "record")
    assert [c.command for c in list(record.shell_commands())].count("python -m pytest -q") == 3
    assert mine_repair_candidates(record, "cc-gap") == []


@pytest.mark.parametrize(
    ("output", "exit_code", "outcome"),
    [
        ("", None, "unknown"),
        ("collecting ...", None, "unknown"),
        ("3 passed in 0.02s", None, "passed"),
        ("1 failed, 2 passed in 0.02s", None, "failed"),
        ("", 0, "passed"),
        ("", 1, "failed"),
        ("tail of output\nCommand exited with code 2", None, "failed"),
    ],
)
def test_outcome_needs_an_exit_code_or_a_runner_summary(output: str, exit_code: int | None, outcome: str) -> None:
    check = recognise_check("python -m pytest -q", {})
    assert check is not None
    assert parse_check_result(check, output, exit_code).outcome == outcome


@pytest.mark.parametrize(
    ("command", "output", "outcome"),
    [
        (
            "python -m unittest",
            "...\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n",
            "passed",
        ),
        ("node --test", "\u2139 tests 4\n\u2139 pass 4\n\u2139 fail 0\n", "passed"),
        ("node --test", "\u2139 tests 4\n\u2139 pass 3\n\u2139 fail 1\n", "failed"),
        ("ruff check .", "All checks passed!\n", "passed"),
        ("mypy src", "Success: no issues found in 4 source files\n", "passed"),
        ("npx tsc --noEmit", "", "unknown"),
    ],
)
def test_runner_summaries_without_an_exit_code(command: str, output: str, outcome: str) -> None:
    check = recognise_check(command + " 2>&1 | tail -5", {})
    assert check is not None and check.piped
    assert parse_check_result(check, output, 0).outcome == outcome


@pytest.mark.parametrize(
    "never_ran",
    [
        "command timed out after 120000 milliseconds\n..F\nFAILED test_calc.py::test_add - assert -1 == 5",
        (
            "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1, stdout: F\n"
            "FAILED test_calc.py::test_add - PermissionError: [Errno 1] Operation not permitted\n1 failed in 0.01s, "
            "stderr: "
        ),
    ],
)
def test_a_run_that_never_ran_is_neither_the_failure_nor_the_pass(tmp_path: Path, never_ran: str) -> None:
    lines = _session_lines()
    # The failing run never ran to its end: it is no failure, so the later pass pairs with nothing.
    lines[6] = claude_line("user", "r3", [tool_result("b1", never_ran, False)], ts="2026-03-01T10:00:07Z")
    record = record_for(_write(tmp_path / "session.jsonl", lines, cut_last=False), tmp_path / "record")
    assert mine_repair_candidates(record, "cc-never-ran") == []


def _collection_error(raised: str) -> str:
    return (
        "_____________________ ERROR collecting test_calc.py ______________________\n"
        f"E   {raised}\nERROR test_calc.py - {raised}\n1 error in 0.05s\n"
    )


@pytest.mark.parametrize(
    ("in_image", "dropped"),
    [("NameError: name 'x' is not defined", False), ("FileNotFoundError: [Errno 2] No such file: 'data.json'", True)],
)
def test_a_file_that_failed_to_import_must_fail_the_same_way_in_the_image(in_image: str, dropped: bool) -> None:
    check = recognise_check("python -m pytest -q", {})
    assert check is not None
    candidate = RepairCandidate(
        task_id="t",
        partition_key="p",
        check=check,
        fail_command_index=1,
        pass_command_index=2,
        fail_exit_code=2,
        failing_ids=["test_calc.py"],
        failure_output=_collection_error("NameError: name 'x' is not defined"),
        fix_hash="abc",
    )
    run = ProbeResult(
        name=CHECK_PROBE, exit_code=2, timed_out=False, output_tail=_collection_error(in_image), seconds=1.0
    )
    on_reference = ProbeResult(
        name=REFERENCE_PROBE, exit_code=0, timed_out=False, output_tail="1 passed in 0.01s\n", seconds=1.0
    )
    verdict = RepairFamily().judge_calibration(candidate, {CHECK_PROBE: run, REFERENCE_PROBE: on_reference})
    assert (verdict.drop is not None) == dropped
    if dropped:
        assert verdict.drop is not None and verdict.drop.reason == "check_fails_differently"
        assert verdict.drop.detail == "test_calc.py: NameError recorded, FileNotFoundError in the image"


def _judged_with_reference(failing_ids: list[str], reference_output: str):
    """The calibration verdict of a candidate whose recorded failures all failed to import,
    when the image fails the same way and ``reference_output`` is the check with the fix."""
    check = recognise_check("python -m pytest -q", {})
    assert check is not None
    failure = (
        "".join(f"ERROR {path} - NameError: name 'x' is not defined\n" for path in failing_ids) + "2 errors in 0.05s\n"
    )
    candidate = RepairCandidate(
        task_id="t",
        partition_key="p",
        check=check,
        fail_command_index=1,
        pass_command_index=2,
        fail_exit_code=2,
        failing_ids=failing_ids,
        failure_output=failure,
        fix_hash="abc",
        project_files=dict.fromkeys(("test_calc.py", "test_data.py"), "from calc import add\n"),
    )
    before = ProbeResult(name=CHECK_PROBE, exit_code=2, timed_out=False, output_tail=failure, seconds=1.0)
    after = ProbeResult(name=REFERENCE_PROBE, exit_code=1, timed_out=False, output_tail=reference_output, seconds=1.0)
    return RepairFamily().judge_calibration(candidate, {CHECK_PROBE: before, REFERENCE_PROBE: after})


def test_tests_the_image_fails_with_the_reference_are_deselected_and_their_files_untracked() -> None:
    verdict = _judged_with_reference(
        ["test_calc.py", "test_data.py"],
        "FAILED test_data.py::test_profile - FileNotFoundError: data.json\n1 failed, 2 passed\n",
    )
    assert verdict.drop is None
    assert verdict.facts["tracked_failing_ids"] == ["test_calc.py"]
    assert verdict.facts["deselected_failing_on_reference"] == ["test_data.py::test_profile"]


@pytest.mark.parametrize(
    ("failing_ids", "reference_output"),
    [
        # Every recorded failing file holds a test the image fails: nothing is left to track.
        (["test_data.py"], "FAILED test_data.py::test_profile - FileNotFoundError: data.json\n1 failed\n"),
        # A file fails to import with the fix too: not a test that can be deselected.
        (["test_calc.py", "test_data.py"], "ERROR test_data.py - FileNotFoundError: data.json\n1 passed, 1 error\n"),
        # A recorded failure still fails with the fix.
        (
            ["test_calc.py::test_add", "test_data.py"],
            "FAILED test_calc.py::test_add - assert 1 == 2\n1 failed, 1 passed\n",
        ),
    ],
    ids=["nothing-left", "file-fails-to-import", "recorded-failure"],
)
def test_a_reference_the_image_fails_is_dropped_when_deselection_would_leave_no_sound_task(
    failing_ids: list[str], reference_output: str
) -> None:
    verdict = _judged_with_reference(failing_ids, reference_output)
    assert verdict.drop is not None and verdict.drop.reason == "check_fails_differently"
    assert verdict.drop.detail.startswith("with the fix's code the check does not pass in the image")


@pytest.mark.parametrize(
    ("also_fails", "dropped"), [("test_data.py::test_profile", False), ("test_data.py::test_other", True)]
)
def test_a_failure_before_the_fix_that_the_reference_fails_too_does_not_make_the_run_differ(
    also_fails: str, dropped: bool
) -> None:
    # Recorded: test_add fails. In the image test_profile fails too, before and after the fix
    # (a data file the replay never saw): it is ungraded, and the run fails as recorded. A
    # test failing before the fix only, and not recorded, still makes the run differ.
    check = recognise_check("python -m pytest -q", {})
    assert check is not None
    candidate = RepairCandidate(
        task_id="t",
        partition_key="p",
        check=check,
        fail_command_index=1,
        pass_command_index=2,
        fail_exit_code=1,
        failing_ids=["test_calc.py::test_add"],
        failure_output=FAILURE,
        fix_hash="abc",
        project_files=dict.fromkeys(("test_calc.py", "test_data.py"), "from calc import add\n"),
    )
    before = ProbeResult(
        name=CHECK_PROBE,
        exit_code=1,
        timed_out=False,
        seconds=1.0,
        output_tail=f"FAILED test_calc.py::test_add - assert -1 == 5\nFAILED {also_fails} - FileNotFoundError\n2 failed\n",
    )
    after = ProbeResult(
        name=REFERENCE_PROBE,
        exit_code=1,
        timed_out=False,
        seconds=1.0,
        output_tail="FAILED test_data.py::test_profile - FileNotFoundError: data.json\n1 failed, 1 passed\n",
    )
    verdict = RepairFamily().judge_calibration(candidate, {CHECK_PROBE: before, REFERENCE_PROBE: after})
    if dropped:
        assert verdict.drop is not None and verdict.drop.reason == "check_fails_differently"
        assert "in the image: test_calc.py::test_add, test_data.py::test_other" in verdict.drop.detail
        return
    assert verdict.drop is None, verdict.drop
    assert verdict.facts["tracked_failing_ids"] == ["test_calc.py::test_add"]
    assert verdict.facts["deselected_failing_on_reference"] == ["test_data.py::test_profile"]
