"""A Claude Code session of our own making whose fix changes a return value, a printed
banner and a log record: the till project of ``projects.py``. The check fails on the
three tests (``capsys`` checks the banner, ``caplog`` the record), the agent rewrites
``till.py`` and the check passes."""

from __future__ import annotations

from pathlib import Path

from traj2env_assets_tests.formats.logs import (
    claude_line,
    tool_result,
    tool_use,
    write_jsonl,
)
from traj2env_assets_tests.gate.projects import TILL_AFTER, TILL_BEFORE, TILL_TESTS

ROOT = "/home/dev/till"
CHECK = "python -m pytest -q"
MODULE = "till.py"
TESTS = "tests/test_till.py"
TRACKED = [
    f"{TESTS}::{name}" for name in ("test_total_adds_tax", "test_banner_is_printed", "test_out_of_stock_is_logged")
]
PRINTED = TRACKED[1:]
FAILING_OUTPUT = (
    "Exit code 1\n"
    "FFF                                                                      [100%]\n"
    "=================================== FAILURES ===================================\n"
    "_____________________________ test_total_adds_tax ______________________________\n"
    "\n"
    "    def test_total_adds_tax():\n"
    ">       assert total([10, 20], 10) == 33.0\n"
    "E       assert 40 == 33.0\n"
    "\n"
    "tests/test_till.py:6: AssertionError\n"
    "____________________________ test_banner_is_printed ____________________________\n"
    "\n"
    "tests/test_till.py:11: AssertionError\n"
    "_________________________ test_out_of_stock_is_logged __________________________\n"
    "\n"
    "tests/test_till.py:16: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_till.py::test_total_adds_tax - assert 40 == 33.0\n"
    "FAILED tests/test_till.py::test_banner_is_printed - AssertionError: assert 'shop: 3 items\\n' == '== SHOP: 3 items ==\\n'\n"
    "FAILED tests/test_till.py::test_out_of_stock_is_logged - AssertionError: assert [] == ['fig is out of stock']\n"
    "3 failed in 0.04s"
)
PASSING_OUTPUT = "...                                                                      [100%]\n3 passed in 0.02s"


def write_printing_session(path: Path, session_id: str = "sess-till-printing") -> Path:
    """The session as a Claude Code JSONL log at ``path``."""
    steps: list[tuple[str, dict, str, bool]] = [
        ("Write", {"file_path": f"{ROOT}/{MODULE}", "content": TILL_BEFORE}, "File created successfully", False),
        ("Write", {"file_path": f"{ROOT}/{TESTS}", "content": TILL_TESTS}, "File created successfully", False),
        ("Bash", {"command": CHECK}, FAILING_OUTPUT, True),
        (
            "Write",
            {"file_path": f"{ROOT}/{MODULE}", "content": TILL_AFTER},
            "The file has been updated successfully.",
            False,
        ),
        ("Bash", {"command": CHECK}, PASSING_OUTPUT, False),
    ]
    lines = [
        claude_line(
            "user",
            "u0",
            "Fix the till: tax is a percent, the banner is framed and upper-cased, and an item out of stock is logged.",
            ts="2026-03-04T09:00:00Z",
            cwd=ROOT,
            sessionId=session_id,
        ),
    ]
    for number, (tool, arguments, result, is_error) in enumerate(steps, start=1):
        call = f"call{number}"
        lines.append(
            claude_line(
                "assistant",
                f"a{number}",
                [tool_use(call, tool, **arguments)],
                ts=f"2026-03-04T09:00:{2 * number:02d}Z",
                cwd=ROOT,
                sessionId=session_id,
            )
        )
        lines.append(
            claude_line(
                "user",
                f"r{number}",
                [tool_result(call, result, is_error=is_error)],
                ts=f"2026-03-04T09:00:{2 * number + 1:02d}Z",
                cwd=ROOT,
                sessionId=session_id,
            )
        )
    lines.append(
        claude_line(
            "assistant",
            "done",
            [{"type": "text", "text": "The till is fixed; 3 tests pass."}],
            ts="2026-03-04T09:01:00Z",
            cwd=ROOT,
            sessionId=session_id,
        )
    )
    return write_jsonl(path, lines)
