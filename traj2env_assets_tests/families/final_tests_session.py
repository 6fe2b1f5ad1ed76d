"""A Claude Code session of our own making whose fix edits the code AND the tests.

The project ``shop`` has ``pkg/mod.py`` (``discount`` subtracts the percent instead of
taking it off) and ``tests/test_mod.py``. ``python -m pytest -q`` fails on
``test_total`` (a wrong expected value: the test is wrong, the code right) and
``test_discount`` (the code is wrong). The agent then fixes ``discount``, corrects the
expected value of ``test_total``, adds ``test_discount_halves`` (fails on the old code)
and ``test_total_of_nothing`` (passes on the old code too), and the check passes.

As a task: the tests are the final ``tests/test_mod.py``, the reference is the new
``pkg/mod.py`` alone, and the tracked tests are the two that fail on the old code with
the final tests: ``test_discount`` and ``test_discount_halves``.
"""

from __future__ import annotations

from pathlib import Path

from traj2env_assets_tests.formats.logs import (
    claude_line,
    tool_result,
    tool_use,
    write_jsonl,
)

ROOT = "/home/dev/shop"
CHECK = "python -m pytest -q"
MODULE = "pkg/mod.py"
TESTS = "tests/test_mod.py"
OLD_MODULE = (
    "def total(prices):\n    return sum(prices)\n\n\ndef discount(price, percent):\n    return price - percent\n"
)
NEW_MODULE = OLD_MODULE.replace("    return price - percent\n", "    return price * (100 - percent) / 100\n")
OLD_TESTS = (
    "from pkg.mod import discount, total\n"
    "\n\n"
    "def test_total():\n"
    "    assert total([1, 2, 3]) == 7\n"
    "\n\n"
    "def test_discount():\n"
    "    assert discount(200, 10) == 180\n"
    "\n\n"
    "def test_no_discount():\n"
    "    assert discount(50, 0) == 50\n"
)
NEW_TESTS = OLD_TESTS.replace("== 7\n", "== 6\n") + (
    "\n\n"
    "def test_discount_halves():\n"
    "    assert discount(99, 50) == 49.5\n"
    "\n\n"
    "def test_total_of_nothing():\n"
    "    assert total([]) == 0\n"
)
FAILING_OUTPUT = (
    "Exit code 1\n"
    "FF.                                                                      [100%]\n"
    "=================================== FAILURES ===================================\n"
    "__________________________________ test_total __________________________________\n"
    "\n"
    "    def test_total():\n"
    ">       assert total([1, 2, 3]) == 7\n"
    "E       assert 6 == 7\n"
    "E        +  where 6 = total([1, 2, 3])\n"
    "\n"
    "tests/test_mod.py:5: AssertionError\n"
    "________________________________ test_discount _________________________________\n"
    "\n"
    "    def test_discount():\n"
    ">       assert discount(200, 10) == 180\n"
    "E       assert 190 == 180\n"
    "E        +  where 190 = discount(200, 10)\n"
    "\n"
    "tests/test_mod.py:9: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_mod.py::test_total - assert 6 == 7\n"
    "FAILED tests/test_mod.py::test_discount - assert 190 == 180\n"
    "2 failed, 1 passed in 0.03s"
)
PASSING_OUTPUT = ".....                                                                    [100%]\n5 passed in 0.02s"
# What the task tracks, and the recorded failure it does not (the final test passes on the old code).
TRACKED = ["tests/test_mod.py::test_discount", "tests/test_mod.py::test_discount_halves"]
UNTRACKED = ["tests/test_mod.py::test_total"]


def write_final_tests_session(path: Path, session_id: str = "sess-final-tests") -> Path:
    """The session as a Claude Code JSONL log at ``path``."""
    steps: list[tuple[str, dict, str, bool]] = [
        ("Write", {"file_path": f"{ROOT}/pkg/__init__.py", "content": ""}, "File created successfully", False),
        ("Write", {"file_path": f"{ROOT}/{MODULE}", "content": OLD_MODULE}, "File created successfully", False),
        ("Write", {"file_path": f"{ROOT}/{TESTS}", "content": OLD_TESTS}, "File created successfully", False),
        ("Bash", {"command": CHECK}, FAILING_OUTPUT, True),
        (
            "Edit",
            {
                "file_path": f"{ROOT}/{MODULE}",
                "old_string": "    return price - percent\n",
                "new_string": "    return price * (100 - percent) / 100\n",
            },
            "The file has been updated successfully.",
            False,
        ),
        (
            "Write",
            {"file_path": f"{ROOT}/{TESTS}", "content": NEW_TESTS},
            "The file has been updated successfully.",
            False,
        ),
        ("Bash", {"command": CHECK}, PASSING_OUTPUT, False),
    ]
    lines = [
        claude_line(
            "user",
            "u0",
            "Write the shop module with total() and discount() and make its tests pass.",
            ts="2026-03-02T09:00:00Z",
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
                ts=f"2026-03-02T09:00:{2 * number:02d}Z",
                cwd=ROOT,
                sessionId=session_id,
            )
        )
        lines.append(
            claude_line(
                "user",
                f"r{number}",
                [tool_result(call, result, is_error=is_error)],
                ts=f"2026-03-02T09:00:{2 * number + 1:02d}Z",
                cwd=ROOT,
                sessionId=session_id,
            )
        )
    lines.append(
        claude_line(
            "assistant",
            "done",
            [{"type": "text", "text": "discount() is fixed; 5 tests pass."}],
            ts="2026-03-02T09:01:00Z",
            cwd=ROOT,
            sessionId=session_id,
        )
    )
    return write_jsonl(path, lines)
