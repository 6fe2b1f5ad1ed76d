"""The repair family's guards: check configuration, the mining window, the instruction text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from traj2env_assets.checks import CheckCommand, recognise_check
from traj2env_assets.families.repair.candidates import mine_repair_candidates
from traj2env_assets.families.repair.check_config import changed_tests, config_changes
from traj2env_assets.families.repair.instruction import check_output_text, repair_instruction
from traj2env_assets.stages.publish.atomic_publish import publish_task
from traj2env_assets_tests.families.conftest import record_for
from traj2env_assets_tests.formats.logs import (
    claude_line,
    tool_result,
    tool_use,
    write_jsonl,
)


def _recognised(command: str, snapshot: Mapping[str, str]) -> CheckCommand:
    check = recognise_check(command, snapshot)
    assert check is not None, command
    return check


PYTEST = _recognised("python -m pytest -q", {})
NPM_TEST = _recognised("npm test", {"package.json": json.dumps({"scripts": {"test": "node --test"}})})


def test_pyproject_test_sections_count_but_dependencies_do_not() -> None:
    before = {"pyproject.toml": '[project]\ndependencies = ["a"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'}
    deps = {"pyproject.toml": '[project]\ndependencies = ["a", "b"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'}
    cheat = {"pyproject.toml": '[project]\ndependencies = ["a"]\n[tool.pytest.ini_options]\naddopts = "-k not slow"\n'}
    assert config_changes(PYTEST, before, ["pyproject.toml"], deps) == []
    assert config_changes(PYTEST, before, ["pyproject.toml"], cheat) == ["pyproject.toml"]


def test_package_json_scripts_count_but_dependencies_do_not() -> None:
    before = {"package.json": json.dumps({"scripts": {"test": "node --test"}, "dependencies": {}})}
    deps = {"package.json": json.dumps({"scripts": {"test": "node --test"}, "dependencies": {"x": "1"}})}
    cheat = {"package.json": json.dumps({"scripts": {"test": "node --test || exit 0"}})}
    assert config_changes(NPM_TEST, before, ["package.json"], deps) == []
    assert config_changes(NPM_TEST, before, ["package.json"], cheat) == ["package.json"]


def test_config_files_are_flagged_and_test_files_are_tests() -> None:
    paths = [
        "src/app.py",
        "conftest.py",
        "tests/test_app.py",
        "tsconfig.json",
        "setup.cfg",
        "lib/x.test.js",
        "tests/conftest.py",
        "tests/data/case.json",
    ]
    assert config_changes(PYTEST, {}, paths, {}) == ["conftest.py", "tsconfig.json", "setup.cfg", "tests/conftest.py"]
    # Test support (data under tests/) is test material too; conftest.py stays configuration.
    assert changed_tests(PYTEST, "", paths) == [
        "tests/test_app.py",
        "lib/x.test.js",
        "tests/conftest.py",
        "tests/data/case.json",
    ]


def test_a_file_the_check_names_is_a_test_but_code_under_a_named_folder_is_code() -> None:
    check = _recognised("python -m pytest -q checks/verify.py src", {})
    changed = ["pkg/checks/verify.py", "pkg/src/mod.py", "pkg/src/tests/test_mod.py"]
    assert changed_tests(check, "pkg", changed) == ["pkg/checks/verify.py", "pkg/src/tests/test_mod.py"]
    # A lint check's fix may edit test code like any code.
    assert changed_tests(_recognised("ruff check .", {}), "", ["tests/test_mod.py"]) == []


def _session(tmp_path: Path, between: list[dict]) -> Path:
    root = "/home/dev/p"
    lines = [
        claude_line("user", "u0", "make tests pass", ts="2026-03-01T10:00:00Z", cwd=root),
        claude_line(
            "assistant",
            "a1",
            [tool_use("w1", "Write", file_path=f"{root}/calc.py", content="def add(a, b):\n    return a - b\n")],
            ts="2026-03-01T10:00:01Z",
            cwd=root,
        ),
        claude_line(
            "user", "r1", [tool_result("w1", "File created successfully")], ts="2026-03-01T10:00:02Z", cwd=root
        ),
        claude_line(
            "assistant",
            "a2",
            [
                tool_use(
                    "w2",
                    "Write",
                    file_path=f"{root}/tests/test_calc.py",
                    content="from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
                )
            ],
            ts="2026-03-01T10:00:03Z",
            cwd=root,
        ),
        claude_line(
            "user", "r2", [tool_result("w2", "File created successfully")], ts="2026-03-01T10:00:04Z", cwd=root
        ),
        claude_line(
            "assistant",
            "a3",
            [tool_use("b1", "Bash", command="python -m pytest -q")],
            ts="2026-03-01T10:00:05Z",
            cwd=root,
        ),
        claude_line(
            "user",
            "r3",
            [
                tool_result(
                    "b1",
                    "Exit code 1\nF\nFAILED tests/test_calc.py::test_add - assert -1 == 5\n1 failed in 0.01s",
                    is_error=True,
                )
            ],
            ts="2026-03-01T10:00:06Z",
            cwd=root,
        ),
        *between,
        claude_line(
            "assistant",
            "a9",
            [tool_use("b9", "Bash", command="python -m pytest -q")],
            ts="2026-03-01T10:00:30Z",
            cwd=root,
        ),
        claude_line("user", "r9", [tool_result("b9", ".\n1 passed in 0.01s")], ts="2026-03-01T10:00:31Z", cwd=root),
    ]
    return write_jsonl(tmp_path / "s.jsonl", lines)


def _edit(uuid: str, old: str, new: str) -> list[dict]:
    return [
        claude_line(
            "assistant",
            f"edit-{uuid}",
            [tool_use(f"e{uuid}", "Edit", file_path="/home/dev/p/calc.py", old_string=old, new_string=new)],
            ts="2026-03-01T10:00:10Z",
            cwd="/home/dev/p",
        ),
        claude_line(
            "user",
            f"edit-result-{uuid}",
            [tool_result(f"e{uuid}", "The file has been updated successfully.")],
            ts="2026-03-01T10:00:11Z",
            cwd="/home/dev/p",
        ),
    ]


def _bash(uuid: str, command: str, output: str = "") -> list[dict]:
    return [
        claude_line(
            "assistant",
            f"bash-{uuid}",
            [tool_use(f"b{uuid}", "Bash", command=command)],
            ts="2026-03-01T10:00:20Z",
            cwd="/home/dev/p",
        ),
        claude_line(
            "user",
            f"bash-result-{uuid}",
            [tool_result(f"b{uuid}", output)],
            ts="2026-03-01T10:00:21Z",
            cwd="/home/dev/p",
        ),
    ]


def test_edits_and_reads_between_runs_make_a_candidate(tmp_path: Path) -> None:
    record = record_for(_session(tmp_path, [*_bash("x", "cat calc.py"), *_edit("1", "a - b", "a + b")]), tmp_path / "r")
    [mined] = mine_repair_candidates(record, "k")
    assert mined.drop is None
    assert mined.candidate.fixed_files == {"calc.py": "def add(a, b):\n    return a + b\n"}


def test_an_install_between_runs_ends_the_window(tmp_path: Path) -> None:
    between = [*_edit("1", "a - b", "a + b"), *_bash("x", "pip install numpy")]
    assert mine_repair_candidates(record_for(_session(tmp_path, between), tmp_path / "r"), "k") == []


def test_a_pass_without_changes_is_dropped(tmp_path: Path) -> None:
    [mined] = mine_repair_candidates(record_for(_session(tmp_path, []), tmp_path / "r"), "k")
    assert mined.drop is not None
    assert mined.drop.reason == "no_file_changes"


def test_a_file_changed_by_sed_is_lost_and_the_fix_is_dropped(tmp_path: Path) -> None:
    between = _bash("x", "sed -i 's/a - b/a + b/' calc.py")
    [mined] = mine_repair_candidates(record_for(_session(tmp_path, between), tmp_path / "r"), "k")
    assert mined.drop is not None
    assert mined.drop.reason == "fix_files_lost"
    assert "calc.py" in mined.drop.detail


def test_instruction_shows_the_failure_without_the_fix_or_tool_wrapper(tmp_path: Path) -> None:
    record = record_for(_session(tmp_path, _edit("1", "a - b", "a + b")), tmp_path / "r")
    [mined] = mine_repair_candidates(record, "k")
    text = repair_instruction(mined.candidate)
    assert "`python -m pytest -q`" in text
    assert "FAILED tests/test_calc.py::test_add" in text
    assert "a + b" not in text
    assert "Exit code 1" not in text


def test_codex_sandbox_wrapper_is_not_part_of_the_shown_output() -> None:
    wrapped = (
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 2, stdout: \n"
        "E   json.decoder.JSONDecodeError: Invalid \\escape\n5 errors in 0.39s\n, stderr: "
    )
    assert check_output_text(wrapped) == "E   json.decoder.JSONDecodeError: Invalid \\escape\n5 errors in 0.39s"
    with_stderr = wrapped.replace(", stderr: ", ", stderr: warning: x\n")
    assert check_output_text(with_stderr).endswith("in 0.39s\nwarning: x\n")


def test_publish_preserves_an_existing_task(tmp_path: Path) -> None:
    staged = tmp_path / "staged"
    (staged / "tests").mkdir(parents=True)
    (staged / "task.toml").write_text("new")
    destination = tmp_path / "dataset"
    first = publish_task(staged, destination, "t-1")
    assert first.status == "published" and (destination / "t-1" / "task.toml").read_text() == "new"
    (staged / "task.toml").write_text("changed")
    second = publish_task(staged, destination, "t-1")
    assert second.status == "duplicate"
    assert (destination / "t-1" / "task.toml").read_text() == "new"
    assert sorted(p.name for p in destination.iterdir()) == ["t-1"]
